# ruff: noqa: T201 - a benchmark prints its figures
"""Debate benchmarks on a throwaway stack (seed 004's performance tests); prints figures,
asserts nothing.

    .venv/bin/python benchmarks/debates.py [--debates 10] [--rounds 3] [--claims 100]
                                           [--rated 1000]

(a) ``--debates`` debates started at once on the fake provider, run by the Celery workers as
    the run command starts them: the wall time, and that every debate finished with every
    turn written exactly once (seed 004: 10 simultaneous debates, no lost or duplicated turns);
(b) the fact-checker's throughput in claims per second, speeches checked at once against a
    fake Tavily server that answers each search in 200 ms (seed 004: 5 claims/s; aim 20);
(c) rating ``--rated`` debates into both Glicko-2 boards: a full rating run of the two
    boards (seed 004: < 5 s; aim ≤ 50 ms);
(d) the leaderboard's debates tab (board, and the crowd/AI section) served from its snapshot:
    median server time over 30 requests (seed 004: < 100 ms).

Set DATABASE_URL to a PostgreSQL server to run on PostgreSQL (a throwaway database of its
own), REDIS_URL to use that Redis (a queue of its own).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this file's folder comes first on the path, where debates.py would hide
# the debates app: the project root replaces it.
sys.path[:] = [str(ROOT)] + [p for p in sys.path
                             if Path(p or ".").resolve() != ROOT / "benchmarks"]

from benchmarks.stack import (  # noqa: E402 - after the path is set
    describe,
    migrated_stack,
    prepare_environment,
    start_worker_processes,
)


def simultaneous_debates(count: int, rounds: int) -> None:
    from arena.steps import StepStatus
    from debates import services
    from debates.models import Debate, DebateStatus
    from debates.tests.debate_support import DebateScript, library, make_model
    from testkit.fake_providers import FakeOpenAIServer

    provider = FakeOpenAIServer(api_key=None, reply_text=DebateScript(), token_delay=0.01)
    provider.start()
    try:
        for slug in ("alpha-7b", "beta-3b", "gamma-1b"):
            make_model(provider, slug, api_key_env="")
        topic, first, second = library()
        started = time.perf_counter()
        ids = [services.debate_create(
            model_a="alpha-7b", model_b="beta-3b", topic_id=str(topic.pk),
            persona_a=str(first.pk), persona_b=str(second.pk), rounds=rounds,
            word_limit=80).pk for _ in range(count)]
        deadline = time.monotonic() + 600
        while Debate.objects.filter(pk__in=ids).exclude(
                status__in=[DebateStatus.COMPLETED, DebateStatus.FAILED]).exists():
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        wall = time.perf_counter() - started
        debates = list(Debate.objects.filter(pk__in=ids))
        completed = sum(d.status == DebateStatus.COMPLETED for d in debates)
        expected = 2 * rounds
        turns = [d.turns.count() for d in debates]
        lost = sum(max(expected - n, 0) for n in turns)
        duplicated = sum(max(n - expected, 0) for n in turns)
        steps_not_done = sum(d.steps.exclude(status=StepStatus.DONE).count() for d in debates)
        print(f"(a) {count} debates at once, {rounds} rounds, fact-checked and judged: "
              f"{completed}/{count} completed in {wall:.2f} s; turns lost {lost}, "
              f"duplicated {duplicated}; steps not done {steps_not_done}; "
              f"{sum(turns)} turns, {len(provider.chat_requests)} model calls")
    finally:
        provider.stop()


def fact_check_throughput(claims: int) -> None:
    from arena.selectors import model_endpoint_by_slug
    from debates.factcheck import MAX_CLAIMS, check_speech
    from debates.search_tavily import TavilySearch
    from debates.tests.debate_support import DebateScript, make_model
    from testkit.fake_providers import FakeOpenAIServer
    from testkit.fake_tavily import FakeTavilyServer

    corpus = [{"title": f"Fact {i}", "url": f"https://example.org/{i}",
               "content": f"Measured fact number {i}: the value was {i * 7} units in {1990 + i}."}
              for i in range(200)]
    statements = [f"The value of fact {i} was {i * 7} units in {1990 + i}" for i in
                  range(claims)]
    script = DebateScript(verdicts=dict.fromkeys(statements, "verified"))
    provider = FakeOpenAIServer(api_key=None, reply_text=script).start()
    search = FakeTavilyServer(corpus=corpus, latency=0.2).start()
    try:
        make_model(provider, "checker-1b", api_key_env="")
        endpoint = model_endpoint_by_slug("checker-1b")
        backend = TavilySearch(api_key=search.api_key, base_url=search.base_url)
        speeches = [". ".join(statements[i:i + MAX_CLAIMS]) + "."
                    for i in range(0, claims, MAX_CLAIMS)]

        async def check_all():
            return await asyncio.gather(*(check_speech(endpoint, backend, s) for s in speeches))

        started = time.perf_counter()
        reports = asyncio.run(check_all())
        wall = time.perf_counter() - started
        checked = sum(len(r.results) for r in reports)
        from collections import Counter

        verdicts = Counter(r.verdict for rep in reports for r in rep.results)
        reasons = Counter(r.explanation for rep in reports for r in rep.results
                          if r.verdict != "verified")
        print(f"(b) fact-checker: {checked} claims in {len(speeches)} speeches checked at once "
              f"against a search answering in 200 ms: {wall:.2f} s = "
              f"{checked / wall:.1f} claims/s (seed 004: 5; aim 20); verdicts "
              f"{dict(verdicts)}{'; not verified: ' + str(dict(reasons)) if reasons else ''}")
    finally:
        search.stop()
        provider.stop()


def rating_and_page(rated: int) -> None:
    from django.test import Client
    from django.utils import timezone

    from arena.models import AIModel, ProviderKind
    from debates.models import Debate, DebateStatus, Persona, Topic
    from leaderboard.models import RunTrigger
    from leaderboard.runs.services import ratings_run

    rng = random.Random(4)
    models = [AIModel.objects.create(slug=f"bench-{i}", name=f"Bench {i}", api_model="m",
                                     provider="P", provider_kind=ProviderKind.OPENAI)
              for i in range(12)]
    strength = {m.pk: rng.gauss(0, 1) for m in models}
    topic = Topic.objects.first()
    first, second = Persona.objects.all()[:2]
    now = timezone.now()
    rows = []
    for i in range(rated):
        a, b = rng.sample(models, 2)
        edge = strength[a.pk] - strength[b.pk]
        ai = "pro" if rng.random() < 1 / (1 + 10 ** (-edge)) else "con"
        crowd = ai if rng.random() < 0.8 else ("tie" if rng.random() < 0.3 else
                                               ("con" if ai == "pro" else "pro"))
        debate = Debate(topic=topic, model_a=a, model_b=b, persona_a=first, persona_b=second,
                        model_a_position="pro", status=DebateStatus.COMPLETED, ai_winner=ai,
                        human_winner=crowd, created_at=now - timedelta(hours=i % (30 * 24)))
        debate.ai_outcome, debate.crowd_outcome = debate.outcome_of(ai), debate.outcome_of(
            crowd)
        rows.append(debate)
    Debate.objects.bulk_create(rows, batch_size=500)
    times = []
    for _ in range(5):
        started = time.perf_counter()
        run = ratings_run(trigger=RunTrigger.COMMAND, boards=["debate-crowd", "debate-ai"])
        times.append((time.perf_counter() - started) * 1000)
    fits = {s.board: s.fit_ms for s in run.snapshots.filter(category="")}
    print(f"(c) {rated} debates rated into both Glicko-2 boards (30 daily periods, 12 models):"
          f" full run median {statistics.median(times):.0f} ms (best {min(times):.0f} ms;"
          f" fits {fits}) (seed 004: < 5 s; aim ≤ 50 ms)")
    client = Client()
    client.get("/leaderboard/", {"board": "debate-ai"})  # warm up
    served = []
    for _ in range(30):
        started = time.perf_counter()
        response = client.get("/leaderboard/", {"board": "debate-ai"})
        served.append((time.perf_counter() - started) * 1000)
    section = 'data-testid="debate-standings"' in response.content.decode()
    print(f"(d) the debates tab (board and crowd/AI section, {response.status_code}, section "
          f"shown: {section}): median {statistics.median(served):.1f} ms, p90 "
          f"{sorted(served)[26]:.1f} ms over 30 requests (seed 004: < 100 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debates", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--claims", type=int, default=100)
    parser.add_argument("--rated", type=int, default=1000)
    args = parser.parse_args()
    info = prepare_environment()
    with contextlib.ExitStack() as stack:
        migrated_stack(stack, info)
        from django.conf import settings

        from arena.celery import app

        threads, processes = settings.CELERY_WORKER_CONCURRENCY, settings.CELERY_WORKER_PROCESSES
        start_worker_processes(stack, app, threads, processes)
        print(f"Stack: {processes} Celery worker process(es) of {threads} threads, "
              f"{describe(info)}, fake OpenAI-compatible provider, fake Tavily")
        simultaneous_debates(args.debates, args.rounds)
        fact_check_throughput(args.claims)
        rating_and_page(args.rated)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
