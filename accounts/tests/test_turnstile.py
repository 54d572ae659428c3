"""The human check before a vote (Cloudflare Turnstile), against a local fake siteverify:
off by default; when on, asked only of flagged voters (or busy ones), verified server-side,
remembered in the session; a refused token or an unreachable siteverify records nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.test import Client

from agents.models import AgentVote
from arena.contests.human_check import (
    HUMAN_CHECK_FAILED,
    HUMAN_CHECK_NEEDED,
    HUMAN_CHECK_UNAVAILABLE,
)
from arena.models import VisitorFlag
from battles.models import Vote
from debates.models import CrowdVote
from releases.tests.support import finished_debate, talked_voice_battle, text_battle, visitor
from testkit.fake_turnstile import FakeTurnstile
from testkit.ratings import quiet_rating_runs

pytestmark = pytest.mark.django_db

SECRET = "0x4AAAAAAA-test-secret"  # noqa: S105 - the fake's own
SITE_KEY = "0x4AAAAAAA-test-site-key"


@pytest.fixture(autouse=True)
def _no_debounced_runs(monkeypatch):
    quiet_rating_runs(monkeypatch)


@pytest.fixture
def turnstile(settings):
    with FakeTurnstile(secret=SECRET, good={"good-1", "good-2"}) as fake:
        settings.ARENA_TURNSTILE_SITE_KEY = SITE_KEY
        settings.ARENA_TURNSTILE_SECRET_KEY = SECRET
        settings.ARENA_TURNSTILE_VERIFY_URL = fake.verify_url
        yield fake


def flagged_visitor() -> tuple[Client, str]:
    client = Client()
    key = visitor(client)
    VisitorFlag.objects.create(mode="battles", visitor=f"session:{key}",
                               reason="same side: left in 40 of 40 decisive votes")
    return client, key


def vote(client: Client, key: str, token: str | None = None):
    battle = text_battle(key)
    headers = {"X-Turnstile-Token": token} if token else {}
    return battle, client.post(f"/api/battles/{battle.pk}/vote", {"vote": "left_better"},
                               content_type="application/json", headers=headers)


def test_off_by_default_a_flagged_visitor_votes_as_before(settings):
    assert settings.ARENA_TURNSTILE_SITE_KEY == "" and settings.ARENA_TURNSTILE_SECRET_KEY == ""
    client, key = flagged_visitor()
    battle, answer = vote(client, key)
    assert answer.status_code == 200, answer.content
    assert Vote.objects.filter(battle=battle).exists()
    page = client.get("/battle/").content.decode()
    assert "challenges.cloudflare.com" not in page and "human-check" not in page


def test_a_visitor_the_flags_do_not_mark_is_not_asked(turnstile):
    client = Client()
    key = visitor(client)
    _, answer = vote(client, key)
    assert answer.status_code == 200
    assert turnstile.requests == []


def test_a_flagged_visitor_is_asked_and_nothing_is_recorded(turnstile):
    client, key = flagged_visitor()
    battle, answer = vote(client, key)
    assert (answer.status_code, answer.json()) == (428, {"detail": HUMAN_CHECK_NEEDED})
    assert not Vote.objects.filter(battle=battle).exists()
    page = client.get("/battle/").content.decode()  # the page can show the widget
    assert f'data-site-key="{SITE_KEY}"' in page
    assert "https://challenges.cloudflare.com/turnstile/v0/api.js" in page


def test_a_good_token_passes_and_the_pass_is_remembered_in_the_session(turnstile):
    client, key = flagged_visitor()
    battle, answer = vote(client, key, token="good-1")
    assert answer.status_code == 200, answer.content
    assert Vote.objects.filter(battle=battle).exists()
    asked = turnstile.requests[0]
    assert asked == {"secret": SECRET, "response": "good-1", "remoteip": "127.0.0.1"}
    # The next vote, without a token, is not asked again: the session remembers the pass.
    second, answer = vote(client, key)
    assert answer.status_code == 200
    assert len(turnstile.requests) == 1
    assert Vote.objects.filter(battle=second).exists()


def test_a_pass_expires(turnstile, settings):
    settings.ARENA_HUMAN_CHECK_VALID_SECONDS = -1  # already past when remembered
    client, key = flagged_visitor()
    assert vote(client, key, token="good-1")[1].status_code == 200
    assert vote(client, key)[1].status_code == 428


def test_a_bad_token_is_refused_with_cloudflares_error_and_nothing_is_recorded(turnstile):
    client, key = flagged_visitor()
    battle, answer = vote(client, key, token="forged")
    assert answer.status_code == 403
    assert answer.json() == {"detail": HUMAN_CHECK_FAILED.format(codes="invalid-input-response")}
    assert not Vote.objects.filter(battle=battle).exists()
    # A token used once already is refused as Cloudflare refuses it.
    assert vote(client, key, token="good-1")[1].status_code == 200
    other, other_key = flagged_visitor()
    _, again = vote(other, other_key, token="good-1")
    assert again.status_code == 403 and "timeout-or-duplicate" in again.json()["detail"]


@pytest.mark.parametrize("fault", ["500", "down"])
def test_siteverify_unreachable_is_a_503_to_retry_and_the_vote_can_be_sent_again(turnstile,
                                                                                   fault):
    client, key = flagged_visitor()
    battle = text_battle(key)

    def send(token):
        return client.post(f"/api/battles/{battle.pk}/vote", {"vote": "right_better"},
                           content_type="application/json", headers={"X-Turnstile-Token": token})

    if fault == "500":
        turnstile.failing = 500
    else:
        turnstile.stop()
    answer = send("good-1")
    assert answer.status_code == 503
    assert answer.json() == {"detail": HUMAN_CHECK_UNAVAILABLE}
    assert answer["Retry-After"] == "30"
    assert not Vote.objects.filter(battle=battle).exists()
    if fault == "down":
        return
    turnstile.failing = 0
    answer = send("good-1")  # the same vote, once siteverify answers
    assert answer.status_code == 200
    assert Vote.objects.get(battle=battle).choice == "right_better"


def test_a_wrong_secret_is_the_arenas_fault_not_the_visitors(turnstile, settings):
    settings.ARENA_TURNSTILE_SECRET_KEY = "not-the-secret"
    client, key = flagged_visitor()
    _, answer = vote(client, key, token="good-1")
    assert answer.status_code == 503


def test_a_busy_voter_is_asked_past_the_setting(turnstile, settings):
    settings.ARENA_HUMAN_CHECK_AFTER_VOTES = 2
    client = Client()
    key = visitor(client)
    assert vote(client, key)[1].status_code == 200
    assert vote(client, key)[1].status_code == 200
    assert vote(client, key)[1].status_code == 428


def test_every_modes_vote_asks_a_flagged_voter(turnstile):
    client, key = flagged_visitor()
    debate = finished_debate()
    answer = client.post("/api/debate/vote", {"debate_id": str(debate.pk), "choice": "pro"},
                         content_type="application/json")
    assert answer.status_code == 428
    assert not CrowdVote.objects.exists()
    page = client.post(f"/debates/{debate.pk}/vote/", {"choice": "pro"},
                       headers={"HX-Request": "true"})
    assert page.status_code == 428 and HUMAN_CHECK_NEEDED in page.content.decode()
    assert not CrowdVote.objects.exists()
    voice = talked_voice_battle(key)
    answer = client.post(f"/battles/{voice.pk}/vote", {"overall": "a"},
                         content_type="application/json")
    assert answer.status_code == 428, answer.content
    assert not AgentVote.objects.exists()
    answer = client.post("/api/debate/vote", {"debate_id": str(debate.pk), "choice": "pro"},
                         content_type="application/json", headers={"X-Turnstile-Token": "good-2"})
    assert answer.status_code == 200
    assert CrowdVote.objects.get().choice == "pro"


def test_the_content_security_policy_allows_cloudflare_only_when_the_check_is_on():
    code = ("import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', "
            "'arena.settings'); from django.conf import settings; "
            "d = settings.CONTENT_SECURITY_POLICY['DIRECTIVES']; "
            "print(d['script-src'], d.get('frame-src'))")

    def policy(**env) -> str:
        return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                              capture_output=True, text=True, check=True).stdout

    assert "cloudflare" not in policy(ARENA_TURNSTILE_SITE_KEY="", ARENA_TURNSTILE_SECRET_KEY="")
    on = policy(ARENA_TURNSTILE_SITE_KEY=SITE_KEY, ARENA_TURNSTILE_SECRET_KEY=SECRET)
    assert on.count("https://challenges.cloudflare.com") == 2
