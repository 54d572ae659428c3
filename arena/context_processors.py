from django.conf import settings

from arena.markdown import markdown_policy
from arena.modes import modes


def navigation(request):
    path = request.path
    return {
        "nav_items": [
            {"key": m.key, "label": m.label, "url": m.url, "active": path.startswith(m.url)}
            for m in modes()
        ],
        # Every text box a person writes to counts against this (static/js/arena.js).
        "max_prompt_chars": settings.ARENA_PROMPT_MAX_CHARS,
        "markdown_policy": markdown_policy(),
        # An answer a page has heard nothing of for this long gets a word (static/js).
        "quiet_notice_ms": int(settings.ARENA_QUIET_NOTICE_SECONDS * 1000),
    }
