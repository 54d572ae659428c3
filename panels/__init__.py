"""Panel mode (seed 003): every model answers, every model judges, averaged rankings.

One code path for the page, the JSON API and ``manage.py panel``: :mod:`.services` writes and
moves the state machine, :mod:`.steps` and :mod:`.questions` are the LLM steps run by the
Celery tasks in :mod:`.tasks`, :mod:`.judging` and :mod:`.verdict` are pure.
"""
