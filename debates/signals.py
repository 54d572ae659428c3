"""Signals of debate mode. ``debate_verdict_recorded`` (kwargs ``debate``, ``kind``: "ai" or
"crowd") is sent after commit whenever a debate's AI verdict or crowd majority is settled or
changes; the debate boards listen to it."""

from django.dispatch import Signal

debate_verdict_recorded = Signal()
