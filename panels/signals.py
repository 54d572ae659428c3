"""Signals other apps listen to, so panel mode never imports the leaderboard."""

from django.dispatch import Signal

# Sent once per pairwise outcome after a panel's verdict is committed; keyword argument
# ``outcome`` (panels.models.PanelOutcome).
panel_outcome_recorded = Signal()
