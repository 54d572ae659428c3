"""Rate an external file of votes, like FastChat's offline analysis (no database needed).

The file is a CSV (or gzipped CSV) with the columns model_a, model_b, winner — the format
of shared/data, of ``export_votes`` and of an open data release (``releases/``); ``--category
NAME`` rates the rows whose column NAME is true, ``--board NAME`` a release's rows of that
board, ``--until TIME`` the rows before that time (a rating run's start) and ``--min-votes N``
holds models with fewer votes at their provisional estimate, as the board does: together they
reproduce a board's rating run from a release. ``--format json`` prints a list of
``{"model", "rating", "ci_lower", "ci_upper", "votes", "rank_ub"}``, best first.
"""

from __future__ import annotations

import csv
import json
from datetime import datetime
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from leaderboard.ratings import (
    BOTH_BAD,
    TIE,
    VotesFileError,
    group_outcomes,
    rank_upper_bound,
    read_votes,
)
from leaderboard.ratings.votes_file import read_styled_votes
from leaderboard.runs import compute

BAD_UNTIL = "--until must be an ISO 8601 time with its offset, not {value!r}"
BAD_MIN_VOTES = "--min-votes must be >= 0"


class Command(BaseCommand):
    help = "Rate a votes file (model_a, model_b, winner; .csv or .csv.gz) and print the board."
    # It reads a file and prints: no database, URLs or models to check (the checks import
    # every URL module and cost most of the command's time).
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--input", required=True, metavar="FILE")
        parser.add_argument("--method", choices=["bt", "elo", "glicko2"], default="bt",
                            help="bt: Bradley–Terry (default). elo: K=32 Elo, both-bad counted "
                                 "as a tie, median of the bootstrap. glicko2: rating periods "
                                 "of --period votes, ±1.96 RD.")
        parser.add_argument("--ci", choices=["bootstrap", "sandwich"], default="bootstrap",
                            help="Interval method (bt: both; elo: bootstrap; glicko2 uses RD).")
        parser.add_argument("--bootstrap", type=int, default=100, metavar="N",
                            help="Bootstrap rounds (default 100).")
        parser.add_argument("--format", choices=["table", "json", "csv"], default="table")
        parser.add_argument("--seed", type=int, default=0, help="Bootstrap seed (default 0).")
        parser.add_argument("--period", type=int, default=1000, metavar="N",
                            help="Glicko-2: votes per rating period, in file order.")
        parser.add_argument("--category", metavar="NAME",
                            help="Rate only the votes whose column NAME is true (e.g. math, "
                                 "hard_prompt in the shared release), as a category board.")
        parser.add_argument("--style-control", action="store_true",
                            help="Bradley–Terry with style control (answer length, headers, "
                                 "lists, bold held equal; needs the style columns that "
                                 "export_votes writes); sandwich intervals, and the style "
                                 "coefficients are printed too.")
        parser.add_argument("--board", metavar="NAME",
                            help="Rate only the rows whose column board is NAME (an open data "
                                 "release holds every board's votes).")
        parser.add_argument("--until", metavar="TIME",
                            help="Rate only the rows whose timestamp is before TIME (ISO 8601 "
                                 "with its offset, e.g. a rating run's start).")
        parser.add_argument("--min-votes", type=int, default=0, metavar="N",
                            help="Bradley–Terry: a model with fewer than N votes is provisional "
                                 "and held at its estimate under a weak prior, as the "
                                 "leaderboard does (default 0: none).")
        parser.add_argument("--strict", action="store_true",
                            help="Treat a row whose two models are the same as an error "
                                 "(by default such rows are skipped).")

    def handle(self, *args, **opts):
        path = Path(opts["input"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        if opts["bootstrap"] < 0 or opts["period"] < 1:
            raise CommandError("--bootstrap must be >= 0 and --period >= 1")
        if opts["style_control"] and opts["method"] != "bt":
            raise CommandError("--style-control applies to --method bt only")
        if opts["min_votes"] < 0:
            raise CommandError(BAD_MIN_VOTES)
        self.category, self.style = opts["category"], None
        until = _moment(opts["until"]) if opts["until"] else None
        read = read_styled_votes if opts["style_control"] else read_votes
        try:
            votes = read(path, skip_self_matches=not opts["strict"], category=opts["category"],
                         board=opts["board"], until=until)
        except VotesFileError as exc:
            raise CommandError(str(exc)) from None
        if opts["style_control"]:
            votes, style = votes
        if votes.a_idx.size == 0:
            raise CommandError(f"{path.name}: no votes in the file")
        if opts["style_control"]:
            fit, self.style = compute.fit_style(votes.a_idx, votes.b_idx, votes.outcome,
                                                style.a, style.b, len(votes.models))
        else:
            fit = self._fit(votes, opts)
        n = len(votes.models)
        counts = np.bincount(votes.a_idx, minlength=n) + np.bincount(votes.b_idx, minlength=n)
        if opts["min_votes"]:
            a, b, code, count = group_outcomes(votes.a_idx, votes.b_idx, votes.outcome)
            fit = compute.shrink_provisional(fit, compute.Grouped(votes.models, a, b, code, count),
                                             counts < opts["min_votes"])
        rank = rank_upper_bound(fit.ci_lower, fit.ci_upper)
        order = np.argsort(-fit.rating, kind="stable")
        rows = [
            {
                "model": votes.models[i],
                "rating": round(float(fit.rating[i]), 2),
                "ci_lower": round(float(fit.ci_lower[i]), 2),
                "ci_upper": round(float(fit.ci_upper[i]), 2),
                "votes": int(counts[i]),
                "rank_ub": int(rank[i]),
            }
            for i in order
        ]
        getattr(self, f"_print_{opts['format']}")(rows, fit, votes.a_idx.size)

    def _fit(self, votes, opts) -> compute.Fit:
        method, ci = opts["method"], opts["ci"]
        if method == "bt":
            a, b, code, count = group_outcomes(votes.a_idx, votes.b_idx, votes.outcome)
            grouped = compute.Grouped(votes.models, a, b, code, count)
            if ci == "bootstrap" and opts["bootstrap"] == 0:
                ci = "sandwich"
            return compute.fit_bt(grouped, ci_method=ci, rounds=opts["bootstrap"],
                                  seed=opts["seed"])
        if method == "elo":
            if ci == "sandwich":
                raise CommandError("--ci sandwich applies to --method bt only; "
                                   "Elo intervals come from the bootstrap")
            # Offline Elo as FastChat computes it: a both-bad vote is a tie (0.5 each). The
            # arena's online Elo keeps seed 000's 0.25 each, which drains ratings over
            # many votes and is no basis for an offline analysis.
            outcome = np.where(votes.outcome == BOTH_BAD, TIE, votes.outcome)
            return compute.fit_elo(votes.models, votes.a_idx, votes.b_idx, outcome,
                                   ci_method="bootstrap", rounds=opts["bootstrap"],
                                   seed=opts["seed"])
        size = opts["period"]
        periods = []
        for start in range(0, votes.a_idx.size, size):
            chunk = slice(start, start + size)
            periods.append(group_outcomes(votes.a_idx[chunk], votes.b_idx[chunk],
                                          votes.outcome[chunk]))
        return compute.fit_glicko2(len(votes.models), periods)

    def _print_json(self, rows, fit, n_votes):
        if self.style is None:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        coefficients = (compute.style_coefficient(row) for row in self.style)
        self.stdout.write(json.dumps({"ratings": rows, "style_coefficients": {
            c["element"]: {"value": round(c["value"], 4), "ci_lower": round(c["ci_lower"], 4),
                           "ci_upper": round(c["ci_upper"], 4), "fitted": c["fitted"],
                           **({"note": c["note"]} if c["note"] else {})}
            for c in coefficients}}, indent=2))

    def _print_csv(self, rows, fit, n_votes):
        writer = csv.DictWriter(self.stdout, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)

    def _print_table(self, rows, fit, n_votes):
        width = max(len("Model"), *(len(r["model"]) for r in rows))
        label = {"bt": "Bradley–Terry", "elo": "Elo", "glicko2": "Glicko-2"}[fit.method]
        ci = f"{fit.ci_method}" + (f", {fit.rounds} rounds" if fit.rounds else "")
        within = f" in category {self.category}" if self.category else ""
        styled = ", style-controlled" if self.style is not None else ""
        self.stdout.write(f"{label} ratings ({ci}{styled}) from {n_votes} votes{within}, "
                          f"{len(rows)} models")
        if self.style is not None:
            self.stdout.write("Style coefficients (log-odds per standard deviation of the "
                              "difference): " + ", ".join(
                                  f"{c['element']} {c['value']:+.3f} [{c['ci_lower']:+.3f}, "
                                  f"{c['ci_upper']:+.3f}]" if c["fitted"]
                                  else f"{c['element']} ({c['note']})"
                                  for c in map(compute.style_coefficient, self.style)))
        self.stdout.write(f"{'Rank (UB)':>9}  {'Model':<{width}}  {'Rating':>8}  {'95% CI':>13}"
                          f"  {'Votes':>7}")
        for r in rows:
            interval = f"+{r['ci_upper'] - r['rating']:.1f}/-{r['rating'] - r['ci_lower']:.1f}"
            self.stdout.write(f"{r['rank_ub']:>9}  {r['model']:<{width}}  {r['rating']:>8.2f}  "
                              f"{interval:>13}  {r['votes']:>7}")


def _moment(value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise CommandError(BAD_UNTIL.format(value=value))
    return moment
