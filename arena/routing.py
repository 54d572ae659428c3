"""Websocket routes of every mode, gathered from the mode registry for asgi.py."""

from arena.modes import websocket_urlpatterns as _mode_routes

websocket_urlpatterns = _mode_routes()
