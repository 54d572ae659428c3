"""Root fixtures: the fake providers, a real Celery worker, a live ASGI server."""

pytest_plugins = ["arena.testing.fixtures", "arena.testing.live", "arena.testing.browser"]
