"""Scale-out, proven (issue 36, item 8): the production shape with every part doubled except
beat (two web nodes, two Celery workers, one beat) on one database and one Redis, each part a
process of its own, as ``docker compose up --scale web=2 --scale worker=2`` runs it.

Each web node listens on a loopback address of its own (127.0.0.2, 127.0.0.3), not in a
network namespace of its own: a namespace needs CAP_NET_ADMIN (root here, not on CI
runners), and a node inside one reaches PostgreSQL, Redis and the fake provider only through
a virtual link whose address those would have to listen on, which is a change to services
the test does not own. What the nodes share is what a namespace would leave them: the
database and Redis, reached by address (or, embedded, by a file). Where 127.0.0.2 cannot be
bound (macOS has only 127.0.0.1) the test is skipped.

One scenario rather than a test per claim: the cluster is five interpreters that each load
Django (and the workers the provider SDKs) on start, the dearest part by far on two busy
cores, and the last claim (node 1 killed) ends the cluster. Each claim is a function of its
own below, so a failure names the claim it broke.

On SQLite (no ``DATABASE_URL``) every process opens the one test database file and the
embedded Redis's socket, as the run command's processes do.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest
import redis
from django.conf import settings
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.sync.client import ClientConnection, connect

from battles.models import Response, Vote
from battles.services import BATTLE_ALREADY_VOTED
from testkit import task_runs
from testkit.live import keyless, start_daphne, start_worker_process, stop_process
from testkit.visitors import visitor_session_key
from testkit.waiting import ceiling, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

NODE_HOSTS = ("127.0.0.2", "127.0.0.3")
QUEUE = "scale-out"  # the cluster's own: a worker of the test process takes none of its tasks
SWEEP = "arena.tasks.steps_requeue_stale"  # beat's most frequent entry, every SWEEP_SECONDS
SWEEP_SECONDS = "0.5"
HELD_AFTER_TOKENS = 3


@dataclass
class Cluster:
    nodes: list[str]  # the web nodes' base URLs
    daphnes: list[subprocess.Popen]
    workers: dict[str, subprocess.Popen]  # by Celery node name
    beat: subprocess.Popen
    redis: redis.Redis
    session_key: str = field(default_factory=visitor_session_key)

    def client(self, node: int) -> httpx.Client:
        """The visitor's client of node ``node`` (0 or 1): its session cookie, and the node
        as its Origin, as the site's pages write."""
        base = self.nodes[node]
        return httpx.Client(base_url=base, timeout=ceiling(60), headers={"Origin": base},
                            cookies={settings.SESSION_COOKIE_NAME: self.session_key})


def _loopback_addresses_bind() -> bool:
    try:
        for host in NODE_HOSTS:
            with socket.socket() as probe:
                probe.bind((host, 0))
    except OSError:
        return False
    return True


@pytest.fixture
def cluster(tmp_path, test_process_env, two_models, fake_openai) -> Iterator[Cluster]:
    if not _loopback_addresses_bind():
        pytest.skip(f"this system cannot bind {' and '.join(NODE_HOSTS)} (only 127.0.0.1)")
    keyless(fake_openai, two_models, token_delay=0.02)
    # The Celery processes record what beat sent and what each worker ran (testkit.task_runs).
    (tmp_path / "scale_out_settings.py").write_text(
        "from live_server_settings import *  # noqa: F403\n"
        "CELERY_IMPORTS = ['testkit.task_runs']\n")
    env = {**test_process_env, "DJANGO_SETTINGS_MODULE": "scale_out_settings",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), test_process_env["PYTHONPATH"]]),
           "CELERY_QUEUE": QUEUE, "ARENA_STEP_SWEEP_SECONDS": SWEEP_SECONDS,
           "ALLOWED_HOSTS": ",".join(["127.0.0.1", *NODE_HOSTS])}
    client = redis.Redis.from_url(settings.REDIS_URL)
    task_runs.forget(client)
    with contextlib.ExitStack() as stack:
        stack.callback(client.close)
        workers = {}
        for index in (1, 2):
            name = f"{QUEUE}-{index}@{socket.gethostname()}"
            workers[name] = start_worker_process(env, queue=QUEUE, name=name)
            stack.callback(stop_process, workers[name], grace=15)
        beat = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "arena", "beat", "--loglevel", "WARNING",
             "--schedule", str(tmp_path / "beat-schedule")],
            cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stack.callback(stop_process, beat)
        daphnes, nodes = [], []
        for host in NODE_HOSTS:
            process, base = start_daphne(env, host)
            stack.callback(stop_process, process)
            daphnes.append(process)
            nodes.append(base)
        yield Cluster(nodes, daphnes, workers, beat, client)
        task_runs.forget(client)


class Page:
    """A battle page's socket as battle.js keeps it, with the proxy's part played by a list of
    ``addresses``: when its socket closes it connects again, with backoff, to the first
    address that answers; it keeps every message each connection brought (a list for each)."""

    def __init__(self, addresses: list[str], battle_id: str, session_key: str) -> None:
        self.addresses, self.battle_id, self.session_key = addresses, battle_id, session_key
        self.connections: list[tuple[str, list[dict]]] = []
        self.socket: ClientConnection | None = None

    def connect(self) -> str:
        """Connect to the first address, in order and round again, that answers: its URL."""
        delay, deadline = 0.1, time.monotonic() + ceiling(30)
        for base in itertools.cycle(self.addresses):
            try:
                self.socket = connect(
                    base.replace("http://", "ws://") + f"/ws/battles/{self.battle_id}/",
                    origin=base, open_timeout=ceiling(10),
                    additional_headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}="
                                                  f"{self.session_key}"})
            except (OSError, WebSocketException):  # refused, or cut in the handshake: down
                if time.monotonic() > deadline:
                    raise AssertionError("no node took the page's socket") from None
                threading.Event().wait(delay)  # battle.js's backoff, not a synchronisation
                delay = min(delay * 2, 2.0)
                continue
            self.connections.append((base, []))
            return base
        raise AssertionError("unreachable: the addresses cycle")

    def receive(self) -> dict:
        """The next message (``ConnectionClosed`` once the node is gone)."""
        message = json.loads(self.socket.recv(timeout=ceiling(30)))
        self.connections[-1][1].append(message)
        return message

    def receive_until_done(self, responses: set[str]) -> None:
        finished: set[str] = set()
        while finished != responses:
            message = self.receive()
            if message["event"] in ("done", "failed"):
                finished.add(message["response"])

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()


def assemble(connections: list[tuple[str, list[dict]]]) -> dict[str, str]:
    """Each answer's text as battle.js builds it (a snapshot at or above the last number
    applied sets the text, a delta above it appends, the rest is dropped), checking on the
    way that within a connection each delta applied is numbered one above the last one:
    a missed chunk leaves a gap, a repeated one is dropped or shows in the text."""
    texts: dict[str, str] = {}
    last: dict[str, int] = {}
    for base, messages in connections:
        applied: dict[str, int] = {}  # this connection's last number applied, per answer
        for message in messages:
            rid, event, seq = message["response"], message["event"], message.get("seq", 0)
            if event == "snapshot" and seq >= last.get(rid, 0):
                assert message["text"].startswith(texts.get(rid, "")), \
                    f"a snapshot from {base} took back text the page had shown"
                texts[rid], last[rid], applied[rid] = message["text"], seq, seq
            elif event == "delta" and seq > last.get(rid, 0):
                assert rid not in applied or seq == applied[rid] + 1, \
                    f"a chunk of {rid} was missed on {base}: {applied[rid]} then {seq}"
                texts[rid], last[rid], applied[rid] = texts.get(rid, "") + message["text"], seq, seq
    return texts


def saved_answers(battle_id: str) -> dict[str, str]:
    return {str(r.id): r.text for r in Response.objects.filter(turn__battle_id=battle_id)}


def started_battle(cluster: Cluster, pool, *, through: int, prompt: str):
    """``POST /api/battles`` through node ``through`` (it answers once both answers are
    written, so it runs in ``pool``) and the new battle's id, as the visitor's list on the
    other node shows it: the future answer and the id."""
    def create() -> httpx.Response:
        with cluster.client(through) as client:
            return client.post("/api/battles", json={"prompt": prompt})

    with cluster.client(1 - through) as other:
        def listed() -> set[str]:
            return {b["battle_id"] for b in other.get("/api/battles").json()["battles"]}

        before = listed()
        answer = pool.submit(create)
        new = wait_for(lambda: listed() - before, timeout=30,
                       what="the new battle in the other node's list")
    (battle_id,) = new
    return answer, battle_id


def test_two_web_nodes_and_two_workers_on_one_database_and_redis_act_as_one_arena(
        cluster, fake_openai):
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        streamed = a_battle_created_through_node_1_streams_to_a_page_on_node_2(
            cluster, fake_openai, pool)
        votes_through_both_nodes_land_once(cluster, streamed)
        a_page_whose_node_dies_mid_stream_resumes_on_the_other(cluster, fake_openai, pool)
    one_beat_runs_each_scheduled_task_once_across_both_workers(cluster)


def a_battle_created_through_node_1_streams_to_a_page_on_node_2(cluster, fake, pool) -> str:
    release = fake.hold(after_tokens=HELD_AFTER_TOKENS)  # the page connects mid-answer
    answer, battle_id = started_battle(cluster, pool, through=0,
                                       prompt="Name three rivers of Europe and their seas.")
    page = Page([cluster.nodes[1]], battle_id, cluster.session_key)
    page.connect()
    release.set()
    try:
        page.receive_until_done(set(saved_answers(battle_id)))
    finally:
        page.close()
    created = answer.result()
    assert created.status_code == 200, created.text
    saved = saved_answers(battle_id)
    assert len(saved) == 2 and all(saved.values())
    assert assemble(page.connections) == saved
    # Streamed, not only caught up: the chunks written after the page joined came as deltas
    # through node 2, from a worker that node 1's request started.
    deltas = {m["response"] for m in page.connections[0][1] if m["event"] == "delta"}
    assert deltas == set(saved)
    assert sorted(r["text"] for r in created.json()["responses"]) == sorted(saved.values())
    return battle_id


def votes_through_both_nodes_land_once(cluster, battle_id: str) -> None:
    # The same battle, the same visitor, through both nodes at once: one vote.
    clients = [cluster.client(0), cluster.client(1)]
    together = threading.Barrier(2)

    def vote(client: httpx.Client) -> httpx.Response:
        together.wait(ceiling(30))
        return client.post("/api/votes", json={"battle_id": battle_id, "vote": "left_better"})

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as racing:
        answers = list(racing.map(vote, clients))
    assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
    refused = next(a for a in answers if a.status_code == 409)
    assert refused.json()["detail"] == BATTLE_ALREADY_VOTED
    assert Vote.objects.filter(battle_id=battle_id).count() == 1

    # Two battles, one voted through each node: two votes.
    others = []
    for node in (0, 1):
        created = clients[node].post("/api/battles", json={"prompt": f"Say hello, node {node}."})
        assert created.status_code == 200, created.text
        others.append(created.json()["battle_id"])
    for node, other in enumerate(others):
        voted = clients[node].post("/api/votes", json={"battle_id": other, "vote": "tie"})
        assert voted.status_code == 200, voted.text
    assert Vote.objects.filter(battle_id__in=others).count() == 2
    assert Vote.objects.count() == 3
    for client in clients:
        client.close()


def a_page_whose_node_dies_mid_stream_resumes_on_the_other(cluster, fake, pool) -> None:
    release = fake.hold(after_tokens=HELD_AFTER_TOKENS)
    # Created through node 2: node 1 dies with only the page's socket on it.
    answer, battle_id = started_battle(cluster, pool, through=1,
                                       prompt="Describe the water cycle in a few sentences.")
    responses = set(saved_answers(battle_id))
    page = Page(cluster.nodes, battle_id, cluster.session_key)
    assert page.connect() == cluster.nodes[0]
    try:
        shown: dict[str, str] = {}
        while len(shown) < 2 or not all(shown.values()):  # both answers begun on the page
            page.receive()
            shown = assemble(page.connections)
        os.kill(cluster.daphnes[0].pid, signal.SIGKILL)  # as when its machine is lost
        with pytest.raises(ConnectionClosed):
            while True:  # what node 1 had sent before it died, then the close
                page.receive()
        assert page.connect() == cluster.nodes[1]  # node 1 refused, then node 2
        release.set()
        page.receive_until_done(responses)
    finally:
        page.close()
    assert answer.result().status_code == 200, answer.result().text
    assert [base for base, _ in page.connections] == cluster.nodes
    resumed = page.connections[1][1]
    # The rest came through node 2: a snapshot of the text so far, then the remaining chunks.
    assert {m["response"] for m in resumed if m["event"] == "snapshot"} == responses
    assert {m["response"] for m in resumed if m["event"] == "delta"} == responses
    assert assemble(page.connections) == saved_answers(battle_id)


def one_beat_runs_each_scheduled_task_once_across_both_workers(cluster) -> None:
    def sent() -> list[str]:
        return [task_id for name, task_id, _ in task_runs.sent_by_beat(cluster.redis)
                if name == SWEEP]

    def started() -> list[tuple[str, str]]:
        return [(task_id, worker) for name, task_id, worker in
                task_runs.started(cluster.redis) if name == SWEEP]

    # Both workers consume the queue beat sends to (Redis hands each task to one of them).
    wait_for(lambda: {worker for _, worker in started()} == set(cluster.workers),
             timeout=60, what="both workers to run one of beat's sweeps")
    so_far = sent()
    wait_for(lambda: {task_id for task_id, _ in started()} >= set(so_far), timeout=60,
             what="every sweep beat had sent to be run")
    runs = [task_id for task_id, _ in started()]
    # Each sweep beat sent ran once, on one worker; and nothing ran that the one beat did not
    # send (a second beat, or a worker with beat embedded, would send sweeps of its own). Beat
    # records a sweep just after sending it, so a worker may record its run first: waited for.
    assert len(runs) == len(set(runs)), "a sweep ran twice"
    assert len(so_far) == len(set(so_far))
    wait_for(lambda: set(runs) <= set(sent()), timeout=30,
             what="every sweep the workers ran to be one that beat sent")
    assert {int(pid) for *_, pid in task_runs.sent_by_beat(cluster.redis)} == {cluster.beat.pid}
