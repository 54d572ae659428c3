"""Each saved answer keeps its Markdown style; export_votes writes it per side for
``rate --style-control``."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.core.management import call_command

from arena.markdown import markdown_style
from battles.models import Response, Slot
from battles.tests.factories import ResponseFactory, TurnFactory, answered_battle, vote_on

pytestmark = pytest.mark.django_db

STYLED = "# Plan\n\n- **one**\n- two\n\n```\n# code, not a header\n```"


def test_markdown_style_counts_from_the_parse_not_from_code():
    assert markdown_style(STYLED) == {"headers": 1, "lists": 2, "bold": 1}
    assert markdown_style("") == {"headers": 0, "lists": 0, "bold": 0}


def test_export_writes_each_sides_style_summed_over_the_turns(tmp_path):
    battle = answered_battle()
    turn = TurnFactory(battle=battle, index=2, prompt="more")
    for slot, text, tokens in ((Slot.A, STYLED, 40), (Slot.B, "plain", 5)):
        ResponseFactory(turn=turn, slot=slot, text=text, output_tokens=tokens,
                        **Response.style_fields(text))
    vote_on(battle, choice="left_better")
    out = tmp_path / "votes.csv"
    call_command("export_votes", "--output", str(out), stderr=io.StringIO())
    (row,) = list(csv.DictReader(out.open()))
    # turn 1: 3 tokens a side (the factory), plain text; turn 2 as above.
    assert (row["tokens_a"], row["tokens_b"]) == ("43", "8")
    assert (row["headers_a"], row["lists_a"], row["bold_a"]) == ("1", "2", "1")
    assert (row["headers_b"], row["lists_b"], row["bold_b"]) == ("0", "0", "0")
    from battles.boards import TEXT_BOARD

    scan = TEXT_BOARD.vote_scan()
    assert [scan.subjects[i] for i in (*scan.a, *scan.b)] == [battle.model_a_id,
                                                              battle.model_b_id]
    assert scan.code.tolist() == [0]  # model a won
    assert (scan.style_a.tolist(), scan.style_b.tolist()) == ([[43, 1, 2, 1]], [[8, 0, 0, 0]])
    rated = json.loads(_rate("--input", str(out), "--style-control", "--format", "json"))
    assert {r["model"] for r in rated["ratings"]} == {battle.model_a_id, battle.model_b_id}


def _rate(*args) -> str:
    buffer = io.StringIO()
    call_command("rate", *args, stdout=buffer)
    return buffer.getvalue()


def _styled_battles(n: int = 40):
    """``verbose`` writes long bold lists and wins 3 in 4; ``terse`` writes a line."""
    from battles.tests.factories import AIModelFactory, BattleFactory

    verbose, terse = AIModelFactory(slug="verbose"), AIModelFactory(slug="terse")
    for i in range(n):
        battle = BattleFactory(model_a=verbose, model_b=terse)
        turn = TurnFactory(battle=battle, index=1, prompt=f"q{i}")
        long = "# Answer\n\n" + "\n".join(f"- **point {k}**" for k in range(3 + i % 4))
        ResponseFactory(turn=turn, slot=Slot.A, text=long, output_tokens=200 + 10 * (i % 5),
                        **Response.style_fields(long))
        ResponseFactory(turn=turn, slot=Slot.B, text="Short.", output_tokens=5 + i % 3)
        vote_on(battle, choice="left_better" if i % 4 else "tie")


def test_a_run_fits_the_text_board_with_style_control_too(client):
    from leaderboard.models import BoardSnapshot, RunTrigger
    from leaderboard.runs import services as leaderboard_services

    _styled_battles()
    leaderboard_services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    snap = BoardSnapshot.objects.get(board="text")
    assert [c[0] for c in snap.style_coefficients] == ["tokens", "headers", "lists", "bold"]
    entries = {e.subject: e for e in snap.entries.all()}
    assert all(e.style_rating is not None for e in entries.values())
    plain = client.get("/api/leaderboard").json()
    styled = client.get("/api/leaderboard?style_control=true").json()
    assert plain["metadata"]["style_control"] is False
    assert styled["metadata"]["style_control"] is True
    assert len(styled["metadata"]["style_coefficients"]) == 4
    by_model = {e["model_id"]: e["rating"] for e in styled["leaderboard"]}
    assert by_model["verbose"] == pytest.approx(entries["verbose"].style_rating, abs=0.01)
    assert all(lo <= v <= hi for _, v, lo, hi, _status in snap.style_coefficients)
    page = client.get("/leaderboard/?style=1").content.decode()
    assert 'data-testid="style-control"' in page and "checked" in page.split(
        'data-testid="style-control"')[0].rsplit("<input", 1)[1]
    assert 'data-testid="style-note"' in page
    assert 'data-testid="style-note"' not in client.get("/leaderboard/").content.decode()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_style_switch_on_the_board_page(chromium, asgi_live_server, monkeypatch):
    from playwright.sync_api import expect

    from leaderboard.models import RunTrigger
    from leaderboard.runs import services as leaderboard_services
    from testkit.browser import browser_page

    _styled_battles()
    leaderboard_services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    for width in (1280, 390):
        with browser_page(chromium, asgi_live_server, monkeypatch,
                          viewport={"width": width, "height": 900}) as page:
            page.goto("/leaderboard/")
            expect(page.get_by_test_id("style-note")).to_have_count(0)
            page.get_by_test_id("style-control").check()
            expect(page.get_by_test_id("style-note")).to_contain_text("tokens")
            expect(page).to_have_url(re.compile(r"style=1"))
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            page.screenshot(path=f"/tmp/board-style-{width}.png", full_page=True)


def test_a_board_over_the_style_limit_skips_style_control_and_says_so(settings, caplog):
    from leaderboard.models import BoardSnapshot, RunTrigger
    from leaderboard.runs import services as leaderboard_services

    settings.ARENA_LEADERBOARD_STYLE_MAX_VOTES = 10
    _styled_battles(12)
    with caplog.at_level("INFO", logger="leaderboard.runs.rating"):
        leaderboard_services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    snap = BoardSnapshot.objects.get(board="text")
    assert snap.style_coefficients is None
    assert not snap.entries.filter(style_rating__isnull=False).exists()
    assert "no style control this run" in caplog.text
