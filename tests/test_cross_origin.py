"""Cross-origin writes are refused by every JSON API (issue 33, finding 6).

The attack: a page on another origin makes the visitor's browser send a write with the
visitor's cookies. A ``text/plain`` body is a "simple" request, sent without asking the
server first; the page forms were safe (Django's CSRF check), the JSON API took it, and only
the cookie's SameSite=Lax stood in the way (no help from a sibling subdomain, which is the
same site). Now a write needs JSON (else 415) and either an Origin (or Referer) of the site
itself or of ``CORS_ORIGINS``, or the CSRF token (else 403): one check for every write of
every API (:func:`arena.api.answer_errors_as_detail`).
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from arena.api import BODY_NOT_OBJECT
from arena.api_writes import CROSS_SITE_WRITE, NOT_JSON
from battles.models import Thread
from tests.writes import EVIL, OWN, TOKEN, WRITES, send, session_create

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("make", WRITES)
def test_a_text_plain_write_from_another_origin_changes_nothing(visitor, make):
    client, key = visitor
    write = make(key)
    answer = send(client, write, content_type="text/plain", Origin=EVIL)
    assert answer.status_code == 403, answer.content
    assert answer.json()["detail"] == CROSS_SITE_WRITE
    assert not write.happened()


@pytest.mark.parametrize("make", WRITES)
def test_a_json_write_from_another_origin_changes_nothing(visitor, make):
    client, key = visitor
    write = make(key)
    answer = send(client, write, Origin=EVIL)
    assert answer.status_code == 403 and not write.happened()


@pytest.mark.parametrize("make", WRITES)
def test_a_write_with_neither_origin_nor_token_is_refused(visitor, make):
    client, key = visitor
    write = make(key)
    assert send(client, write).status_code == 403 and not write.happened()


@pytest.mark.parametrize("make", WRITES)
def test_a_same_origin_write_that_is_not_json_is_a_415(visitor, make):
    client, key = visitor
    write = make(key)
    answer = send(client, write, content_type="text/plain", Origin=OWN)
    if write.body:
        assert answer.status_code == 415, answer.content
        assert answer.json()["detail"] == NOT_JSON
        assert not write.happened()


@pytest.mark.parametrize("make", WRITES)
def test_a_write_from_the_sites_own_pages_is_taken(visitor, make):
    client, key = visitor
    write = make(key)
    answer = send(client, write, Origin=OWN)
    assert answer.status_code in (200, 201), answer.content
    assert write.happened()


@pytest.mark.parametrize("make", WRITES)
def test_a_write_with_the_csrf_token_is_taken(visitor, make):
    client, key = visitor
    client.cookies[settings.CSRF_COOKIE_NAME] = TOKEN
    write = make(key)
    answer = send(client, write, X_CSRFToken=TOKEN)
    assert answer.status_code in (200, 201), answer.content
    assert write.happened()


def test_a_wrong_csrf_token_is_refused(visitor):
    client, key = visitor
    client.cookies[settings.CSRF_COOKIE_NAME] = TOKEN
    write = session_create(key)
    assert send(client, write, X_CSRFToken="b" * 32).status_code == 403
    assert not write.happened()


def test_a_same_origin_referer_is_enough_without_an_origin(visitor):
    client, key = visitor
    write = session_create(key)
    assert send(client, write, Referer=f"{OWN}/battle/").status_code == 201
    other = session_create(key)
    Thread.objects.all().delete()
    assert send(client, other, Referer=f"{EVIL}/page").status_code == 403
    assert not other.happened()


def test_an_origin_listed_in_cors_origins_may_write(visitor, settings):
    settings.CORS_ALLOWED_ORIGINS = ["https://front.example"]
    client, key = visitor
    write = session_create(key)
    answer = send(client, write, Origin="https://front.example")
    assert answer.status_code == 201, answer.content


def test_reads_need_neither(visitor):
    client, _ = visitor
    assert client.get("/api/sessions", headers={"Origin": EVIL}).status_code == 200


@pytest.mark.parametrize("body", ["[null, null]", "[]", "1", '"text"', "null", "true"])
def test_a_body_that_is_not_an_object_is_a_422(visitor, body):
    """Before, ``[null, null]`` was read as ``{}``: a debate started with every default."""
    client, _ = visitor
    answer = client.post("/api/debate/run", data=body, content_type="application/json",
                         headers={"Origin": OWN})
    assert answer.status_code == 422, answer.content
    assert answer.json()["detail"] == BODY_NOT_OBJECT


@pytest.mark.parametrize("content_type", ["", "text/plain", "application/x-www-form-urlencoded"])
def test_a_json_body_without_the_json_content_type_is_a_415(visitor, content_type):
    client, key = visitor
    write = session_create(key)
    answer = client.generic("POST", write.url, json.dumps(write.body), content_type=content_type,
                            headers={"Origin": OWN})
    assert answer.status_code == 415 and not write.happened()
