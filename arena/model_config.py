"""Reading and checking the models file (``fixtures/models.yaml`` or ``ARENA_MODELS_FILE``).

The format is seed 000's (``id``, ``name``, ``model``, ``base_url``, ``api_key_env``,
``organization``, ``license``) plus seed 003's ``kind``, ``max_tokens``, ``optional`` and
``prefix_len`` (how many characters of the key ``manage.py panel`` prints to check it, 0 to
8), seed 004's ``cost_per_1m_input_tokens`` / ``cost_per_1m_output_tokens``,
``local`` for the embedded local models, and ``context_tokens`` (what the model reads
at most, checked before a call; a local model's default is its server's context per
request), ``daily_spend_usd`` (what it may spend a day over every mode; absent: the
setting's default) and ``fallback`` (``base_url``, ``model``, ``api_key_env`` of an
OpenAI-compatible endpoint, e.g. OpenRouter, asked when its own fails or is over budget).
Any problem is one line that names the file, the model and what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

from arena.api_keys import DEFAULT_PREFIX_LEN, MAX_PREFIX_LEN
from arena.local_models import LOCAL_MODELS
from arena.models import SLUG_VALIDATOR, ModelStatus, ProviderKind

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
REQUIRED_FIELDS = ("id", "name", "model")
KNOWN_FIELDS = {
    "id", "name", "model", "kind", "provider", "base_url", "api_key_env", "organization",
    "license", "status", "max_tokens", "context_tokens", "system_prompt", "optional", "local",
    "cost_per_1m_input_tokens", "cost_per_1m_output_tokens", "aliases", "prefix_len",
    "daily_spend_usd", "fallback",
}
FALLBACK_FIELDS = {"base_url", "model", "api_key_env"}


class ModelConfigError(ValueError):
    """The models file cannot be used; the message is one line naming the problem."""


@dataclass(frozen=True)
class ModelSpec:
    slug: str
    name: str
    api_model: str
    provider_kind: str
    provider: str
    base_url: str
    api_key_env: str
    organization: str
    license: str
    status: str
    max_tokens: int
    context_tokens: int | None
    system_prompt: str
    optional: bool
    local_key: str
    input_price_per_million: Decimal
    output_price_per_million: Decimal
    aliases: tuple[str, ...] = ()
    prefix_len: int = DEFAULT_PREFIX_LEN
    daily_spend_usd: Decimal | None = None
    fallback: dict[str, str] | None = None

    @property
    def is_local(self) -> bool:
        return bool(self.local_key)

    def as_model_fields(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "provider": self.provider,
            "provider_kind": self.provider_kind,
            "api_model": self.api_model,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "organization": self.organization,
            "license": self.license,
            "status": self.status,
            "max_tokens": self.max_tokens,
            "context_tokens": self.context_tokens,
            "system_prompt": self.system_prompt,
            "optional": self.optional,
            "is_local": self.is_local,
            "local_key": self.local_key,
            "input_price_per_million": self.input_price_per_million,
            "output_price_per_million": self.output_price_per_million,
            "key_prefix_len": self.prefix_len,
            "aliases": list(self.aliases),
            "daily_spend_usd": self.daily_spend_usd,
            "fallback_base_url": (self.fallback or {}).get("base_url", ""),
            "fallback_api_model": (self.fallback or {}).get("model", ""),
            "fallback_api_key_env": (self.fallback or {}).get("api_key_env", ""),
        }


def load_model_specs(path: Path, *, include_local: bool = True) -> list[ModelSpec]:
    """Parse and check the models file; local models are left out when ``include_local`` is off."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelConfigError(f"{path}: cannot read the models file ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ModelConfigError(f"{path}: malformed YAML{where}: {problem}") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise ModelConfigError(f"{path}: expected a top-level 'models:' list")

    specs: list[ModelSpec] = []
    seen: set[str] = set()
    for position, entry in enumerate(data["models"], start=1):
        spec = _parse_entry(path, position, entry)
        if spec.slug in seen:
            raise ModelConfigError(f"{path}: model '{spec.slug}': id is listed twice")
        seen.add(spec.slug)
        if spec.is_local and not include_local:
            continue
        specs.append(spec)
    return specs


def _parse_entry(path: Path, position: int, entry: Any) -> ModelSpec:
    if not isinstance(entry, dict):
        raise ModelConfigError(f"{path}: entry #{position} is not a mapping of fields")
    label = f"model '{entry.get('id')}'" if entry.get("id") else f"entry #{position}"

    def fail(problem: str) -> ModelConfigError:
        return ModelConfigError(f"{path}: {label}: {problem}")

    for field in REQUIRED_FIELDS:
        if entry.get(field) in (None, ""):
            raise fail(f"missing required key '{field}'")
    unknown = sorted(set(entry) - KNOWN_FIELDS)
    if unknown:
        raise fail(f"unknown key '{unknown[0]}' (known: {', '.join(sorted(KNOWN_FIELDS))})")

    slug = str(entry["id"])
    if not SLUG_VALIDATOR.regex.match(slug):
        raise fail("id must be lowercase letters, digits, dots, dashes or underscores")
    kind = str(entry.get("kind") or ProviderKind.OPENAI)
    if kind not in ProviderKind.values:
        raise fail(f"unknown provider kind '{kind}' (use openai or anthropic)")
    status = str(entry.get("status") or ModelStatus.ACTIVE)
    if status not in ModelStatus.values:
        raise fail(f"unknown status '{status}' (use active, inactive or deprecated)")

    local_key = str(entry.get("local") or "")
    base_url = str(entry.get("base_url") or "")
    if local_key:
        if local_key not in LOCAL_MODELS:
            raise fail(f"unknown local model '{local_key}' (known: {', '.join(LOCAL_MODELS)})")
    elif kind == ProviderKind.OPENAI and not base_url:
        raise fail("an openai-kind model needs a base_url")
    elif base_url and not base_url.startswith(("http://", "https://")):
        raise fail(f"base_url '{base_url}' must start with http:// or https://")

    max_tokens = entry.get("max_tokens", 1000)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise fail(f"max_tokens must be a positive whole number, not {max_tokens!r}")

    context_tokens = entry.get("context_tokens")
    if context_tokens is None and local_key:
        context_tokens = LOCAL_MODELS[local_key].ctx_per_slot  # what each request may use
    if context_tokens is not None and (not isinstance(context_tokens, int)
                                       or isinstance(context_tokens, bool)
                                       or context_tokens <= max_tokens):
        raise fail(f"context_tokens must be a whole number above max_tokens ({max_tokens}), "
                   f"not {context_tokens!r}")

    return ModelSpec(
        slug=slug,
        name=str(entry["name"]),
        api_model=str(entry["model"]),
        provider_kind=kind,
        provider=str(entry.get("provider") or entry.get("organization") or kind),
        base_url=base_url,
        api_key_env=str(entry.get("api_key_env") or ""),
        organization=str(entry.get("organization") or ""),
        license=str(entry.get("license") or ""),
        status=status,
        max_tokens=max_tokens,
        context_tokens=context_tokens,
        system_prompt=str(entry.get("system_prompt") or DEFAULT_SYSTEM_PROMPT),
        optional=bool(entry.get("optional", False)),
        local_key=local_key,
        input_price_per_million=_price(entry, "cost_per_1m_input_tokens", fail),
        output_price_per_million=_price(entry, "cost_per_1m_output_tokens", fail),
        aliases=_aliases(entry, fail),
        prefix_len=_prefix_len(entry, fail),
        daily_spend_usd=(_price(entry, "daily_spend_usd", fail)
                         if entry.get("daily_spend_usd") is not None else None),
        fallback=_fallback(entry, fail),
    )


def _fallback(entry: dict, fail) -> dict[str, str] | None:
    raw = entry.get("fallback")
    if raw is None:
        return None
    if not isinstance(raw, dict) or not raw.get("base_url"):
        raise fail("fallback must be a mapping with at least base_url (and model, api_key_env)")
    unknown = sorted(set(raw) - FALLBACK_FIELDS)
    if unknown:
        raise fail(f"fallback: unknown key '{unknown[0]}' (known: "
                   f"{', '.join(sorted(FALLBACK_FIELDS))})")
    if not str(raw["base_url"]).startswith(("http://", "https://")):
        raise fail(f"fallback base_url '{raw['base_url']}' must start with http:// or https://")
    return {key: str(raw.get(key) or "") for key in FALLBACK_FIELDS}


def _prefix_len(entry: dict, fail) -> int:
    value = entry.get("prefix_len", DEFAULT_PREFIX_LEN)
    if (not isinstance(value, int) or isinstance(value, bool)
            or not 0 <= value <= MAX_PREFIX_LEN):
        raise fail(f"prefix_len must be a whole number from 0 to {MAX_PREFIX_LEN} (characters "
                   f"of the key to print), not {value!r}")
    return value


def _aliases(entry: dict, fail) -> tuple[str, ...]:
    """Other names a conversation may use for the model (``aliases: [ChatGPT]``)."""
    raw = entry.get("aliases") or []
    if not isinstance(raw, list) or not all(isinstance(a, str) and a.strip() for a in raw):
        raise fail(f"aliases must be a list of names, not {raw!r}")
    return tuple(a.strip() for a in raw)


def _price(entry: dict, field: str, fail) -> Decimal:
    raw = entry.get(field, 0) or 0
    try:
        value = Decimal(str(raw))
    except InvalidOperation:
        raise fail(f"{field} must be a number, not {raw!r}") from None
    if value < 0:
        raise fail(f"{field} cannot be negative")
    return value
