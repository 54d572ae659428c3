"""The battles' live figures on the home page."""

import re

import pytest
from django.test import Client

from battles.tests.factories import answered_battle, vote_on


def _figure(html: str, label: str) -> str:
    found = re.search(rf"<dt>{label}</dt>\s*<dd>(?:<a [^>]*>)?([^<]+)", html)
    assert found, f"no figure {label!r}"
    return found.group(1).strip()


@pytest.mark.django_db
def test_home_counts_battles_and_votes(client: Client):
    html = client.get("/").content.decode()
    assert _figure(html, "battles fought") == "0" and _figure(html, "votes cast") == "0"
    voted = answered_battle()
    answered_battle()
    vote_on(voted, choice="left_better")
    html = client.get("/").content.decode()
    assert _figure(html, "battles fought") == "2"
    assert _figure(html, "votes cast") == "1"
    assert _figure(html, "last rating run") == "none yet"
