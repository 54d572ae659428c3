"""Signals other apps listen to, so battles never import the leaderboard."""

from django.dispatch import Signal

# Sent after a vote is committed; keyword argument ``vote`` (battles.models.Vote).
battle_vote_recorded = Signal()
