"""Each saved answer keeps its Markdown style; export_votes writes it per side for
``rate --style-control``."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

from arena.markdown import markdown_style
from battles import services
from battles.models import Response, Slot
from battles.tests.factories import ResponseFactory, TurnFactory, answered_battle

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
    services.battle_vote(battle=battle, choice="left_better")
    out = tmp_path / "votes.csv"
    call_command("export_votes", "--output", str(out), stderr=io.StringIO())
    (row,) = list(csv.DictReader(out.open()))
    # turn 1: 3 tokens a side (the factory), plain text; turn 2 as above.
    assert (row["tokens_a"], row["tokens_b"]) == ("43", "8")
    assert (row["headers_a"], row["lists_a"], row["bold_a"]) == ("1", "2", "1")
    assert (row["headers_b"], row["lists_b"], row["bold_b"]) == ("0", "0", "0")
    rated = json.loads(_rate("--input", str(out), "--style-control", "--format", "json"))
    assert {r["model"] for r in rated["ratings"]} == {battle.model_a_id, battle.model_b_id}


def _rate(*args) -> str:
    buffer = io.StringIO()
    call_command("rate", *args, stdout=buffer)
    return buffer.getvalue()
