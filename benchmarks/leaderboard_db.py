"""Leaderboard benchmarks on PostgreSQL: a full rating run over 1 million votes, and the
leaderboard page with 200 models served from its snapshot. Prints figures; asserts nothing.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/arena_dev \\
    REDIS_URL=redis://127.0.0.1:6379/14 .venv/bin/python benchmarks/leaderboard_db.py

Works in a throw-away database ``test_<name>`` (created, migrated and dropped again), so
the database named by DATABASE_URL is never touched. Targets (seed + issues): a full run
with style control and every category board ≤ 3 s end to end; the page ≤ 30 ms median
server time.

Options: --votes N (default 1,000,000), --models N (200), --page-requests N (60),
--keep (keep the database for another look).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


CATEGORY_SHARES = {"coding": 0.30, "hard_prompt": 0.375, "instruction_following": 0.18,
                   "creative_writing": 0.085, "math": 0.08, "multi_turn": 0.15,
                   "long_query": 0.05}


def say(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--votes", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--page-requests", type=int, default=60)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        say(
            "benchmarks/leaderboard_db.py needs PostgreSQL: set DATABASE_URL, e.g.\n"
            "  DATABASE_URL=postgres://postgres@127.0.0.1:5432/arena_dev "
            ".venv/bin/python benchmarks/leaderboard_db.py\n"
            "(it works in a throw-away database test_<name> and drops it afterwards)."
        )
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
    os.environ.setdefault("ARENA_ENV", "test")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import override_settings

    with ExitStack() as stack:
        if not os.environ.get("REDIS_URL"):  # run locks need a cache; no Redis is fine here
            stack.enter_context(override_settings(CACHES={
                "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}))
        old_name = connection.settings_dict["NAME"]
        t0 = time.perf_counter()
        connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
        say(f"database {connection.settings_dict['NAME']} created and migrated "
              f"in {time.perf_counter() - t0:.1f} s")
        try:
            _load(args.votes, args.models)
            _bench_runs()
            _bench_page(args.page_requests)
        finally:
            if not args.keep:
                connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


def _load(n_votes: int, n_models: int) -> None:
    import numpy as np
    from django.db import connection

    from arena.models import AIModel
    from arena.prompt_categories import CATEGORY_BITS
    from leaderboard.ratings.synthetic import simulate_grouped_votes

    t0 = time.perf_counter()
    rng = np.random.default_rng(2024)
    true = rng.normal(1000.0, 120.0, n_models)
    slugs = [f"bench-model-{i:03d}" for i in range(n_models)]
    AIModel.objects.bulk_create([
        AIModel(slug=s, name=f"Bench Model {i:03d}", provider="Bench", provider_kind="openai",
                api_model=s, organization=f"Org {i % 12}", license=("MIT", "Apache-2.0",
                                                                   "Proprietary")[i % 3])
        for i, s in enumerate(slugs)
    ])
    a, b, outcome, count = simulate_grouped_votes(true, n_votes, rng=rng)
    a, b, outcome = (np.repeat(x, count) for x in (a, b, outcome))
    order = rng.permutation(a.size)
    a, b, outcome = a[order], b[order], outcome[order]
    winners = np.array(["model_a", "model_b", "tie", "both_bad"])[outcome]
    names = np.array(slugs)
    buf = io.StringIO()
    for x, y, w in zip(names[a].tolist(), names[b].tolist(), winners.tolist(), strict=True):
        buf.write(f"{x}\t{y}\t{w}\n")
    with connection.cursor() as cur:
        cur.execute("CREATE TEMP TABLE bench_votes (n bigserial, a text, b text, w text, "
                    "id uuid DEFAULT gen_random_uuid())")
        with cur.cursor.copy("COPY bench_votes (a, b, w) FROM STDIN") as copy:
            copy.write(buf.getvalue())
        # Every battle belongs to a session (thread): one for the whole benchmark.
        cur.execute("INSERT INTO battles_thread (id, session_key, title, created_at, "
                    "last_active_at) VALUES (gen_random_uuid(), 'bench', 'benchmark', now(), "
                    "now()) RETURNING id")
        (thread_id,) = cur.fetchone()
        # Categories in the shares of the real release (creative writing 8.5 %, hard 37.5 %,
        # instruction following 18 %, math 8 %) and LMArena's (coding about 30 %), plus
        # multi-turn, longer queries, and one language per battle.
        bits = " | ".join(f"(CASE WHEN random() < {share} THEN {CATEGORY_BITS[name]} ELSE 0 END)"
                          for name, share in CATEGORY_SHARES.items())
        cur.execute(
            f"""
            INSERT INTO battles_battle (id, session_key, thread_id, model_a_id, model_b_id,
                model_a_position, title, is_demo, created_at, last_active_at, categories,
                language, classification_note)
            SELECT id, 'bench', %s, a, b, CASE WHEN n %% 2 = 0 THEN 'left' ELSE 'right' END,
                   'benchmark', n %% 10 = 0,
                   now() - make_interval(secs => (%s - n) * 2),
                   now() - make_interval(secs => (%s - n) * 2), {bits},
                   CASE WHEN u < 0.65 THEN 'en' WHEN u < 0.75 THEN 'zh' WHEN u < 0.80 THEN 'ru'
                        WHEN u < 0.84 THEN 'de' WHEN u < 0.88 THEN 'es' WHEN u < 0.91 THEN 'fr'
                        WHEN u < 0.94 THEN 'ja' ELSE 'ko' END, ''
            FROM (SELECT *, random() AS u FROM bench_votes) AS drawn
            """,
            [thread_id, a.size, a.size],
        )
        cur.execute(
            """
            INSERT INTO battles_vote (id, battle_id, choice, winner, score_a, score_b,
                counts_for_rating, exclusion_reason, created_at, model_a_id, model_b_id,
                categories, language, tokens_a, tokens_b, headers_a, headers_b, lists_a,
                lists_b, bold_a, bold_b)
            SELECT gen_random_uuid(), v.id,
                   CASE w WHEN 'model_a' THEN 'left_better' WHEN 'model_b' THEN 'right_better'
                          ELSE w END,
                   w,
                   CASE w WHEN 'model_a' THEN 1 WHEN 'model_b' THEN 0 WHEN 'tie' THEN 0.5
                          ELSE 0.25 END,
                   CASE w WHEN 'model_a' THEN 0 WHEN 'model_b' THEN 1 WHEN 'tie' THEN 0.5
                          ELSE 0.25 END,
                   n %% 200 <> 0, '', now() - make_interval(secs => (%s - n) * 2 - 1),
                   b.model_a_id, b.model_b_id, b.categories, b.language,
                   (random() * 900)::int, (random() * 900)::int, (random() * 4)::int,
                   (random() * 4)::int, (random() * 12)::int, (random() * 12)::int,
                   (random() * 6)::int, (random() * 6)::int
            FROM bench_votes v JOIN battles_battle b ON b.id = v.id
            """,
            [a.size],
        )
        cur.execute("DROP TABLE bench_votes")
        cur.execute("ANALYZE battles_battle")
        cur.execute("ANALYZE battles_vote")
        cur.execute("SELECT count(*) FILTER (WHERE categories <> 0) FROM battles_vote")
        (tagged,) = cur.fetchone()
        cur.execute("SELECT count(*), count(*) FILTER (WHERE counts_for_rating) FROM battles_vote")
        total, counted = cur.fetchone()
    say(f"loaded {total:,} votes ({counted:,} counted) between {n_models} models, with style "
        f"counts, a language each and {tagged:,} in some category, "
        f"in {time.perf_counter() - t0:.1f} s")


def _bench_runs() -> None:
    from battles.boards import TEXT_BOARD
    from leaderboard.models import RunTrigger
    from leaderboard.runs import online_elo, services

    steps: dict[str, float] = {}
    last = [time.perf_counter()]

    def progress(label: str) -> None:
        now = time.perf_counter()
        steps[label] = steps.get(label, 0.0) + now - last[0]
        last[0] = now

    say("\nfull rating run (SQL aggregation -> fit -> snapshot, style control, one board per "
        "category), board text:")
    t0 = time.perf_counter()
    run = services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    say(f"  first run, incl. the one-off online Elo replay of every vote: "
          f"{time.perf_counter() - t0:.2f} s ({run.status})")
    times = []
    for _ in range(3):
        steps.clear()
        last[0] = t0 = time.perf_counter()
        run = services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text"],
                                   progress=progress)
        times.append(time.perf_counter() - t0)
    breakdown = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in steps.items())
    from leaderboard.models import BoardSnapshot

    whole = BoardSnapshot.objects.filter(board="text", category="").latest("created_at")
    rated = BoardSnapshot.objects.filter(run=run).exclude(category="").count()
    say(f"  full run, sandwich intervals: median {statistics.median(times):.2f} s "
          f"(runs: {', '.join(f'{t:.2f}' for t in times)}; target <= 3 s) "
          f"[{run.outcomes_processed:,} outcomes]")
    say(f"    last run: {breakdown}")
    say(f"    style control: {'fitted' if whole.style_coefficients else 'NOT fitted'}; "
        f"category boards: {rated} of {len(whole.category_votes)} categories")
    t0 = time.perf_counter()
    rows = list(TEXT_BOARD.outcomes())
    say(f"  the GROUP BY alone: {time.perf_counter() - t0:.2f} s -> {len(rows):,} rows")
    t0 = time.perf_counter()
    online_elo.online_elo_replay(board_name="text")
    say(f"  online Elo replay alone (reads every counted vote in order): "
          f"{time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    run = services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text"], bootstrap_rounds=100)
    say(f"  with 100 bootstrap rounds instead: {time.perf_counter() - t0:.2f} s "
          f"({run.status})")


def _bench_page(n_requests: int) -> None:
    from django.test import Client

    from leaderboard.pages import board_plots, selectors
    from leaderboard.pages.selectors import snapshot_latest

    snap = snapshot_latest(board="text")
    client = Client()
    say(f"\nleaderboard page from the snapshot ({snap.models_total} models, "
          f"{snap.models_rated} rated), Django test client, {n_requests} requests each:")
    cold = []
    for _ in range(5):
        for memo in (selectors._snapshot_entries, board_plots._model_plots,
                     board_plots._pair_plots):
            memo.cache_clear()
        t0 = time.perf_counter()
        client.get("/leaderboard/")
        cold.append((time.perf_counter() - t0) * 1000)
    say(f"  page, nothing memoised yet (first view of a new snapshot): median "
          f"{statistics.median(cold):.1f} ms")
    for label, path in [
        ("page /leaderboard/", "/leaderboard/"),
        ("htmx results fragment", "/leaderboard/?sort=votes&q=model"),
        ("GET /api/leaderboard", "/api/leaderboard"),
    ]:
        headers = {"HX-Request": "true", "HX-Target": "lb-results"} if "htmx" in label else {}
        for _ in range(5):
            client.get(path, headers=headers)
        times = []
        size = 0
        for _ in range(n_requests):
            t0 = time.perf_counter()
            response = client.get(path, headers=headers)
            times.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200, response.status_code
            size = len(response.content)
        times.sort()
        p90 = times[int(0.9 * (len(times) - 1))]
        target = " (target <= 30 ms)" if label.startswith("page") else ""
        say(f"  {label:<24} median {statistics.median(times):6.1f} ms, p90 {p90:6.1f} ms, "
              f"{size / 1024:.0f} KiB{target}")


if __name__ == "__main__":
    sys.exit(main())
