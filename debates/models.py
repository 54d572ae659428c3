"""Debate mode (seed 004): two models argue a motion in persona, a fact-checker checks their
claims, a judge scores the debate twice with the order swapped, the crowd votes and wagers.

A debate is a persisted state machine on the platform's steps (:mod:`debates.steps`)::

    moderator(1) → turn(1, pro) → fact_check(1, pro) → turn(1, con) → fact_check(1, con)
      → moderator(2) → … → judge → completed

Each :class:`DebateStep` is one Celery task; the step commits its result and creates the next
step in one transaction, so a debate whose worker died resumes from its last committed step
and no turn is written twice (unique on debate, round and position).
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from arena.contests.voting import Winner
from arena.models import AIModel, CountedVote, CreatedAtModel, UpdatedAtModel, UUIDModel
from arena.steps import Step
from debates.streams import announce_debate

MIN_ROUNDS, MAX_ROUNDS = 1, 5
MIN_WORD_LIMIT, MAX_WORD_LIMIT = 50, 500
STARTING_POINTS = 1000


class Difficulty(models.TextChoices):
    EASY = "easy", "Easy"
    MEDIUM = "medium", "Medium"
    HARD = "hard", "Hard"


class Topic(UUIDModel, CreatedAtModel):
    """A motion. Seeded motions are public; a person's own motion is used for their debate
    only, and enters the public pool once staff approve it."""

    motion = models.TextField()
    category = models.CharField(max_length=50, db_index=True)
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices,
                                  default=Difficulty.MEDIUM)
    is_balanced = models.BooleanField(default=True)
    is_approved = models.BooleanField(
        default=True, help_text="In the public pool (a proposed motion waits for staff).")
    proposed_by = models.CharField(max_length=64, blank=True,
                                   help_text="Session that proposed it (empty: seeded).")
    times_used = models.PositiveIntegerField(default=0)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["category", "motion"]
        constraints = [models.CheckConstraint(condition=Q(difficulty__in=Difficulty.values),
                                              name="topic_difficulty_valid")]

    def __str__(self) -> str:
        return self.motion

    @property
    def is_public(self) -> bool:
        return self.is_approved and self.retired_at is None


class Evidence(CreatedAtModel):
    """A document of the local evidence store, searched by the fact-checker (full text)."""

    topic = models.ForeignKey(Topic, on_delete=models.SET_NULL, null=True, blank=True,
                              related_name="evidence")
    title = models.CharField(max_length=300)
    source = models.CharField(max_length=200, blank=True)
    url = models.URLField(max_length=500, blank=True, help_text="Shown, never fetched.")
    content = models.TextField()

    class Meta:
        verbose_name_plural = "evidence"
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title


class Persona(UUIDModel, CreatedAtModel):
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField()
    traits = models.JSONField(default=list)
    speaking_style = models.TextField()
    background = models.TextField(blank=True)
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Position(models.TextChoices):
    PRO = "pro", "Pro"
    CON = "con", "Con"


def other(position: str) -> str:
    return Position.CON if position == Position.PRO else Position.PRO


class DebateStatus(models.TextChoices):
    INITIALIZING = "initializing", "Starting"
    IN_PROGRESS = "in_progress", "In progress"
    PAUSED = "paused", "Paused"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


# A debate in one of these states takes no more steps.
ENDED = (DebateStatus.COMPLETED, DebateStatus.FAILED, DebateStatus.CANCELLED)


class DebateWinner(models.TextChoices):
    PRO = "pro", "Pro"
    CON = "con", "Con"
    TIE = "tie", "Tie"


class Handicap(models.TextChoices):
    """Calibration only (``manage.py debate_calibrate``): how one side is told to argue badly."""

    OFF_TOPIC = "off_topic", "Off topic"
    FALLACIOUS = "fallacious", "Fallacious"
    FALSE_CLAIMS = "false_claims", "Planted false claims"


class DebateOrigin(models.TextChoices):
    WEB = "web", "Web page"
    API = "api", "JSON API"
    CLI = "cli", "Command line"


class Debate(UUIDModel, UpdatedAtModel):
    """One debate. Side A (``model_a`` in ``persona_a``) argues ``model_a_position``."""

    session_key = models.CharField(max_length=64, blank=True, db_index=True)
    origin = models.CharField(max_length=5, choices=DebateOrigin.choices,
                              default=DebateOrigin.WEB)
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="debates")
    model_a = models.ForeignKey(AIModel, on_delete=models.PROTECT, related_name="+")
    model_b = models.ForeignKey(AIModel, on_delete=models.PROTECT, related_name="+")
    persona_a = models.ForeignKey(Persona, on_delete=models.PROTECT, related_name="+")
    persona_b = models.ForeignKey(Persona, on_delete=models.PROTECT, related_name="+")
    model_a_position = models.CharField(max_length=3, choices=Position.choices)
    status = models.CharField(max_length=12, choices=DebateStatus.choices,
                              default=DebateStatus.INITIALIZING, db_index=True)
    rounds = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(MIN_ROUNDS), MaxValueValidator(MAX_ROUNDS)])
    word_limit = models.PositiveSmallIntegerField(
        default=150,
        validators=[MinValueValidator(MIN_WORD_LIMIT), MaxValueValidator(MAX_WORD_LIMIT)])
    fact_checking = models.BooleanField(default=True)
    strict_mode = models.BooleanField(default=False)
    is_listed = models.BooleanField(default=True)
    chosen = models.BooleanField(
        default=False, help_text="Its creator chose a model or a persona, so knows who is who: "
                                 "the creator's own vote never counts.")
    judge_model = models.ForeignKey(AIModel, on_delete=models.PROTECT, null=True, blank=True,
                                    related_name="+", help_text="Primary judge.")
    ai_winner = models.CharField(max_length=3, choices=DebateWinner.choices, blank=True)
    ai_consensus = models.BooleanField(null=True, help_text="Both orders agreed.")
    tiebreaker_used = models.BooleanField(default=False)
    needs_review = models.BooleanField(
        default=False, help_text="requires_manual_review: no judge gave a verdict.")
    human_winner = models.CharField(max_length=3, choices=DebateWinner.choices, blank=True,
                                    help_text="The crowd's majority.")
    ai_outcome = models.CharField(max_length=8, choices=Winner.choices, blank=True,
                                  help_text="ai_winner as model_a / model_b / tie (boards).")
    crowd_outcome = models.CharField(max_length=8, choices=Winner.choices, blank=True)
    factuality = models.FloatField(null=True, blank=True, help_text="Share of claims checked "
                                   "that held (verified); None when none were checked.")
    tokens_a = models.PositiveIntegerField(default=0)
    tokens_b = models.PositiveIntegerField(default=0)
    cost_a = models.FloatField(default=0.0)
    cost_b = models.FloatField(default=0.0)
    tokens_judging = models.PositiveIntegerField(
        default=0, help_text="Fact-checking and judging, on neither side.")
    cost_judging = models.FloatField(default=0.0)
    handicapped = models.CharField(max_length=3, choices=Position.choices, blank=True,
                                   help_text="Calibration: the side told to argue badly (such "
                                             "debates are unlisted and on no board).")
    handicap = models.CharField(max_length=12, choices=Handicap.choices, blank=True)
    planted = models.JSONField(default=list, blank=True,
                               help_text="Calibration: false claims the weak side was given.")
    error = models.CharField(max_length=500, blank=True, help_text="Safe to show a person.")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=DebateStatus.values),
                                   name="debate_status_valid"),
            models.CheckConstraint(condition=Q(model_a_position__in=Position.values),
                                   name="debate_position_valid"),
            models.CheckConstraint(condition=~Q(persona_a=models.F("persona_b")),
                                   name="debate_personas_differ"),
        ]

    def __str__(self) -> str:
        return f"Debate {self.id}"

    @property
    def is_finished(self) -> bool:
        return self.status in ENDED

    @property
    def elapsed_ms(self) -> int:
        return round((timezone.now() - self.created_at).total_seconds() * 1000)

    @property
    def total_tokens(self) -> int:
        return self.tokens_a + self.tokens_b + self.tokens_judging

    @property
    def total_cost(self) -> float:
        return self.cost_a + self.cost_b + self.cost_judging

    def side_of(self, position: str) -> str:
        """"a" or "b": which side argues ``position``."""
        return "a" if position == self.model_a_position else "b"

    def model_of(self, position: str) -> AIModel:
        return self.model_a if self.side_of(position) == "a" else self.model_b

    def model_id_of(self, position: str) -> str:
        return self.model_a_id if self.side_of(position) == "a" else self.model_b_id

    def persona_of(self, position: str) -> Persona:
        return self.persona_a if self.side_of(position) == "a" else self.persona_b

    def outcome_of(self, winner: str) -> str:
        """A pro/con/tie result in contestant terms (model_a / model_b / tie)."""
        if winner == DebateWinner.TIE:
            return Winner.TIE
        return Winner.MODEL_A if self.side_of(winner) == "a" else Winner.MODEL_B


class StepKind(models.TextChoices):
    MODERATOR = "moderator", "Moderator"
    TURN = "turn", "Turn"
    FACT_CHECK = "fact_check", "Fact-check"
    JUDGE = "judge", "Judging"


class DebateStep(Step, UUIDModel, CreatedAtModel):
    """One step of a debate's state machine (a platform step: lease, heartbeat, sweep)."""

    task_name = "debates.tasks.run_debate_step"

    debate = models.ForeignKey(Debate, on_delete=models.CASCADE, related_name="steps")
    kind = models.CharField(max_length=10, choices=StepKind.choices)
    round = models.PositiveSmallIntegerField(default=0)
    position = models.CharField(max_length=3, choices=Position.choices, blank=True)
    revision = models.PositiveSmallIntegerField(
        default=0, help_text="1: a strict-mode rewrite of a turn, or its fact-check.")
    note = models.TextField(blank=True, help_text="The moderator's words; why no claims were "
                            "checked.")

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["debate", "kind", "round", "position", "revision"],
                                    name="debate_step_once"),
        ]

    def __str__(self) -> str:
        where = f" {self.round}" if self.round else ""
        return f"{self.get_kind_display()}{where} {self.position}".strip()

    def on_requeued(self) -> None:
        announce_debate(self.debate_id, step=str(self.pk), restarted=True)


class DebateTurn(UUIDModel, CreatedAtModel):
    """One speech, parsed from the debater's Reflect-Critique-Refine reply."""

    debate = models.ForeignKey(Debate, on_delete=models.CASCADE, related_name="turns")
    round = models.PositiveSmallIntegerField()
    position = models.CharField(max_length=3, choices=Position.choices)
    speaker = models.ForeignKey(AIModel, on_delete=models.PROTECT, related_name="+")
    reflection = models.TextField(blank=True)
    critique = models.TextField(blank=True)
    speech = models.TextField()
    raw = models.TextField(blank=True, help_text="The model's whole reply.")
    tags_missing = models.BooleanField(
        default=False, help_text="The reply lacked the <speech> tag: all of it is the speech.")
    cut_at_word_limit = models.BooleanField(default=False)
    names_model = models.CharField(max_length=100, blank=True,
                                   help_text="A model the debate names with this reply (the "
                                   "motion and every speech so far: an identity leak): the "
                                   "debate's crowd result does not count.")
    revised = models.BooleanField(default=False,
                                  help_text="Strict mode sent it back once for a false claim.")
    first_speech = models.TextField(blank=True, help_text="The version strict mode rejected.")
    revision_reason = models.TextField(blank=True)
    factuality = models.FloatField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["round", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["debate", "round", "position"],
                                    name="debate_turn_once"),
        ]

    def __str__(self) -> str:
        return f"Round {self.round}, {self.position}"

    @property
    def words(self) -> int:
        return len(self.speech.split())


class ClaimType(models.TextChoices):
    STATISTICAL = "statistical", "Statistical"
    HISTORICAL = "historical", "Historical"
    SCIENTIFIC = "scientific", "Scientific"
    DEFINITIONAL = "definitional", "Definitional"


class Verdict(models.TextChoices):
    VERIFIED = "verified", "Verified"
    FALSE = "false", "False"
    UNVERIFIABLE = "unverifiable", "Unverifiable"
    MISLEADING = "misleading", "Misleading"


class FactCheck(UUIDModel, CreatedAtModel):
    turn = models.ForeignKey(DebateTurn, on_delete=models.CASCADE, related_name="fact_checks")
    revision = models.PositiveSmallIntegerField(default=0,
                                                help_text="Which version of the turn.")
    claim = models.TextField()
    claim_type = models.CharField(max_length=12, choices=ClaimType.choices)
    claim_confidence = models.FloatField(default=0.5)
    verdict = models.CharField(max_length=12, choices=Verdict.choices)
    evidence = models.JSONField(default=list, help_text="[{title, url, content, score}]")
    confidence = models.FloatField(default=0.0)
    explanation = models.TextField(blank=True)
    backend = models.CharField(max_length=20, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"{self.verdict}: {self.claim[:60]}"


class JudgeOrder(models.TextChoices):
    PRO_FIRST = "pro_first", "Pro first"
    CON_FIRST = "con_first", "Con first"


class JudgeRole(models.TextChoices):
    PRIMARY = "primary", "Primary judge"
    FALLBACK = "fallback", "Fallback judge"
    TIEBREAKER = "tiebreaker", "Tiebreaker judge"


class JudgeEvaluation(UUIDModel, CreatedAtModel):
    debate = models.ForeignKey(Debate, on_delete=models.CASCADE, related_name="evaluations")
    judge = models.ForeignKey(AIModel, on_delete=models.PROTECT, related_name="+")
    role = models.CharField(max_length=10, choices=JudgeRole.choices,
                            default=JudgeRole.PRIMARY)
    order = models.CharField(max_length=10, choices=JudgeOrder.choices)
    winner = models.CharField(max_length=3, choices=DebateWinner.choices, blank=True)
    logical_coherence = models.PositiveSmallIntegerField(null=True, blank=True)
    rebuttal_strength = models.PositiveSmallIntegerField(null=True, blank=True)
    factuality = models.PositiveSmallIntegerField(null=True, blank=True)
    justification = models.TextField(blank=True)
    justification_reasks = models.PositiveSmallIntegerField(
        default=0, help_text="Times the judge was asked again for a justification of at "
                             "least 100 words (seed 004).")
    justification_short = models.BooleanField(
        default=False, help_text="Still under 100 words after the re-asks: kept, marked.")
    flagged_fallacies = models.JSONField(default=list)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True, help_text="Safe to show a person.")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [models.UniqueConstraint(fields=["debate", "role", "order"],
                                               name="debate_evaluation_once")]

    def __str__(self) -> str:
        return f"{self.get_role_display()}, {self.get_order_display().lower()}"

    @property
    def is_valid(self) -> bool:
        return bool(self.winner)

    @property
    def justification_words(self) -> int:
        return len(self.justification.split())


class CrowdChoice(models.TextChoices):
    PRO = "pro", "Pro"
    CON = "con", "Con"
    TIE = "tie", "Tie"
    REVEALED = "revealed", "Revealed the models (no vote)"


class CrowdVote(UUIDModel, CountedVote, CreatedAtModel):
    """A viewer's one vote on a debate (or the reveal that forfeits it), with a wager."""

    debate = models.ForeignKey(Debate, on_delete=models.CASCADE, related_name="votes")
    session_key = models.CharField(max_length=64)
    choice = models.CharField(max_length=8, choices=CrowdChoice.choices)
    wager = models.PositiveIntegerField(default=0)
    payout = models.PositiveIntegerField(null=True, blank=True,
                                         help_text="Points paid back when settled.")

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["debate", "session_key"],
                                    name="debate_vote_once_per_session"),
            models.CheckConstraint(condition=Q(choice__in=CrowdChoice.values),
                                   name="debate_vote_choice_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.choice} on {self.debate_id}"

    @property
    def counts(self) -> bool:
        return self.choice != CrowdChoice.REVEALED


class PointsAccount(UpdatedAtModel):
    """A session's debate points: 1,000 to start, moved only by wagers and payouts."""

    session_key = models.CharField(max_length=64, primary_key=True)
    points = models.PositiveIntegerField(default=STARTING_POINTS)

    def __str__(self) -> str:
        return f"{self.points} points"
