"""The panel's verdict from the judges' rankings. Pure functions, no Django.

* Average rank per model, best (lowest) first, as seed 003 does: each valid ranking gives
  every answer a rank 1..n; a model's score is the mean of the ranks it got.
* Self-votes: every judge also answered, so every judge ranked its own answer. Its rank of
  itself is reported, and the standings can be computed without self-votes: each judge's own
  answer is taken out of its ranking and the rest re-ranked 1..n-1, so every model is scored
  only by the other judges, on one common scale.
* Agreement between judges: Kendall's coefficient of concordance W (see :func:`kendalls_w`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

Ranking = Sequence[str]  # model keys, best first


@dataclass(frozen=True)
class Standing:
    position: int  # 1 = best; equal averages share a position
    model: str
    average_rank: float | None  # None: no judge counted for this model
    ranks: dict[str, int]  # judge -> rank it gave this model
    judges: int  # how many ranks were averaged


def ranks_by_judge(
    rankings: Mapping[str, Ranking], *, exclude_self: bool = False
) -> dict[str, dict[str, int]]:
    """``{judge: {model: rank}}``; with ``exclude_self`` each judge's own model is dropped
    from its ranking and the others re-ranked from 1."""
    result: dict[str, dict[str, int]] = {}
    for judge, ranking in rankings.items():
        order = [m for m in ranking if not (exclude_self and m == judge)]
        result[judge] = {model: i + 1 for i, model in enumerate(order)}
    return result


def average_ranks(
    competitors: Sequence[str], rankings: Mapping[str, Ranking], *, exclude_self: bool = False
) -> list[Standing]:
    """Standings best first: by average rank, then by more judges, then by key.

    ``rankings`` maps judge -> a complete ranking of ``competitors`` (validated upstream).
    Models nobody counted for (no valid judge, or only themselves with ``exclude_self``)
    come last with ``average_rank`` None.
    """
    by_judge = ranks_by_judge(rankings, exclude_self=exclude_self)
    rows = []
    for model in competitors:
        ranks = {judge: r[model] for judge, r in by_judge.items() if model in r}
        average = sum(ranks.values()) / len(ranks) if ranks else None
        rows.append((model, average, ranks))
    rows.sort(key=lambda row: (row[1] is None, row[1] or 0.0, -len(row[2]), row[0]))
    standings: list[Standing] = []
    for i, (model, average, ranks) in enumerate(rows):
        previous = standings[-1].average_rank if standings else None
        tied = None not in (previous, average) and abs(previous - average) < 1e-9
        position = standings[-1].position if tied else i + 1
        standings.append(Standing(position, model, average, ranks, len(ranks)))
    return standings


def self_ranks(rankings: Mapping[str, Ranking]) -> dict[str, int | None]:
    """The rank each judge gave its own answer (None if it ranked no answer of its own)."""
    return {
        judge: (list(ranking).index(judge) + 1 if judge in ranking else None)
        for judge, ranking in rankings.items()
    }


def kendalls_w(rankings: Sequence[Ranking]) -> float | None:
    """Kendall's coefficient of concordance W of m complete rankings of the same n items.

    ``W = 12 S / (m² (n³ − n))`` where ``R_i`` is the sum of the ranks item i received from
    the m judges, ``R̄ = m (n + 1) / 2`` their mean, and ``S = Σ_i (R_i − R̄)²``. The rankings
    are permutations, so no tie correction is needed. W is 1 when every judge gives the same
    ranking and 0 when the rank sums are all equal (no agreement beyond chance). Undefined
    (None) with fewer than two judges or two items.
    """
    rankings = [list(r) for r in rankings]
    m = len(rankings)
    if m < 2:
        return None
    items = sorted(rankings[0])
    n = len(items)
    if n < 2:
        return None
    if any(sorted(r) != items for r in rankings):
        raise ValueError("Kendall's W needs every ranking to order the same items")
    sums = dict.fromkeys(items, 0)
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            sums[item] += rank
    mean = m * (n + 1) / 2
    s = sum((total - mean) ** 2 for total in sums.values())
    return 12 * s / (m**2 * (n**3 - n))


def verdict(competitors: Sequence[str], rankings: Mapping[str, Ranking]) -> dict:
    """Everything the pages, API and CLI show, as JSON-ready data.

    ``competitors``: the models with an answer; ``rankings``: valid rankings by judge.
    """
    def rows(standings: list[Standing]) -> list[dict]:
        return [asdict(s) for s in standings]

    w = kendalls_w(list(rankings.values()))
    return {
        "standings": rows(average_ranks(competitors, rankings)),
        "standings_without_self_votes": rows(
            average_ranks(competitors, rankings, exclude_self=True)
        ),
        "self_ranks": self_ranks(rankings),
        "kendall_w": None if w is None else round(w, 4),
        "judges_counted": len(rankings),
        "answers": len(competitors),
    }


def pairwise_outcomes(ranking: Ranking) -> list[tuple[str, str, str]]:
    """A ranking as pairs ``(model_a, model_b, winner)`` with ``model_a < model_b``:
    every pair of answers once, the one ranked higher wins (n (n − 1) / 2 rows)."""
    order = list(ranking)
    pairs = []
    for i, better in enumerate(order):
        for worse in order[i + 1:]:
            a, b = sorted((better, worse))
            pairs.append((a, b, "model_a" if better == a else "model_b"))
    return pairs
