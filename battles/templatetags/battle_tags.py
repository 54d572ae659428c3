from django import template

from battles.models import VoteChoice
from battles.sharing import share_paths

register = template.Library()

# The order of the buttons on the page (seed 000).
VOTE_ORDER = [VoteChoice.LEFT_BETTER, VoteChoice.TIE, VoteChoice.BOTH_BAD, VoteChoice.RIGHT_BETTER]


@register.filter
def get_item(mapping, key):
    return mapping.get(key) if mapping else None


@register.simple_tag
def vote_choices():
    """(value, label, short label) per vote, in the order of the keys 1-4; a phone shows the
    short one, so the four fit one row."""
    return [(choice.value, choice.label, SHORT_LABELS[choice.value]) for choice in VOTE_ORDER]


@register.simple_tag(takes_context=True)
def share_links(context, share) -> dict[str, str]:
    """The share's page and card as absolute addresses (what a link preview needs)."""
    request = context["request"]
    return {name: request.build_absolute_uri(path) for name, path in share_paths(share).items()}


SHORT_LABELS = {"left_better": "Left", "tie": "Tie", "both_bad": "Both bad",
                "right_better": "Right"}
