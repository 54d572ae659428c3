"""Signals of voice-agent battles. ``agent_vote_recorded`` (kwarg ``vote``) is sent after
the vote commits; the agent boards listen to it."""

from django.dispatch import Signal

agent_vote_recorded = Signal()
