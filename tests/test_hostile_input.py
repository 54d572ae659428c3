"""Input that cannot hurt: what no database stores is a 400 naming the field, a body past the
documented size a JSON 413, a body nobody can parse a JSON 400, and arbitrary Unicode, sizes
and shapes thrown at every write endpoint never give a 5xx (on whichever database the suite
runs: SQLite locally, PostgreSQL in CI)."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from battles.models import Battle, Thread
from testkit.contract import no_step_unfinished
from testkit.waiting import wait_for

pytestmark = pytest.mark.django_db

SURROGATE = '"hi \\ud800 there"'  # a lone high surrogate, as JSON's escape carries it
NUL = '"a\\u0000b"'

# Each write endpoint with the text field a person types (None: no free text).
TEXT_ENDPOINTS = [
    ("/api/battles", "prompt"),
    ("/api/panel/run", "question"),
    ("/api/sessions", "title"),
    ("/api/debate/run", "motion"),
]


def post_raw(client: Client, url: str, body: str | bytes,
             content_type: str = "application/json"):
    return client.post(url, data=body, content_type=content_type)


@pytest.fixture
def visitor(two_models) -> Client:
    return Client()


@pytest.mark.parametrize(("url", "field"), TEXT_ENDPOINTS)
@pytest.mark.parametrize(("raw", "what"), [(SURROGATE, "surrogate"), (NUL, "NUL byte")])
def test_unstorable_text_is_a_400_naming_the_field(visitor, url, field, raw, what):
    response = post_raw(visitor, url, f'{{"{field}": {raw}}}')
    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    assert field in detail and what in detail
    assert not Battle.objects.exists() and not Thread.objects.exists()


def test_a_follow_up_with_a_surrogate_is_refused_and_the_battle_kept(visitor, celery_worker):
    created = post_raw(visitor, "/api/battles", json.dumps({"prompt": "Name a colour."}))
    assert created.status_code == 200, created.content
    battle_id = created.json()["battle_id"]
    response = post_raw(visitor, f"/api/battles/{battle_id}/messages", f'{{"prompt": {SURROGATE}}}')
    assert response.status_code == 400
    assert "prompt" in response.json()["detail"]
    battle = visitor.get(f"/api/battles/{battle_id}").json()
    assert [m["prompt"] for m in battle["messages"]] == ["Name a colour."]


def test_the_page_form_refuses_a_nul_byte_and_says_why(visitor):
    response = visitor.post("/battle/", {"prompt": "hello\x00world"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    assert "NUL byte" in response.content.decode()
    assert not Battle.objects.exists()


def test_a_nested_key_is_named_where_it_is(visitor):
    body = '{"models": ["ok", "bad \\udfff"], "question": "Why is the sky blue?"}'
    response = post_raw(visitor, "/api/panel/run", body)
    assert response.status_code == 400
    assert "models[1]" in response.json()["detail"]


def test_a_body_past_the_limit_is_a_json_413(visitor, settings):
    huge = json.dumps({"prompt": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})
    response = post_raw(visitor, "/api/battles", huge)
    assert response.status_code == 413
    assert f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes" in response.json()["detail"]
    assert not Battle.objects.exists()


@pytest.mark.parametrize(("body", "content_type"), [
    (b"--x\r\nContent-Disposition: form-data; name=prompt\r\n\r\nhi\r\n--x--",
     "multipart/form-data"),  # no boundary in the header
    (b"\xff\xfe not utf-8", "application/json"),
    (b"{\"prompt\": ", "application/json"),
])
def test_a_body_nobody_can_parse_is_a_json_400(visitor, body, content_type):
    response = post_raw(visitor, "/api/battles", body, content_type)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["detail"]


def test_a_form_body_is_a_json_415(visitor):
    response = post_raw(visitor, "/api/battles", b"prompt=hi", "application/x-www-form-urlencoded")
    assert response.status_code == 415 and response.json()["detail"]


# --- Property: arbitrary shapes never give a 5xx ----------------------------------------------

# Every code point, surrogates and NUL included; long strings now and then.
any_text = st.text(st.characters(codec=None, blacklist_categories=()), max_size=40) | st.text(
    st.characters(codec=None), min_size=2_000, max_size=40_000)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=10)
WRITE_BODIES = {
    "/api/battles": ["prompt"],
    "/api/sessions": ["title"],
    "/api/panel/run": ["question", "models"],
    "/api/debate/run": ["motion", "topic_id", "model_a", "persona_a", "rounds"],
    "/api/debate/vote": ["debate_id", "choice", "wager"],
    "/battles/generate": ["battle_type"],
}


def bodies(fields: list[str]):
    shaped = st.fixed_dictionaries({}, optional=dict.fromkeys(fields, json_values))
    return (shaped.map(lambda d: json.dumps(d).encode())
            | json_values.map(lambda v: json.dumps(v).encode())
            | st.binary(max_size=64))


UNLIMITED = ["ARENA_WRITES_PER_MINUTE", "ARENA_PROVIDER_CALLS_PER_MINUTE",
             "ARENA_BATTLES_PER_MINUTE", "ARENA_PANELS_PER_MINUTE", "ARENA_DEBATES_PER_HOUR",
             "ARENA_DEBATE_REQUESTS_PER_HOUR", "ARENA_VOICE_BATTLES_PER_HOUR"]


@pytest.mark.parametrize("url", list(WRITE_BODIES))
def test_arbitrary_bodies_never_give_a_5xx(url, two_models, fake_openai, celery_worker,
                                           settings):
    for name in UNLIMITED:  # a 429 would hide what a body does past the limit
        setattr(settings, name, 0)
    fake_openai.token_delay = 0
    client = Client()

    @given(body=bodies(WRITE_BODIES[url]))
    @hypothesis_settings(max_examples=40, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(HealthCheck))
    def never_a_server_error(body: bytes) -> None:
        response = client.post(url, data=body, content_type="application/json")
        # 503: nothing can take it now (no debate library, no voice agents here).
        assert response.status_code < 500 or response.status_code == 503, (
            response.status_code, response.content[:300], body[:200])
        assert response["Content-Type"].startswith("application/json"), response.content[:200]
        if response.status_code >= 400:
            assert isinstance(response.json()["detail"], str)

    never_a_server_error()
    # What the bodies started ends before the test does (no flush under a running step).
    wait_for(no_step_unfinished, timeout=120, what="the steps the bodies started")


# Form fields cannot carry surrogates (a form is UTF-8 bytes); NUL and the rest they can.
form_text = st.text(st.characters(codec="utf-8"), max_size=60) | st.text(
    st.characters(codec="utf-8"), min_size=30_000, max_size=31_000)
own_topic = st.just("own") | form_text
PAGE_FORMS = {
    "/battle/": {"prompt": form_text},
    "/panel/": {"question": form_text, "models": form_text, "clarify": st.just("on"),
                "action": st.just("generate") | form_text},
    "/debates/new/": {"topic": own_topic, "motion": form_text, "model_a": form_text,
                      "persona_a": form_text, "rounds": form_text, "word_limit": form_text},
}


@pytest.mark.parametrize("url", list(PAGE_FORMS))
def test_arbitrary_page_forms_never_give_a_5xx(url, two_models, fake_openai, celery_worker,
                                               settings):
    for name in UNLIMITED:
        setattr(settings, name, 0)
    fake_openai.token_delay = 0
    client = Client()

    @given(form=st.fixed_dictionaries({}, optional=PAGE_FORMS[url]),
           htmx=st.booleans())
    @hypothesis_settings(max_examples=30, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(HealthCheck))
    def never_a_server_error(form: dict, htmx: bool) -> None:
        headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
        response = client.post(url, form, **headers)
        assert response.status_code < 500 or response.status_code == 503, (
            response.status_code, response.content[-500:], form)

    never_a_server_error()
    wait_for(no_step_unfinished, timeout=120, what="the steps the forms started")


# --- What no database can even be asked about: paths, query strings, forms, cookies --------

@pytest.mark.parametrize(("path", "named"), [
    ("/api/leaderboard?search=a%00b", "query parameter 'search'"),
    ("/api/debates?model=%00", "query parameter 'model'"),
    ("/models/a%00b/", "address"),
])
def test_a_nul_byte_in_an_address_or_a_query_is_a_400_naming_it(visitor, path, named):
    response = visitor.get(path, HTTP_ACCEPT="application/json")
    assert response.status_code == 400
    assert named in response.json()["detail"] and "NUL byte" in response.json()["detail"]


def test_a_nul_byte_in_a_form_field_is_a_400_page_naming_it(visitor):
    response = visitor.post("/debates/new/", {"topic": "own", "model_a": "x\x00"})
    assert response.status_code == 400
    assert "The field &#x27;model_a&#x27; contains a NUL byte" in response.content.decode()


def test_a_cookie_holding_a_nul_byte_is_ignored(visitor, settings):
    visitor.cookies[settings.SESSION_COOKIE_NAME] = "\x00" * 32
    assert visitor.get("/battle/").status_code == 200
    created = post_raw(visitor, "/api/sessions", json.dumps({"title": "fresh"}))
    assert created.status_code == 201  # a new session, not a lookup of the bad one
