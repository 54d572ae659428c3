"""Text battles: a battle holds up to six turns; each turn has one response per model."""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from arena.contests.voting import VoteChoice, Winner
from arena.models import AIModel, CountedVote, CreatedAtModel, UUIDModel
from arena.steps import Step
from battles.streams import announce_restart

MAX_MESSAGES = 6  # the first prompt and five follow-ups (seed 000)


class Position(models.TextChoices):
    LEFT = "left", "Left"
    RIGHT = "right", "Right"


class Slot(models.TextChoices):
    """Which of the battle's two models; model A's screen position is random."""

    A = "a", "Model A"
    B = "b", "Model B"


class Thread(UUIDModel, CreatedAtModel):
    """A *session* in seed 001's words: a sidebar thread of battles, each voted on its own.

    Named apart from the visitor's Django session (``session_key``), which owns it.
    """

    session_key = models.CharField(max_length=64)
    title = models.CharField(max_length=120, blank=True,
                             help_text="The first prompt of its first battle, unless named.")
    last_active_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-last_active_at"]
        verbose_name = "session"
        indexes = [models.Index(fields=["session_key", "-last_active_at"],
                                name="thread_owner_recent")]

    def __str__(self) -> str:
        return self.title or f"Session {self.id}"


def position_of(slot: str, model_a_position: str) -> str:
    """The screen position of a model slot, given where model A is shown."""
    if slot == Slot.A:
        return model_a_position
    return Position.RIGHT if model_a_position == Position.LEFT else Position.LEFT


class Battle(UUIDModel):
    session_key = models.CharField(max_length=64, db_index=True)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="battles")
    model_a = models.ForeignKey(AIModel, on_delete=models.PROTECT, related_name="+")
    model_b = models.ForeignKey(AIModel, on_delete=models.PROTECT, related_name="+")
    model_a_position = models.CharField(max_length=5, choices=Position.choices)
    title = models.CharField(max_length=120)
    is_demo = models.BooleanField(default=False, db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    last_active_at = models.DateTimeField(default=timezone.now, db_index=True)
    # Set once the first prompt is classified (arena.prompt_categories): its categories as
    # bits (CATEGORY_BITS; multi_turn once a follow-up comes), its language ("und" when
    # unsure) and how it was classified.
    categories = models.PositiveIntegerField(default=0)
    language = models.CharField(max_length=8, blank=True)
    classified_at = models.DateTimeField(null=True, blank=True)
    classification_note = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-last_active_at"]
        constraints = [
            models.CheckConstraint(condition=~Q(model_a=F("model_b")), name="battle_models_differ"),
            models.CheckConstraint(
                condition=Q(model_a_position__in=Position.values), name="battle_position_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"Battle {self.id}"

    def slot_at(self, position: str) -> str:
        """The model slot (a or b) shown at a screen position."""
        return Slot.A if position == self.model_a_position else Slot.B

    def position_of(self, slot: str) -> str:
        return position_of(slot, self.model_a_position)

    def model_in(self, slot: str) -> AIModel:
        return self.model_a if slot == Slot.A else self.model_b


class Turn(UUIDModel):
    """One prompt of the person and the two answers to it (seed 000's "message")."""

    battle = models.ForeignKey(Battle, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveSmallIntegerField()
    prompt = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    regenerations = models.PositiveSmallIntegerField(
        default=0, help_text="Times both answers were written again before the vote.")

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(fields=["battle", "index"], name="turn_index_unique"),
            models.CheckConstraint(
                condition=Q(index__gte=1) & Q(index__lte=MAX_MESSAGES), name="turn_index_range"
            ),
        ]

    def __str__(self) -> str:
        return f"Turn {self.index} of {self.battle_id}"


class Response(Step, UUIDModel):
    """One model's answer to one turn: a step of the platform (claimed, leased, saved once)."""

    task_name = "battles.tasks.run_response"

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="responses")
    slot = models.CharField(max_length=1, choices=Slot.choices)
    text = models.TextField(blank=True)
    ttft_ms = models.PositiveIntegerField(null=True, blank=True)
    cut_at_limit = models.BooleanField(
        default=False, help_text="The provider stopped it at the model's max_tokens.")
    stopped = models.BooleanField(
        default=False, help_text="The person stopped it; the text is what was written.")
    # Its Markdown styling (arena.markdown.markdown_style), for style control.
    md_headers = models.PositiveIntegerField(default=0)
    md_lists = models.PositiveIntegerField(default=0, help_text="List items.")
    md_bold = models.PositiveIntegerField(default=0)

    @staticmethod
    def style_fields(text: str) -> dict[str, int]:
        """The columns of the style of ``text``, for a save."""
        from arena.markdown import markdown_style  # noqa: PLC0415 - markdown-it: not at setup

        return {f"md_{name}": n for name, n in markdown_style(text).items()}

    class Meta:
        ordering = ["slot"]
        constraints = [
            models.UniqueConstraint(fields=["turn", "slot"], name="response_slot_unique"),
            models.CheckConstraint(condition=Q(slot__in=Slot.values), name="response_slot_valid"),
        ]

    def __str__(self) -> str:
        return f"Answer {self.slot} of turn {self.turn_id}"

    def on_requeued(self) -> None:
        announce_restart(self)


class SupersededAnswer(UUIDModel):
    """An answer replaced when both sides of its turn were regenerated before the vote.

    Kept apart from :class:`Response`, which holds only the answers shown: nothing that reads
    answers (pages, the API, the vote's style sums, exports) can meet a superseded one.
    """

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="superseded")
    slot = models.CharField(max_length=1, choices=Slot.choices)
    round = models.PositiveSmallIntegerField(
        help_text="The regeneration that replaced it: 1 for the first.")
    status = models.CharField(max_length=10)
    error = models.CharField(max_length=300, blank=True)
    text = models.TextField(blank=True)
    cut_at_limit = models.BooleanField(default=False)
    stopped = models.BooleanField(default=False)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    written_at = models.DateTimeField(help_text="When the answer was last saved.")
    superseded_at = models.DateTimeField(default=timezone.now)

    KEPT_FIELDS = ("slot", "status", "error", "text", "cut_at_limit", "stopped", "latency_ms",
                   "input_tokens", "output_tokens", "cost_usd")

    class Meta:
        ordering = ["turn", "round", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["turn", "round", "slot"],
                                    name="superseded_answer_unique"),
        ]

    def __str__(self) -> str:
        return f"Superseded answer {self.slot} of turn {self.turn_id} (round {self.round})"

    @classmethod
    def of(cls, response: Response, *, round: int) -> SupersededAnswer:  # noqa: A002
        """The row that keeps ``response`` once regeneration ``round`` replaces it."""
        return cls(turn_id=response.turn_id, round=round, written_at=response.updated_at,
                   **{name: getattr(response, name) for name in cls.KEPT_FIELDS})


class Share(UUIDModel, CreatedAtModel):
    """A voted battle's public link: a random token, not derived from the battle's id, so
    revoking it (deleting the row) ends the link; sharing again makes a new one."""

    battle = models.OneToOneField(Battle, on_delete=models.CASCADE, related_name="share")
    token = models.CharField(max_length=43, unique=True)

    def __str__(self) -> str:
        return f"Share of {self.battle_id}"


class Vote(UUIDModel, CountedVote):
    battle = models.OneToOneField(Battle, on_delete=models.CASCADE, related_name="vote")
    session_key = models.CharField(
        max_length=64, blank=True,
        help_text="The voter's session, as its battle holds it (the daily cap counts by it).")
    choice = models.CharField(max_length=20, choices=VoteChoice.choices)
    winner = models.CharField(max_length=10, choices=Winner.choices)
    score_a = models.FloatField()
    score_b = models.FloatField()
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    # What a rating run needs, copied from the battle when the vote is cast, so that a run
    # reads a million votes from this table alone: the pair, the battle's categories and
    # language (a classification that finishes after the vote updates them), and the style
    # of each side over the turns (answer tokens, Markdown headers, list items, bold spans;
    # a voted battle takes no more turns).
    model_a = models.ForeignKey(AIModel, on_delete=models.PROTECT, related_name="+")
    model_b = models.ForeignKey(AIModel, on_delete=models.PROTECT, related_name="+")
    categories = models.PositiveIntegerField(default=0)
    language = models.CharField(max_length=8, blank=True)
    # Cast before its battle was classified: the worker classifies such votes' battles in
    # batches (battles.categories) and then copies the categories here.
    categories_pending = models.BooleanField(default=False)
    tokens_a = models.PositiveIntegerField(default=0)
    tokens_b = models.PositiveIntegerField(default=0)
    headers_a = models.PositiveIntegerField(default=0)
    headers_b = models.PositiveIntegerField(default=0)
    lists_a = models.PositiveIntegerField(default=0)
    lists_b = models.PositiveIntegerField(default=0)
    bold_a = models.PositiveIntegerField(default=0)
    bold_b = models.PositiveIntegerField(default=0)

    STYLE_FIELDS = ("tokens_a", "tokens_b", "headers_a", "headers_b", "lists_a", "lists_b",
                    "bold_a", "bold_b")

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(choice__in=VoteChoice.values), name="vote_choice_valid"
            ),
            models.CheckConstraint(condition=Q(winner__in=Winner.values), name="vote_winner_valid"),
        ]
        indexes = [
            models.Index(fields=["created_at"], condition=Q(categories_pending=True),
                         name="vote_categories_pending"),
            # The daily cap's two lookups (arena.contests.counting): a visitor's counted votes
            # since a time, read in order up to the cap, whatever the day's other votes.
            models.Index(fields=["session_key", "created_at"],
                         condition=Q(counts_for_rating=True), name="vote_counted_by_session"),
            models.Index(fields=["voter", "created_at"],
                         condition=Q(counts_for_rating=True), name="vote_counted_by_voter"),
        ]

    def __str__(self) -> str:
        return f"{self.choice} on {self.battle_id}"

    @staticmethod
    def facts_of(battle: Battle) -> dict:
        """The battle's session, pair, categories and language, as a vote on it keeps them."""
        return {"session_key": battle.session_key,
                "model_a_id": battle.model_a_id, "model_b_id": battle.model_b_id,
                "categories": battle.categories, "language": battle.language}

    @staticmethod
    def style_sums(responses) -> dict[str, int]:
        """Each side's style summed over a battle's answers (:attr:`STYLE_FIELDS`)."""
        sums = dict.fromkeys(Vote.STYLE_FIELDS, 0)
        for r in responses:
            sums[f"tokens_{r.slot}"] += r.output_tokens or 0
            sums[f"headers_{r.slot}"] += r.md_headers
            sums[f"lists_{r.slot}"] += r.md_lists
            sums[f"bold_{r.slot}"] += r.md_bold
        return sums

