"""The AI model registry: every model the arena can put in front of people."""

from __future__ import annotations

from django.core.validators import MinValueValidator, RegexValidator
from django.db import models

SLUG_VALIDATOR = RegexValidator(
    r"^[a-z0-9][a-z0-9._-]*$",
    "Use lowercase letters, digits, dots, dashes and underscores.",
)


class ProviderKind(models.TextChoices):
    OPENAI = "openai", "OpenAI-compatible"
    ANTHROPIC = "anthropic", "Anthropic"


class ModelStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    INACTIVE = "inactive", "Inactive"
    DEPRECATED = "deprecated", "Deprecated"


class AIModel(models.Model):
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
    in_models_file = models.BooleanField(
        default=True, help_text="False once the models file no longer lists it."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

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
