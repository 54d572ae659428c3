from django import template
from django.utils.safestring import mark_safe

from arena.markdown import render_markdown
from battles.models import VoteChoice

register = template.Library()

# The order of the buttons on the page (seed 000).
VOTE_ORDER = [VoteChoice.LEFT_BETTER, VoteChoice.TIE, VoteChoice.BOTH_BAD, VoteChoice.RIGHT_BETTER]


@register.filter
def markdown(text: str) -> str:
    """Render untrusted model Markdown to sanitised HTML."""
    return mark_safe(render_markdown(text))  # noqa: S308 - nh3 has sanitised it


@register.filter
def get_item(mapping, key):
    return mapping.get(key) if mapping else None


@register.simple_tag
def vote_choices():
    return [(choice.value, choice.label) for choice in VOTE_ORDER]
