"""Token usage per kind of debate (seed 004: "Track token usage per debate type"): by the
motion's category or by the number of rounds, over completed debates (calibration runs left
out), both sides and the fact-checking and judging together.

Blind means blind: a debate's own figures are shown only to a viewer who voted or revealed.
So the usage is in tokens, never in dollars (with the models' public prices a cost can name
them), summed over both sides (a sum does not tell pro from con), and a kind with fewer than
``USAGE_MIN_DEBATES`` debates lists its count only. Its figures are not left to be worked
out from the others either: while the withheld kinds of a grouping hold fewer than
``USAGE_MIN_DEBATES`` debates between them, the smallest shown kinds are withheld too, and
the total is shown only over at least that many debates; what a difference of rows can
reveal is then a sum over that many debates at least.

That holds within one reading; across readings, the figures move in batches. They count the
first ``USAGE_MIN_DEBATES`` × k debates in the order they completed (k as large as there
are), so the total moves by ``USAGE_MIN_DEBATES`` debates at once, never by one: a viewer who
reads the figures before and after a debate they watched ends learns the sum of a batch, not
that debate's tokens. Per kind, a batch can still add a single debate to a row (one
Environment debate among the five); what that reveals is a sum over both sides in tokens, and
only to someone who also knows which debate of that kind completed inside the batch, which
the other debates of the batch, unlisted ones included, blur. Batching each kind on its own
would close that too, at the price of rows that each lag by up to four debates.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, F, Q, Sum
from django.db.models.functions import Coalesce

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
    debater_tokens: int | None  # None: withheld
    judging_tokens: int | None

    @property
    def withheld(self) -> bool:
        return self.debater_tokens is None

    @property
    def tokens(self) -> int | None:
        return None if self.withheld else self.debater_tokens + self.judging_tokens

    @property
    def tokens_per_debate(self) -> float | None:
        return None if self.withheld else self.tokens / self.debates

    def hidden(self) -> UsageRow:
        return UsageRow(self.key, self.label, self.debates, None, None)


def debate_usage(*, by: str) -> list[UsageRow]:
    """One row per kind (most debates first), then the total over every kind as ``all``."""
    if by not in USAGE_BY:
        raise RuleError(BAD_USAGE_BY.format(value=str(by)[:40]), status=422)
    grouped = (_counted()
               .values(kind=F(_GROUP_FIELD[by]))
               .annotate(n=Count("pk"), debater=Sum(F("tokens_a") + F("tokens_b")),
                         judging=Sum("tokens_judging"))
               .order_by("-n", "kind"))
    rows = [UsageRow(str(r["kind"]), _label(by, r["kind"]), r["n"], r["debater"] or 0,
                     r["judging"] or 0) for r in grouped]
    total = UsageRow("all", "All debates", sum(r.debates for r in rows),
                     sum(r.debater_tokens for r in rows), sum(r.judging_tokens for r in rows))
    return [*_suppressed(rows), total if total.debates >= USAGE_MIN_DEBATES else total.hidden()]


def _counted():
    """Completed debates (calibration runs left out) up to the last whole batch of
    ``USAGE_MIN_DEBATES``, in the order they completed."""
    done = (Debate.objects.filter(status=DebateStatus.COMPLETED, handicapped="")
            # a row written completed without the time (by hand, or before it was kept)
            .annotate(done_at=Coalesce("completed_at", "created_at")))
    total = done.count()
    batched = total - total % USAGE_MIN_DEBATES
    if not batched:
        return done.none()
    last = done.order_by("done_at", "pk").values_list("done_at", "pk")[batched - 1]
    # Up to the batch's last debate in the same order (done_at, then pk on a tie).
    return done.filter(Q(done_at__lt=last[0]) | Q(done_at=last[0], pk__lte=last[1]))


def _suppressed(rows: list[UsageRow]) -> list[UsageRow]:
    """Rows (most debates first) with the small kinds withheld, and the smallest shown ones
    after them while the withheld ones hold fewer than ``USAGE_MIN_DEBATES`` debates."""
    shown = [r.debates >= USAGE_MIN_DEBATES for r in rows]
    pool = sum(r.debates for r, keep in zip(rows, shown, strict=True) if not keep)
    for i in reversed(range(len(rows))):
        if not pool or pool >= USAGE_MIN_DEBATES:
            break
        if shown[i]:
            shown[i] = False
            pool += rows[i].debates
    return [r if keep else r.hidden() for r, keep in zip(rows, shown, strict=True)]


def _label(by: str, kind) -> str:
    if by == "rounds":
        return f"{kind} round{'s' if kind != 1 else ''}"
    return str(kind)
