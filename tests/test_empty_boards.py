"""An empty board sends a person where its votes come from (every empty board offered "Start a
battle" to /battle/, the panel's, the debates' and the voice boards' too)."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("board", "label", "url"), [
    ("text", "Start a battle", "/battle/"), ("panel", "Ask the panel", "/panel/"),
    ("debate-crowd", "Start a debate", "/debates/new/"),
    ("debate-ai", "Start a debate", "/debates/new/"),
    ("agent", "Start a voice battle", "/voice/")])
def test_an_empty_board_sends_a_person_where_its_votes_come_from(board, label, url):
    html = Client().get("/leaderboard/", {"board": board}).content.decode()
    before, after = html.split('data-testid="play"', 1)
    assert f'href="{url}"' in before.rsplit("<a", 1)[1]
    assert after.split("</a>", 1)[0].endswith(label)
