"""Faults of the services under the arena: Redis going away and coming back. Pages that only
read keep working; what needs Redis answers "temporarily unavailable" (503 with Retry-After,
never the 500 page) while it is down, and works again as soon as it is back."""

from __future__ import annotations

import pytest
import redis
from django.core.cache import cache
from django.test import Client

import arena.cache
import arena.ratelimit
from arena.ratelimit import CANNOT_COUNT
from battles.models import Battle
from tests.writes import OWN, WRITES, send, session_create

pytestmark = pytest.mark.django_db


def test_redis_down_reads_keep_working_writes_say_temporarily_unavailable(private_redis,
                                                                         admin_user):
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    assert client.post("/api/worker/aggregate", content_type="application/json").status_code \
        == 200

    private_redis.stop()
    # Reading pages needs no Redis: the cached model probes are simply not cached.
    assert client.get("/battle/").status_code == 200
    assert client.get("/leaderboard/").status_code == 200
    # A rating run takes a Redis lock per board: a 503 saying so, with Retry-After.
    run = client.post("/api/worker/aggregate", content_type="application/json")
    assert run.status_code == 503 and run["Retry-After"] == "10"
    assert "temporarily unavailable" in run.json()["detail"]
    assert "Redis" in run.json()["detail"] and "already saved is kept" in run.json()["detail"]

    private_redis.start()
    assert client.post("/api/worker/aggregate", content_type="application/json").status_code \
        == 200


@pytest.mark.parametrize("make", WRITES)
def test_redis_down_a_write_is_refused_rather_than_let_through_uncounted(private_redis,
                                                                        visitor, make):
    """Limits that let everything through while Redis is away are no limits (every write
    of every API was taken, uncounted): a write that cannot be counted is a 503."""
    client, key = visitor
    write = make(key)
    private_redis.stop()
    answer = send(client, write, Origin=OWN)
    assert answer.status_code == 503 and answer["Retry-After"] == "10", answer.content
    assert answer.json()["detail"] == CANNOT_COUNT
    assert not write.happened()


@pytest.mark.parametrize("make", WRITES)
def test_redis_stalled_a_write_is_refused_while_it_is_still_paused(private_redis, visitor,
                                                                    make):
    """Redis paused: a write is answered (503 with Retry-After, nothing taken) while Redis is
    still paused, not when it comes back; each call to it gives up after a second."""
    client, key = visitor
    write = make(key)
    with private_redis.paused():
        answer = send(client, write, Origin=OWN)
    assert answer.status_code == 503 and answer["Retry-After"] == "10", answer.content
    assert answer.json()["detail"] == CANNOT_COUNT
    assert not write.happened()


def test_redis_down_reads_go_on_uncounted_and_a_page_form_says_why_it_took_nothing(
        private_redis, visitor):
    client, _ = visitor
    private_redis.stop()
    assert client.get("/api/sessions").status_code == 200
    assert client.get("/api/debates").status_code == 200  # counted per hour, when it can be
    page = Client().post("/battle/", {"prompt": "Hello there"})
    assert page.status_code == 503 and page["Retry-After"] == "10"
    assert "nothing was changed" in page.content.decode()
    assert not Battle.objects.exists()


@pytest.mark.parametrize("page", ["/", "/battle/", "/debates/", "/panel/", "/voice/",
                                  "/leaderboard/", "/api/models"])
def test_redis_stalled_a_reading_page_still_answers(private_redis, two_models, page):
    """Redis paused (SIGSTOP, as a stalled server or a network that drops packets): every
    call to it waited without end, and the reading pages hung as long as it did. Each call
    now gives up after a second; the page answers while Redis is still paused."""
    with private_redis.paused():
        assert Client().get(page).status_code == 200


def test_redis_stalled_one_call_waits_its_timeout_and_the_next_ones_skip_it(private_redis):
    with private_redis.paused():
        with pytest.raises(redis.TimeoutError):
            cache.get("anything")
        with pytest.raises(redis.ConnectionError, match="skipped for a few seconds"):
            cache.get("anything")  # at once: Redis is not asked again
    arena.cache._skip_until = 0.0  # the skip ends (after SKIP_SECONDS): Redis is asked again
    cache.set("anything", 1)
    assert cache.get("anything") == 1


def test_redis_stalled_the_rate_limits_wait_once_then_skip_it_too(private_redis, two_models,
                                                                  settings, monkeypatch):
    """Every API request is counted (per hour), in Redis: during a stall each read waited
    the limits' second before it went on uncounted, and a page that also read the cache
    waited two (the run command's /api/models: 1.1 s each, 2.1 s at worst, while Redis was
    paused). Reads heed the cache's skip now: one wait, then none for a few seconds. A write
    still asks (and is refused after its wait), so it goes through once Redis is back."""
    settings.ARENA_ANON_REQUESTS_PER_HOUR = 100  # the run command's (the suite counts none)
    monkeypatch.setattr(arena.cache, "SKIP_SECONDS", 3600)  # no busy machine outlasts it
    store = arena.ratelimit.limiter()
    asked = []

    def hit(*args, **kwargs):
        asked.append(args)
        return type(store).hit(store, *args, **kwargs)

    monkeypatch.setattr(store, "hit", hit)
    with private_redis.paused():
        assert [Client().get("/api/models").status_code for _ in range(3)] == [200] * 3
        assert len(asked) == 1  # the first read waited; the next two did not ask Redis
        write = session_create("")
        denied = send(Client(raise_request_exception=False), write, Origin=OWN)
        assert denied.status_code == 503 and not write.happened()
        assert len(asked) == 2
    accepted = send(Client(), write, Origin=OWN)  # at once, though reads still skip Redis
    assert accepted.status_code in (200, 201) and write.happened()


@pytest.mark.django_db(transaction=True)
def test_a_database_connection_dropped_mid_request_writes_nothing(two_models, monkeypatch):
    """PostgreSQL ends the request's connection between two writes of a new battle (a real
    pg_terminate_backend from another connection): a 503 saying so, and nothing half-saved."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("terminating a server connection needs PostgreSQL (CI runs on it)")
    import psycopg

    from battles import services
    from battles.models import Battle, Thread

    params = connection.settings_dict
    admin = (f"host={params['HOST'] or '127.0.0.1'} port={params['PORT'] or 5432} "
             f"user={params['USER']} dbname={params['NAME']}")
    add_turn = services._add_turn

    def connection_dropped_then_add_turn(*args, **kwargs):
        with psycopg.connect(admin, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)",
                          [connection.connection.info.backend_pid])
        return add_turn(*args, **kwargs)

    monkeypatch.setattr(services, "_add_turn", connection_dropped_then_add_turn)
    response = Client(raise_request_exception=False).post(
        "/api/battles", '{"prompt": "Will this be saved?"}', content_type="application/json")
    assert response.status_code == 503 and response["Retry-After"] == "10"
    assert "its database does not answer" in response.json()["detail"]
    monkeypatch.undo()
    assert not Battle.objects.exists() and not Thread.objects.exists()
