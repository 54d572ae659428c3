"""Token usage per kind of debate (seed 004: "Track token usage per debate type"): by the
motion's category or by the number of rounds, over completed debates (calibration runs left
out), both sides and the fact-checking and judging together.

Blind means blind: a debate's own usage is shown only to a viewer who voted or revealed (a
cost, with the models' public prices, can name them), so a kind with fewer than
``USAGE_MIN_DEBATES`` debates is listed with its count only, its figures withheld.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, F, Sum

from arena.errors import RuleError
from debates.models import Debate, DebateStatus

USAGE_BY = ("category", "rounds")
USAGE_MIN_DEBATES = 5
BAD_USAGE_BY = "Group the usage by category or rounds, not {value!r}."
_GROUP_FIELD = {"category": "topic__category", "rounds": "rounds"}


@dataclass(frozen=True)
class UsageRow:
    key: str
    label: str
    debates: int
    debater_tokens: int | None  # None: withheld (fewer than USAGE_MIN_DEBATES debates)
    judging_tokens: int | None
    cost_usd: float | None

    @property
    def withheld(self) -> bool:
        return self.debater_tokens is None

    @property
    def tokens(self) -> int | None:
        return None if self.withheld else self.debater_tokens + self.judging_tokens

    @property
    def tokens_per_debate(self) -> float | None:
        return None if self.withheld else self.tokens / self.debates

    @property
    def cost_per_debate(self) -> float | None:
        return None if self.withheld else self.cost_usd / self.debates


def _row(key: str, label: str, debates: int, debater: int, judging: int,
         cost: float) -> UsageRow:
    if debates < USAGE_MIN_DEBATES:
        return UsageRow(key, label, debates, None, None, None)
    return UsageRow(key, label, debates, debater, judging, round(cost, 6))


def debate_usage(*, by: str) -> list[UsageRow]:
    """One row per kind (most debates first), then the total over every kind as ``all``."""
    if by not in USAGE_BY:
        raise RuleError(BAD_USAGE_BY.format(value=str(by)[:40]), status=422)
    rows = list(Debate.objects.filter(status=DebateStatus.COMPLETED, handicapped="")
                .values(kind=F(_GROUP_FIELD[by]))
                .annotate(n=Count("pk"), debater=Sum(F("tokens_a") + F("tokens_b")),
                          judging=Sum("tokens_judging"),
                          cost=Sum(F("cost_a") + F("cost_b") + F("cost_judging")))
                .order_by("-n", "kind"))
    sums = [sum(r[name] or 0 for r in rows) for name in ("n", "debater", "judging", "cost")]
    return [*(_row(str(r["kind"]), _label(by, r["kind"]), r["n"], r["debater"] or 0,
                   r["judging"] or 0, r["cost"] or 0.0) for r in rows),
            _row("all", "All debates", *sums)]


def _label(by: str, kind) -> str:
    if by == "rounds":
        return f"{kind} round{'s' if kind != 1 else ''}"
    return str(kind)
