"""A run's writes: one board's numbers (or one of its categories') stored as a snapshot with
an entry per subject, in one transaction, and the oldest snapshots past the number kept
deleted."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from leaderboard.models import BoardSnapshot, RatingRun, SnapshotEntry
from leaderboard.runs.fast_insert import insert_plain
from leaderboard.runs.rating import FitOptions, Numbers
from leaderboard.runs.reading import BoardOutcomes


def snapshot_write(*, board_name: str, category: str, run: RatingRun | None,
                   outcomes: BoardOutcomes, numbers: Numbers,
                   options: FitOptions) -> BoardSnapshot:
    grouped, fit, tally, subjects = (outcomes.grouped, numbers.fit, numbers.tally,
                                     outcomes.subjects)
    win_rate = tally.win_rate
    with transaction.atomic():
        snapshot = BoardSnapshot.objects.create(
            board=board_name,
            run=run,
            method=fit.method,
            ci_method=fit.ci_method,
            bootstrap_rounds=fit.rounds,
            min_votes=options.min_votes,
            outcomes=grouped.total,
            models_total=grouped.n,
            models_rated=int(numbers.rated.sum()),
            battles=outcomes.counts.get("battles"),
            votes_total=outcomes.counts.get("votes"),
            fit_ms=numbers.fit_ms,
            plot_data=numbers.plot_data,
            style_coefficients=numbers.style_coefficients,
            category=category,
            category_votes={name: int(mask.sum()) for name, mask in outcomes.masks.items()},
        )
        insert_plain(
            SnapshotEntry,
            [
                SnapshotEntry(
                    snapshot=snapshot,
                    subject=key,
                    name=subjects[key].name,
                    organization=subjects[key].organization,
                    license=subjects[key].license,
                    deprecated=bool(numbers.deprecated[i]),
                    provisional=not bool(numbers.rated[i]),
                    rating=float(fit.rating[i]),
                    ci_lower=float(fit.ci_lower[i]),
                    ci_upper=float(fit.ci_upper[i]),
                    rank_ub=int(numbers.rank_ub[i]),
                    rank_ub_active=int(numbers.rank_ub_active[i]),
                    votes=int(tally.votes[i]),
                    wins=int(tally.wins[i]),
                    losses=int(tally.losses[i]),
                    ties=int(tally.ties[i]),
                    both_bad=int(tally.both_bad[i]),
                    win_rate=float(win_rate[i]),
                    volatility=(None if fit.volatility is None
                                else float(fit.volatility[i])),
                    **{name: values[i] for name, values in numbers.style.items()},
                )
                for i, key in enumerate(grouped.subjects)
            ],
        )
        _prune_snapshots(board_name, category)
    return snapshot


def _prune_snapshots(board_name: str, category: str) -> None:
    keep = settings.ARENA_LEADERBOARD_KEEP_SNAPSHOTS
    old = list(
        BoardSnapshot.objects.filter(board=board_name, category=category)
        .order_by("-created_at", "-id")
        .values_list("pk", flat=True)[keep:]
    )
    if old:
        BoardSnapshot.objects.filter(pk__in=old).delete()
