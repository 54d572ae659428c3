"""Sessions are issued by the server, never accepted from the client (issue 33, finding 5).

The attack: a visitor's browser is made to carry a cookie the attacker chose (a shared
computer, a subdomain that sets cookies, a link through a tool that takes cookies). Before,
any value of eight characters or more became the visitor's session as it was, so the attacker,
holding the same value, read the visitor's prompts, voted in their name and spent their
debate points. Now an unknown key is no session: the first write gets a key of the server's
own (Set-Cookie), and nothing written under the planted value is shown to anyone who sends it.
"""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client, RequestFactory

from arena.asgi import application
from arena.sessions import SessionStore, session_key_for, session_rotate
from battles.models import Thread
from battles.tests.factories import BattleFactory, ThreadFactory
from testkit.visitors import visitor_session_key

pytestmark = pytest.mark.django_db

PLANTED = "plantedbyanattacker0123456789abc"  # 32 characters, as the server's own keys
COOKIE = settings.SESSION_COOKIE_NAME


def carrying(key: str) -> Client:
    client = Client()
    client.cookies[COOKIE] = key
    return client


def post(client: Client, url: str, payload: dict):
    return client.post(url, data=json.dumps(payload), content_type="application/json")


def test_a_planted_key_is_replaced_by_an_issued_one_on_the_first_write():
    victim = carrying(PLANTED)
    created = post(victim, "/api/sessions", {"title": "my private worries"})
    assert created.status_code == 201, created.content
    issued = created.cookies[COOKIE].value
    assert issued and issued != PLANTED
    assert Session.objects.filter(session_key=issued).exists()
    assert Thread.objects.get().session_key == issued
    # The victim's browser now holds the issued key and sees its session...
    assert victim.get("/api/sessions").json()["count"] == 1
    # ...and the attacker, holding the value they planted, sees nothing of it.
    attacker = carrying(PLANTED)
    listed = attacker.get("/api/sessions")
    assert listed.json() == {"user_id": None, "sessions": [], "count": 0, "total": 0,
                             "limit": 20, "offset": 0}
    thread_id = created.json()["session_id"]
    assert attacker.get(f"/api/sessions/{thread_id}").status_code == 404
    assert "my private worries" not in attacker.get("/battle/").content.decode()


def test_rows_written_under_a_key_the_server_never_issued_are_nobodys():
    """Rows already written under a planted value (before this fix) stay out of reach."""
    thread = ThreadFactory(session_key=PLANTED, title="written under the planted value")
    BattleFactory(session_key=PLANTED, thread=thread)
    holder = carrying(PLANTED)
    assert holder.get("/api/sessions").json()["count"] == 0
    assert holder.get("/api/battles").json() == {"battles": []}
    assert holder.get(f"/api/sessions/{thread.pk}").status_code == 404


def test_a_read_with_a_planted_key_sets_no_cookie_and_creates_no_session():
    reader = carrying(PLANTED)
    answer = reader.get("/api/sessions")
    assert answer.status_code == 200
    assert not Session.objects.exists()
    assert answer.cookies.get(COOKIE) is None or answer.cookies[COOKIE].value == ""


def test_an_issued_key_is_kept_as_it_is():
    key = visitor_session_key()
    visitor = carrying(key)
    created = post(visitor, "/api/sessions", {"title": "mine"})
    assert created.status_code == 201
    assert COOKIE not in created.cookies  # nothing to change
    assert Thread.objects.get().session_key == key


def test_the_store_vets_a_key_the_first_time_it_is_read():
    assert SessionStore(PLANTED).session_key is None
    assert SessionStore("short").session_key is None  # Django's own rule: under 8 characters
    key = visitor_session_key()
    assert SessionStore(key).session_key == key


def test_session_key_for_never_returns_a_planted_key():
    request = RequestFactory().get("/", HTTP_COOKIE=f"{COOKIE}={PLANTED}")
    request.session = SessionStore(PLANTED)
    assert session_key_for(request, create=False) is None
    issued = session_key_for(request)
    assert issued and issued != PLANTED


def test_signing_in_rotates_the_key_and_keeps_the_visitors_rows():
    """What an account's login calls: the key the visitor had before (possibly known to
    someone else) stops working, and the visitor keeps every row it owned."""
    old = visitor_session_key()
    thread = ThreadFactory(session_key=old)
    battle = BattleFactory(session_key=old, thread=thread)
    request = RequestFactory().post("/login")
    request.session = SessionStore(old)
    new = session_rotate(request)
    assert new != old and request.session.session_key == new
    assert not Session.objects.filter(session_key=old).exists()
    assert Session.objects.filter(session_key=new).exists()
    battle.refresh_from_db()
    thread.refresh_from_db()
    assert battle.session_key == new and thread.session_key == new
    assert carrying(old).get("/api/sessions").json()["count"] == 0
    assert carrying(new).get("/api/sessions").json()["count"] == 1


@pytest.mark.django_db(transaction=True)
async def test_a_socket_with_a_planted_key_is_refused():
    battle = await sync_to_async(BattleFactory)(session_key=PLANTED,
                                                thread__session_key=PLANTED)
    communicator = WebsocketCommunicator(
        application, f"/ws/battles/{battle.pk}/",
        headers=[(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1"),
                 (b"cookie", f"{COOKIE}={PLANTED}".encode())])
    connected, code = await communicator.connect()
    try:
        assert not connected and code == 4404
    finally:
        await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/api/models", 200),  # never reads the session
    ("GET", "/", 200),  # a page
    ("GET", "/api/sessions", 200),  # reads it in a thread
])
async def test_under_daphnes_handler_a_planted_key_costs_no_query_on_the_event_loop(
        method, path, status):
    """The middleware's hooks run on the event loop (arena.middleware.OnTheLoop): a session
    nothing read must not be vetted there (Django raises SynchronousOnlyOperation: a 500)."""
    from channels.testing import HttpCommunicator

    communicator = HttpCommunicator(application, method, path, headers=[
        (b"host", b"127.0.0.1"), (b"cookie", f"{COOKIE}={PLANTED}".encode())])
    answer = await communicator.get_response(timeout=30)
    assert answer["status"] == status, answer["body"][:500]


def test_djangos_own_login_rotates_the_key_and_keeps_the_visitors_rows(django_user_model):
    old = visitor_session_key()
    ThreadFactory(session_key=old, title="before signing in")
    person = carrying(old)
    person.force_login(django_user_model.objects.create_user("pat", password="pw-123456"))
    new = person.cookies[COOKIE].value
    assert new != old
    assert [s["title"] for s in person.get("/api/sessions").json()["sessions"]] == [
        "before signing in"]
    assert carrying(old).get("/api/sessions").json()["count"] == 0


def test_a_planted_key_neither_votes_nor_wagers_in_the_visitors_name():
    from debates.models import CrowdVote, PointsAccount
    from debates.tests.debate_support import debate_row

    debate = debate_row()
    victim = carrying(PLANTED)
    voted = post(victim, "/api/debate/vote", {"debate_id": str(debate.pk), "choice": "pro",
                                              "wager": 300})
    assert voted.status_code == 200, voted.content
    issued = voted.cookies[COOKIE].value
    assert CrowdVote.objects.get().session_key == issued != PLANTED
    assert not PointsAccount.objects.filter(session_key=PLANTED).exists()
    seen = carrying(PLANTED).get(f"/api/debates/{debate.pk}").json()
    assert seen["your_vote"] is None and seen["your_points"] is None
    assert victim.get(f"/api/debates/{debate.pk}").json()["your_points"] == 700
