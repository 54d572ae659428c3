"""Vote integrity: which visitors vote far beyond chance, so their votes stop counting.

Three tests over one visitor's votes (anchors: FastChat's vote cleaning, TTS Arena's
binomial anti-fraud test), each a reason a person can read:

* **same side**: among decisive votes, one screen side picked ``k`` of ``n`` times. Sides
  are shuffled per contest, so an honest visitor picks each with probability 1/2; the
  two-sided binomial tail says how unlikely ``k`` is.
* **same model**: a model the visitor's votes favour ``k`` of the ``n`` decisive times it
  appeared, against what everyone's votes give it (at least 1/2): the upper binomial tail.
* **burst**: more votes inside a short window than a person can read answers for.

A test flags only past ``min_votes`` votes and below ``alpha`` (small: every visitor is
tested, so the bar is set for many tests at once). Flagged votes are kept and marked; a
staff member can clear a flag (they count again) in the admin.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from scipy.special import bdtrc  # binom.sf's own function, without scipy.stats' 4 s import


@dataclass(frozen=True)
class CastVote:
    """One vote as the tests see it: the side picked (None: tie or both bad), the models at
    stake (winner first; None when not decisive) and when it was cast."""

    side: str | None
    winner: str | None
    loser: str | None
    at: datetime


@dataclass(frozen=True)
class Thresholds:
    alpha: float = 1e-6
    min_votes: int = 20
    burst_votes: int = 30
    burst_window: timedelta = timedelta(seconds=120)


@dataclass(frozen=True)
class Finding:
    reason: str
    p_value: float | None
    votes: int


def same_side_p(picks: Sequence[str]) -> float:
    """Two-sided binomial tail of the most-picked side among ``picks`` (p = 1/2)."""
    n = len(picks)
    if n == 0:
        return 1.0
    k = max(Counter(picks).values())
    return float(min(1.0, 2 * bdtrc(k - 1, n, 0.5)))


def _tally(votes: Iterable[CastVote]) -> tuple[Counter, Counter]:
    """Per model: decisive votes won, and decisive votes it appeared in."""
    wins, seen = Counter(), Counter()
    for vote in votes:
        if vote.winner is None:
            continue
        wins[vote.winner] += 1
        seen[vote.winner] += 1
        seen[vote.loser] += 1
    return wins, seen


def model_win_rates(votes: Iterable[CastVote]) -> dict[str, float]:
    """Each model's share of the decisive votes it appeared in (everyone's votes)."""
    wins, seen = _tally(votes)
    return {model: wins[model] / seen[model] for model in seen}


def favoured_model(votes: Sequence[CastVote], rates: Mapping[str, float]) -> tuple[str, float, int]:
    """The model this visitor favours most against its usual rate: ``(model, p, n)``."""
    wins, seen = _tally(votes)
    best = ("", 1.0, 0)
    for model, n in seen.items():
        expected = max(0.5, rates.get(model, 0.5))
        p = float(bdtrc(wins[model] - 1, n, expected))  # P(wins >= k)
        if p < best[1]:
            best = (model, p, n)
    return best


def densest_burst(times: Sequence[datetime], window: timedelta) -> int:
    """The most votes cast inside any ``window``."""
    ordered, most, start = sorted(times), 0, 0
    for end, at in enumerate(ordered):
        while at - ordered[start] > window:
            start += 1
        most = max(most, end - start + 1)
    return most


def findings(votes: Sequence[CastVote], rates: Mapping[str, float],
             limits: Thresholds = Thresholds()) -> list[Finding]:
    """Why this visitor's votes should not count (empty: nothing unusual)."""
    found: list[Finding] = []
    burst = densest_burst([v.at for v in votes], limits.burst_window)
    if burst > limits.burst_votes:
        seconds = int(limits.burst_window.total_seconds())
        found.append(Finding(f"burst: {burst} votes within {seconds} s", None, len(votes)))
    picks = [v.side for v in votes if v.side is not None]
    if len(picks) >= limits.min_votes:
        p = same_side_p(picks)
        if p < limits.alpha:
            side, k = Counter(picks).most_common(1)[0]
            found.append(Finding(f"same side: {side} in {k} of {len(picks)} decisive votes "
                                 f"(p = {p:.1e})", p, len(picks)))
    model, p, n = favoured_model(votes, rates)
    if n >= limits.min_votes and p < limits.alpha:
        found.append(Finding(f"same model: {model} favoured in {n} votes far beyond its usual "
                             f"rate (p = {p:.1e})", p, n))
    return found
