"""Public answers are repeated from memory before Django is reached, and nothing else is
(arena.edge.PublicAnswers)."""

import re

import pytest

from arena.edge import PublicAnswers


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def answering(*headers: tuple[bytes, bytes], status: int = 200, chunks: int = 1):
    """An ASGI app answering every request with its own count, and ``headers``; the
    requests it saw."""
    seen: list[dict] = []

    async def app(scope, receive, send):
        seen.append(scope)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), *headers]})
        for index in range(chunks):
            await send({"type": "http.response.body", "body": b"%d" % len(seen),
                        "more_body": index < chunks - 1})

    return app, seen


async def get(app, path: str = "/api/leaderboard", query: bytes = b"", method: str = "GET",
              headers: tuple = ()) -> tuple[int, dict, bytes]:
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "query_string": query,
             "headers": list(headers)}
    await app(scope, None, send)
    start = sent[0]
    return (start["status"], dict(start["headers"]),
            b"".join(m.get("body", b"") for m in sent[1:]))


PUBLIC = (b"cache-control", b"public, max-age=5")


async def test_a_public_answer_is_sent_again_without_the_app_until_its_age_is_up():
    clock = Clock()
    app, seen = answering(PUBLIC)
    edge = PublicAnswers(app, clock=clock)
    first = await get(edge)
    clock.now += 3
    status, headers, body = await get(edge)
    assert len(seen) == 1
    assert (status, body) == (200, first[2])
    assert headers[b"cache-control"] == b"public, max-age=5"
    assert headers[b"age"] == b"3"
    clock.now += 2  # five seconds: stale
    assert (await get(edge))[2] == b"2"
    assert len(seen) == 2


async def test_answers_are_kept_by_path_and_query():
    app, seen = answering(PUBLIC)
    edge = PublicAnswers(app, clock=Clock())
    bodies = [(await get(edge, query=q))[2] for q in (b"sort=votes", b"sort=elo", b"sort=votes")]
    assert bodies == [b"1", b"2", b"1"]
    assert (await get(edge, path="/api/other"))[2] == b"3"


@pytest.mark.parametrize("headers, status, chunks", [
    ((), 200, 1),  # not marked public
    (((b"cache-control", b"private, max-age=5"),), 200, 1),
    (((b"cache-control", b"public, max-age=0"),), 200, 1),
    (((b"cache-control", b"no-cache"),), 200, 1),
    ((PUBLIC, (b"Set-Cookie", b"sessionid=abc; Path=/")), 200, 1),  # someone's own
    ((PUBLIC, (b"vary", b"*")), 200, 1),
    ((PUBLIC,), 404, 1),
    ((PUBLIC,), 200, 3),  # streamed
])
async def test_nothing_else_is_kept(headers, status, chunks):
    app, seen = answering(*headers, status=status, chunks=chunks)
    edge = PublicAnswers(app, clock=Clock())
    await get(edge)
    await get(edge)
    assert len(seen) == 2


async def test_only_gets_are_answered_from_memory():
    app, seen = answering(PUBLIC)
    edge = PublicAnswers(app, clock=Clock())
    await get(edge)
    for method in ("POST", "HEAD", "PUT"):
        await get(edge, method=method)
    assert len(seen) == 4


async def test_an_answer_that_varies_is_kept_for_each_value_of_the_header_it_names():
    app, seen = answering(PUBLIC, (b"Vary", b"Origin"))
    edge = PublicAnswers(app, clock=Clock())
    here = ((b"origin", b"https://arena.example"),)
    there = ((b"origin", b"https://elsewhere.example"),)
    assert (await get(edge, headers=here))[2] == b"1"
    assert (await get(edge, headers=there))[2] == b"2"  # not the other origin's answer
    assert (await get(edge))[2] == b"3"  # nor to a request without the header
    assert (await get(edge, headers=there))[2] == b"2"
    assert (await get(edge, headers=here))[2] == b"1"
    assert len(seen) == 3


async def test_a_request_for_a_fresh_answer_gets_one_and_it_is_kept():
    app, seen = answering(PUBLIC)
    edge = PublicAnswers(app, clock=Clock())
    await get(edge)
    fresh = await get(edge, headers=((b"cache-control", b"no-cache"),))
    assert fresh[2] == b"2"
    assert (await get(edge))[2] == b"2"


async def test_a_repeated_answer_names_a_request_id_of_its_own():
    """Never the id of the request the answer was kept from: that one is another visitor's,
    and its log lines are not this request's."""
    app, seen = answering(PUBLIC, (b"X-Request-ID", b"first-visitor"))
    edge = PublicAnswers(app, clock=Clock())
    assert (await get(edge))[1][b"X-Request-ID"] == b"first-visitor"  # Django's, passed on
    mine = (await get(edge, headers=((b"x-request-id", b"mine-1"),)))[1]
    new = (await get(edge))[1]
    assert len(seen) == 1
    assert b"X-Request-ID" not in mine and mine[b"x-request-id"] == b"mine-1"
    assert re.fullmatch(rb"[0-9a-f]{32}", new[b"x-request-id"])


async def test_memory_is_bounded():
    clock = Clock()
    app, seen = answering(PUBLIC)
    edge = PublicAnswers(app, clock=clock, max_answers=3)
    for index in range(3):
        await get(edge, query=b"n=%d" % index)
    clock.now += 10  # all three expired: they make room for the next
    await get(edge, query=b"n=3")
    assert list(edge.answers) == [("/api/leaderboard", b"n=3")]  # and no header varied
    for index in range(4, 7):
        await get(edge, query=b"n=%d" % index)
    assert len(edge.answers) <= 3


async def test_other_kinds_of_connection_pass_through():
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["type"])

    await PublicAnswers(app)({"type": "lifespan"}, None, None)
    assert seen == ["lifespan"]
