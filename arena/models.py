"""The platform's rows: the AI model registry (every model the arena can put in front of
people) and the visitor flags, and the abstract rows every mode's models build on: the key and
timestamps (:class:`UUIDModel`, :class:`CreatedAtModel`, :class:`UpdatedAtModel`) and what a
vote carries for the integrity rules (:class:`CountedVote`)."""

from __future__ import annotations

import uuid

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone

SLUG_VALIDATOR = RegexValidator(
    r"^[a-z0-9][a-z0-9._-]*$",
    "Use lowercase letters, digits, dots, dashes and underscores.",
)


class UUIDModel(models.Model):
    """Keyed by a random UUID made in Python: an address (a page's, the API's) cannot be
    guessed (an unlisted panel or debate is seen by its link) and tells nothing of how many
    rows there are, and a row has its key before it is saved."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)

    class Meta:
        abstract = True


class CreatedAtModel(models.Model):
    """When the row was made: a default rather than ``auto_now_add``, so that a migration, an
    import or a test can set the time. A model whose ``created_at`` is indexed, or set by
    ``auto_now_add``, declares its own."""

    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True


class UpdatedAtModel(models.Model):
    """When the row was last saved (``save()`` sets it; a queryset's ``update()`` does not)."""

    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class ProviderKind(models.TextChoices):
    OPENAI = "openai", "OpenAI-compatible"
    ANTHROPIC = "anthropic", "Anthropic"


class ModelStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    INACTIVE = "inactive", "Inactive"
    DEPRECATED = "deprecated", "Deprecated"


class AIModel(UpdatedAtModel):
    """One model behind an OpenAI-compatible or Anthropic endpoint.

    The API key is never stored: ``api_key_env`` names the environment variable
    that holds it, read at call time only.
    """

    slug = models.CharField(primary_key=True, max_length=100, validators=[SLUG_VALIDATOR])
    name = models.CharField(max_length=200)
    provider = models.CharField(max_length=100, help_text="Who serves it, e.g. OpenAI, Ollama.")
    provider_kind = models.CharField(max_length=20, choices=ProviderKind.choices)
    api_model = models.CharField(max_length=200, help_text="Model name sent to the API.")
    base_url = models.CharField(max_length=500, blank=True)
    api_key_env = models.CharField(max_length=100, blank=True)
    organization = models.CharField(max_length=100, blank=True)
    license = models.CharField(max_length=100, blank=True)
    status = models.CharField(
        max_length=20, choices=ModelStatus.choices, default=ModelStatus.ACTIVE
    )
    max_tokens = models.PositiveIntegerField(default=1000, validators=[MinValueValidator(1)])
    context_tokens = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)],
        help_text="Tokens the model reads at most: system prompt, conversation and answer "
                  "(empty: not checked before a call).",
    )
    system_prompt = models.TextField(default="You are a helpful assistant.")
    input_price_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    output_price_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    is_local = models.BooleanField(default=False)
    local_key = models.CharField(
        max_length=50, blank=True, help_text="Which embedded local model serves it."
    )
    aliases = models.JSONField(
        default=list, blank=True,
        help_text="Other names a conversation may use for the model (identity-leak filter).",
    )
    optional = models.BooleanField(
        default=False, help_text="Skipped quietly when its key or endpoint is missing."
    )
    key_prefix_len = models.PositiveSmallIntegerField(
        default=4, validators=[MaxValueValidator(8)],
        help_text="Characters of the key that the key check prints (seed 003's prefix_len).",
    )
    in_models_file = models.BooleanField(
        default=True, help_text="False once the models file no longer lists it."
    )
    # Costs (arena.costs): what it may spend a day, every mode together (None: the
    # setting's default, 0: no cap), and staff's approval where its price asks for one.
    daily_spend_usd = models.DecimalField(
        max_digits=10, decimal_places=2, null=True, blank=True,
        help_text="Spend a day over every mode; empty: ARENA_MODEL_DAILY_SPEND_USD, 0: none.")
    approved_at = models.DateTimeField(
        null=True, blank=True,
        help_text="Staff approved it for random draws (needed above ARENA_APPROVAL_PRICE).")
    # Another endpoint serving the same model (OpenRouter or any OpenAI-compatible one), used
    # when its own provider fails or is over budget (arena.llm.client).
    fallback_base_url = models.CharField(max_length=500, blank=True)
    fallback_api_model = models.CharField(max_length=200, blank=True)
    fallback_api_key_env = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "AI model"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(provider_kind__in=ProviderKind.values),
                name="aimodel_provider_kind_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=ModelStatus.values),
                name="aimodel_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class FlagStatus(models.TextChoices):
    FLAGGED = "flagged", "Flagged: votes do not count"
    CONFIRMED = "confirmed", "Confirmed by staff: votes do not count"
    CLEARED = "cleared", "Cleared by staff: votes count again"


class VisitorFlag(models.Model):
    """A visitor whose votes in one mode were far beyond chance (:mod:`arena.contests.integrity`).

    ``visitor`` is ``session:<key>`` or ``ip:<keyed hash>`` (the address itself is never
    stored). While the flag stands the visitor's votes are kept but do not count."""

    mode = models.CharField(max_length=20)
    visitor = models.CharField(max_length=80)
    reason = models.TextField()
    p_value = models.FloatField(null=True, blank=True)
    votes = models.PositiveIntegerField(default=0, help_text="Votes the test looked at.")
    status = models.CharField(max_length=10, choices=FlagStatus.choices,
                              default=FlagStatus.FLAGGED, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["mode", "visitor"],
                                               name="one_flag_per_visitor_and_mode")]

    def __str__(self) -> str:
        return f"{self.mode} {self.visitor}: {self.reason}"


class VoterBan(models.Model):
    """A voter staff banned, in every mode (:mod:`arena.contests.bans`): their votes are kept
    but stop counting at the next rating run, and count again once the ban is lifted.

    ``visitor`` as :class:`VisitorFlag` names one: ``session:<key>`` (an anonymous session, or
    a person's account key, which their rows are kept under) or ``ip:<keyed hash>``."""

    visitor = models.CharField(max_length=80, unique=True)
    reason = models.CharField(max_length=200, blank=True)
    banned_at = models.DateTimeField(default=timezone.now)
    banned_by = models.CharField(max_length=150, blank=True)
    lifted_at = models.DateTimeField(null=True, blank=True, db_index=True,
                                     help_text="When staff lifted it (empty: it stands).")
    lifted_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["-banned_at"]

    def __str__(self) -> str:
        return f"{self.visitor} ({'lifted' if self.lifted_at else 'banned'})"

    @property
    def stands(self) -> bool:
        return self.lifted_at is None


class CountedVote(models.Model):
    """What every mode's vote carries for the integrity rules (:mod:`arena.contests.counting`):
    whether it counts for ratings, why not, and the voter's address as ``ip:<keyed hash>``
    (:func:`arena.contests.flags.visitor_of_address`), never the address."""

    counts_for_rating = models.BooleanField(default=True, db_index=True)
    exclusion_reason = models.CharField(max_length=200, blank=True)
    voter = models.CharField(max_length=40, blank=True, db_index=True)
    # The voter ticked "my prompts and answers may be published" (unticked by default): only
    # then do a data release's rows for this vote carry the conversation's text.
    publish_text = models.BooleanField(default=False)

    class Meta:
        abstract = True


class Endpoint(models.TextChoices):  # the values of arena.llm.types.OWN and FALLBACK
    OWN = "own", "Its own provider"
    FALLBACK = "fallback", "The fallback endpoint"


class ModelCall(models.Model):
    """One call to a model, as the operators see it (:mod:`arena.llm.ledger`): which model,
    through which endpoint, for which mode and kind of work, how it went, how long it took
    and what it cost. Never the conversation, the key or who asked."""

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    model_slug = models.CharField(max_length=100)
    provider = models.CharField(max_length=100)
    endpoint = models.CharField(max_length=10, choices=Endpoint.choices, default=Endpoint.OWN)
    mode = models.CharField(max_length=30, blank=True, help_text="The app whose work it was.")
    kind = models.CharField(max_length=60, blank=True, help_text="e.g. Response, DebateStep.")
    ok = models.BooleanField()
    error_kind = models.CharField(max_length=60, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    ttft_ms = models.PositiveIntegerField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["model_slug", "created_at"]),
                   models.Index(fields=["provider", "created_at"])]

    def __str__(self) -> str:
        return f"{self.model_slug} {'ok' if self.ok else self.error_kind} {self.created_at:%c}"


class Alert(models.Model):
    """One alert the operators were sent (:mod:`arena.alerts`): a rule's measure crossed its
    threshold for a subject (a provider, or "" for the whole arena), or a one-off event such
    as a failed debate.

    "Raised once": while a rule's alert for a subject is open (``cleared_at`` unset) the
    evaluation does not raise it again, and the database holds it to that (the partial unique
    constraint), so two evaluations racing raise one. An event is recorded already cleared.
    ``message`` is what was sent, never a key, a prompt or a visitor."""

    rule = models.CharField(max_length=40, db_index=True)
    subject = models.CharField(max_length=200, blank=True)
    value = models.FloatField(null=True, blank=True, help_text="What was measured.")
    threshold = models.FloatField(null=True, blank=True)
    message = models.TextField()
    raised_at = models.DateTimeField(default=timezone.now, db_index=True)
    cleared_at = models.DateTimeField(null=True, blank=True,
                                      help_text="When the measure recovered (events: at once).")
    notified_at = models.DateTimeField(
        null=True, blank=True, help_text="Every configured channel took the alert's notice.")
    resolved_notified_at = models.DateTimeField(
        null=True, blank=True, help_text="Every configured channel took the 'resolved' notice.")
    delivery_error = models.TextField(blank=True, help_text="Each notice a channel refused.")

    class Meta:
        ordering = ["-raised_at"]
        constraints = [models.UniqueConstraint(
            fields=["rule", "subject"], condition=models.Q(cleared_at__isnull=True),
            name="one_open_alert_per_rule_and_subject")]

    def __str__(self) -> str:
        return f"{self.rule} {self.subject}".strip()

    @property
    def is_open(self) -> bool:
        return self.cleared_at is None
