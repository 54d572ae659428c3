"""Static files are served by WhiteNoise while every other request stays asynchronous."""

import logging

import pytest
from django.core.handlers.asgi import ASGIHandler
from django.test import AsyncClient, override_settings


def test_no_middleware_makes_the_async_chain_synchronous(caplog):
    # Django logs each middleware it has to adapt; a sync-only one (WhiteNoise's own) would
    # push every request, static or not, through a thread and back.
    with caplog.at_level(logging.DEBUG, logger="django.request"), override_settings(DEBUG=True):
        ASGIHandler().load_middleware(is_async=True)
    adapted = [r.getMessage() for r in caplog.records if "adapted" in r.getMessage()]
    assert adapted == []


@pytest.mark.django_db
async def test_a_static_file_is_served_on_the_async_path():
    response = await AsyncClient().get("/static/js/battle.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert b"BroadcastChannel" in b"".join(response.streaming_content)


@pytest.mark.django_db
async def test_an_unknown_static_path_falls_through_to_django():
    response = await AsyncClient().get("/static/js/no-such-file.js")
    assert response.status_code == 404
