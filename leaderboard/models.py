"""Rating runs, the snapshot each run writes per board, and the online Elo table.

Pages and the API read the latest :class:`BoardSnapshot` of a board and its
:class:`SnapshotEntry` rows; they never fit anything on request. Subjects are stored by
key (an AI model's slug for the text board) with their display data copied in, because a
board may rate things that are not AI models.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from arena.models import CreatedAtModel, UpdatedAtModel


class RunTrigger(models.TextChoices):
    SCHEDULE = "schedule", "Hourly schedule"
    VOTES = "votes", "New votes (debounced)"
    ADMIN = "admin", "Admin"
    API = "api", "API"
    COMMAND = "command", "Management command"


class RunStatus(models.TextChoices):
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class RatingRun(models.Model):
    """One rating run over one or more boards (seed 001's ``worker_status``)."""

    boards = models.JSONField(default=list)
    trigger = models.CharField(max_length=20, choices=RunTrigger.choices)
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.RUNNING)
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    outcomes_processed = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    # The boards this run could not rate (each keeps its previous snapshot); the others
    # were rated.
    failed_boards = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=RunStatus.values), name="ratingrun_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(trigger__in=RunTrigger.values), name="ratingrun_trigger_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"Run {self.pk} ({self.status})"


class BoardSnapshot(CreatedAtModel):
    """What one run computed for one board; the newest per board is what pages show."""

    board = models.CharField(max_length=50)
    run = models.ForeignKey(
        RatingRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="snapshots"
    )
    method = models.CharField(max_length=10)  # bt, elo, glicko2
    ci_method = models.CharField(max_length=10)  # sandwich, bootstrap, rd, none
    bootstrap_rounds = models.PositiveIntegerField(default=0)
    min_votes = models.PositiveIntegerField()
    outcomes = models.PositiveBigIntegerField(help_text="Counted outcomes that were rated.")
    models_total = models.PositiveIntegerField(default=0)
    models_rated = models.PositiveIntegerField(default=0, help_text="With at least min_votes.")
    battles = models.PositiveBigIntegerField(null=True, blank=True)
    votes_total = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="All votes of the mode, counted or not."
    )
    fit_ms = models.PositiveIntegerField(default=0)
    # {"subjects": [...], "pairs": [[i, j, wins_i, wins_j, ties, both_bad], ...]}: the
    # pair statistics among the models the plots show (never the whole matrix).
    plot_data = models.JSONField(default=dict)
    # Style control: [[element, value, lower, upper], ...] (log-odds per standard deviation of
    # the style difference); null when the board has no styled votes.
    style_coefficients = models.JSONField(null=True, blank=True)
    # A category board's snapshot names its category ("" is the whole board); the whole
    # board's snapshot keeps the counted votes of every category, eligible or not.
    category = models.CharField(max_length=40, blank=True, default="")
    category_votes = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["board", "category", "-created_at"],
                                name="snapshot_board_category_latest")]

    def __str__(self) -> str:
        return f"{self.board} @ {self.created_at:%Y-%m-%d %H:%M:%S}"


class SnapshotEntry(models.Model):
    snapshot = models.ForeignKey(BoardSnapshot, on_delete=models.CASCADE, related_name="entries")
    subject = models.CharField(max_length=100)
    name = models.CharField(max_length=200)
    organization = models.CharField(max_length=100, blank=True)
    license = models.CharField(max_length=100, blank=True)
    deprecated = models.BooleanField(default=False)
    provisional = models.BooleanField(default=False, help_text="Fewer votes than min_votes.")
    rating = models.FloatField()
    ci_lower = models.FloatField()
    ci_upper = models.FloatField()
    # FastChat's Rank (UB) among rated models; 0 for provisional ones.
    rank_ub = models.PositiveIntegerField(default=0)
    # The same among rated models that are not deprecated; 0 for deprecated ones.
    rank_ub_active = models.PositiveIntegerField(default=0)
    votes = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    ties = models.PositiveIntegerField(default=0)
    both_bad = models.PositiveIntegerField(default=0)
    win_rate = models.FloatField(default=0.0, help_text="Wins / votes (ties count as not won).")
    volatility = models.FloatField(null=True, blank=True,
                                   help_text="Glicko-2's σ (Glicko-2 boards; null elsewhere).")
    # The same with style control (boards with styled votes; null elsewhere).
    style_rating = models.FloatField(null=True, blank=True)
    style_ci_lower = models.FloatField(null=True, blank=True)
    style_ci_upper = models.FloatField(null=True, blank=True)
    style_rank_ub = models.PositiveIntegerField(default=0)
    style_rank_ub_active = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-rating"]
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "subject"], name="entry_subject_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.rating:.1f}"


class OnlineElo(UpdatedAtModel):
    """Elo per board and subject, updated as each counted outcome is committed (K = 32)."""

    board = models.CharField(max_length=50)
    subject = models.CharField(max_length=100)
    rating = models.FloatField(default=1500.0)
    votes = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["board", "-rating"]
        verbose_name = "online Elo rating"
        constraints = [
            models.UniqueConstraint(fields=["board", "subject"], name="onlineelo_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.board}/{self.subject}: {self.rating:.1f}"


class EloBoardState(models.Model):
    """Per board: the lock row of online Elo updates and what a replay already covered."""

    board = models.CharField(max_length=50, primary_key=True)
    watermark = models.DateTimeField(
        null=True, blank=True, help_text="Outcomes at or before this time are in the replay."
    )
    outcomes_applied = models.PositiveBigIntegerField(default=0)
    replayed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.board
