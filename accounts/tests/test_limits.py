"""Limits per person and per address: seed 004's hourly allowance, debates an hour, and the
votes a day that count for ratings, a signed-in person's counted by their account however
and wherever they come from."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.models import Profile
from accounts.tests.support import person, sign_in
from accounts.tokens import token_create
from arena.contests.flags import OVER_DAILY_CAP
from battles.models import Vote
from battles.tests.factories import answered_battle
from debates.models import CrowdVote, Debate, DebateStatus, DebateTurn
from debates.tests.debate_support import debate_row

pytestmark = pytest.mark.django_db


def post(client: Client, url: str, payload: dict, **headers):
    return client.post(url, json.dumps(payload), content_type="application/json", **headers)


def from_address(ip: str, **extra) -> Client:
    return Client(REMOTE_ADDR=ip, **extra)


def signed_in_from(ip: str) -> Client:
    client = from_address(ip)
    sign_in(client)
    return client


def script_from(ip: str, user) -> Client:
    """A client sending one of ``user``'s API tokens, and no cookie."""
    _, secret = token_create(user, f"script at {ip}")
    return from_address(ip, HTTP_AUTHORIZATION=f"Bearer {secret}")


def account_key_of(user) -> str:
    return Profile.objects.get_or_create(user=user)[0].visitor_key


class TestRequestsPerHour:
    def test_an_anonymous_address_gets_its_allowance_then_a_429_saying_when(self, settings):
        settings.ARENA_ANON_REQUESTS_PER_HOUR = 3
        client = from_address("198.51.100.1")
        assert [client.get("/api/models").status_code for _ in range(3)] == [200] * 3
        refused = client.get("/api/models")
        assert refused.status_code == 429
        wait = int(refused["Retry-After"])
        assert 1 <= wait <= 3600
        assert refused.json() == {"detail": f"Too many requests: at most 3 per hour. Try "
                                            f"again in {refused['Retry-After']} s."}
        # A new cookie-less client from the address is the same address.
        assert from_address("198.51.100.1").get("/api/sessions").status_code == 429
        assert from_address("198.51.100.2").get("/api/models").status_code == 200

    def test_a_seed_path_and_a_page_form_write_count_pages_and_health_checks_do_not(
            self, settings):
        settings.ARENA_ANON_REQUESTS_PER_HOUR = 2
        client = from_address("198.51.100.3")
        assert client.get("/battles/00000000-0000-0000-0000-000000000000").status_code == 404
        for url in ("/", "/battle/", "/healthz", "/api/health", "/static/css/arena.css"):
            client.get(url)
        assert client.post("/panel/", {"question": "Why?"}).status_code != 429
        page = client.post("/panel/", {"question": "Why?"})
        assert page.status_code == 429
        assert "Too many requests: at most 2 per hour" in page.content.decode()
        assert page["Retry-After"]
        fragment = client.post("/panel/", {"question": "Why?"}, HTTP_HX_REQUEST="true")
        assert fragment.status_code == 429
        assert fragment.content.decode().startswith('<div class="alert error"')
        assert client.get("/api/models").status_code == 429
        assert client.get("/api/health").status_code == 200

    def test_a_person_is_counted_by_account_not_by_address(self, settings):
        settings.ARENA_ANON_REQUESTS_PER_HOUR = 2
        settings.ARENA_PERSON_REQUESTS_PER_HOUR = 4
        user = person()
        browser = signed_in_from("198.51.100.4")
        # More than the address's anonymous allowance: the person's own.
        assert [browser.get("/api/sessions").status_code for _ in range(3)] == [200] * 3
        # One allowance over every browser and script of theirs, wherever they are.
        script = script_from("203.0.113.9", user)
        assert script.get("/api/sessions").status_code == 200
        refused = script.get("/api/sessions")
        assert refused.status_code == 429 and "at most 4 per hour" in refused.json()["detail"]
        assert signed_in_from("192.0.2.1").get("/api/sessions").status_code == 429
        # The address the person used keeps its own anonymous allowance.
        assert from_address("198.51.100.4").get("/api/sessions").status_code == 200

    def test_a_client_named_for_raised_limits_still_gets_more(self, settings):
        settings.ARENA_ANON_REQUESTS_PER_HOUR = 1
        settings.ARENA_RATE_LIMIT_RAISED_FOR = "127.0.0.2/32"
        settings.ARENA_RATE_LIMIT_RAISED_MULTIPLIER = 3
        load = [from_address("127.0.0.2").get("/api/models").status_code for _ in range(4)]
        assert load == [200] * 3 + [429]
        public = [from_address("127.0.0.3").get("/api/models").status_code for _ in range(2)]
        assert public == [200, 429]

    def test_the_voice_pages_progress_poll_is_not_counted(self, settings):
        settings.ARENA_ANON_REQUESTS_PER_HOUR = 1
        client = from_address("198.51.100.6")
        poll = "/battles/00000000-0000-0000-0000-000000000000/agent-metrics"
        assert {client.get(poll).status_code for _ in range(5)} == {404}
        assert client.get("/api/models").status_code == 200
        assert client.get("/api/models").status_code == 429

    def test_zero_counts_nothing(self, settings):
        settings.ARENA_ANON_REQUESTS_PER_HOUR = 0
        client = from_address("198.51.100.5")
        assert {client.get("/api/models").status_code for _ in range(5)} == {200}


class TestPerMinuteAndDebates:
    def test_a_persons_debates_an_hour_are_counted_by_account(self, settings):
        settings.ARENA_DEBATES_PER_HOUR = 5
        settings.ARENA_PERSON_DEBATES_PER_HOUR = 1
        user = person()
        bad = {"rounds": 99}  # refused by the service: counted all the same
        assert post(script_from("203.0.113.1", user), "/api/debate/run", bad).status_code == 400
        refused = post(signed_in_from("203.0.113.2"), "/api/debate/run", bad)
        assert refused.status_code == 429
        assert "at most 1 per hour" in refused.json()["detail"]
        # Anonymous visitors have theirs.
        anonymous = from_address("203.0.113.1")
        assert [post(anonymous, "/api/debate/run", bad).status_code
                for _ in range(2)] == [400, 400]

    def test_a_persons_writes_a_minute_are_one_allowance_over_browser_and_token(
            self, settings):
        settings.ARENA_PANELS_PER_MINUTE = 1
        user = person()
        first = post(script_from("203.0.113.3", user), "/api/panel/run", {"question": "Why?"})
        assert first.status_code != 429
        again = post(signed_in_from("203.0.113.4"), "/api/panel/run", {"question": "Why?"})
        assert again.status_code == 429


def votable_debates(count: int) -> list[Debate]:
    first = debate_row()
    more = []
    for _ in range(count - 1):
        debate = Debate.objects.create(
            topic=first.topic, model_a=first.model_a, model_b=first.model_b,
            persona_a=first.persona_a, persona_b=first.persona_b, model_a_position="pro",
            status=DebateStatus.IN_PROGRESS, judge_model=first.model_a)
        DebateTurn.objects.create(debate=debate, round=1, position="pro",
                                  speaker=first.model_a, speech="An opening.")
        more.append(debate)
    return [first, *more]


class TestCountedVotesADay:
    """Three votes of one person from three addresses (so no address reaches the cap): a
    signed-in browser, a script with a token, another browser."""

    def voters(self, user) -> list[Client]:
        return [signed_in_from("192.0.2.10"), script_from("192.0.2.11", user),
                signed_in_from("192.0.2.12")]

    def test_text_battle_votes_past_the_cap_are_kept_and_do_not_count(self, settings):
        settings.ARENA_COUNTED_VOTES_PER_DAY = 2
        user = person()
        battles = [answered_battle(session_key=account_key_of(user)) for _ in range(3)]
        for client, battle in zip(self.voters(user), battles, strict=True):
            answer = post(client, f"/api/battles/{battle.pk}/vote", {"vote": "tie"})
            assert answer.status_code == 200, answer.content
        votes = [Vote.objects.get(battle=battle) for battle in battles]
        assert [v.counts_for_rating for v in votes] == [True, True, False]
        assert votes[2].exclusion_reason == OVER_DAILY_CAP.format(cap=2)
        # Another person's first vote counts.
        other = person("bob@example.com")
        theirs = answered_battle(session_key=account_key_of(other))
        post(script_from("192.0.2.10", other), f"/api/battles/{theirs.pk}/vote",
             {"vote": "tie"})
        assert Vote.objects.get(battle=theirs).counts_for_rating

    def test_debate_votes_past_the_cap_are_kept_and_do_not_count(self, settings):
        settings.ARENA_COUNTED_VOTES_PER_DAY = 2
        user = person()
        debates = votable_debates(3)
        for client, debate in zip(self.voters(user), debates, strict=True):
            answer = post(client, "/api/debate/vote",
                          {"debate_id": str(debate.pk), "choice": "pro"})
            assert answer.status_code == 200, answer.content
        votes = [CrowdVote.objects.get(debate=debate) for debate in debates]
        assert {v.session_key for v in votes} == {account_key_of(user)}
        assert [v.counts_for_rating for v in votes] == [True, True, False]
        assert votes[2].exclusion_reason == OVER_DAILY_CAP.format(cap=2)

    def test_a_cap_of_zero_caps_nothing(self, settings):
        settings.ARENA_COUNTED_VOTES_PER_DAY = 0
        user = person()
        script = script_from("192.0.2.13", user)
        for battle in [answered_battle(session_key=account_key_of(user)) for _ in range(3)]:
            assert post(script, f"/api/battles/{battle.pk}/vote",
                        {"vote": "tie"}).status_code == 200
        assert set(Vote.objects.values_list("counts_for_rating", flat=True)) == {True}
