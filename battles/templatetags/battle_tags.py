from django import template

from battles.models import VoteChoice

register = template.Library()

# The order of the buttons on the page (seed 000).
VOTE_ORDER = [VoteChoice.LEFT_BETTER, VoteChoice.TIE, VoteChoice.BOTH_BAD, VoteChoice.RIGHT_BETTER]


@register.filter
def get_item(mapping, key):
    return mapping.get(key) if mapping else None


@register.simple_tag
def vote_choices():
    return [(choice.value, choice.label) for choice in VOTE_ORDER]
