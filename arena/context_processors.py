from django.conf import settings

from arena.markdown import markdown_policy
from arena.modes import modes
from arena.selectors import prompt_char_limit


def navigation(request):
    path = request.path
    return {
        "nav_items": [
            {"key": m.key, "label": m.label, "url": m.url, "active": path.startswith(m.url)}
            for m in modes()
        ],
        # Every text box a person writes to counts against this (static/js/arena.js): what
        # the models a battle may draw can read.
        "max_prompt_chars": prompt_char_limit(),
        "max_question_chars": prompt_char_limit(readers=None),  # a panel asks every model
        "markdown_policy": markdown_policy(),
        # An answer a page has heard nothing of for this long gets a word (static/js).
        "quiet_notice_ms": int(settings.ARENA_QUIET_NOTICE_SECONDS * 1000),
        # The human check's widget (arena.contests.human_check): its key when it is on, so
        # the page loads Cloudflare's script; empty when off, and nothing is loaded.
        "human_check_site_key": (settings.ARENA_TURNSTILE_SITE_KEY
                                 if settings.ARENA_TURNSTILE_SECRET_KEY else ""),
    }
