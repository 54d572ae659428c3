"""release_build: every mode's counted votes, text only by consent and redacted, Parquet and
CSV alike, a datasheet, checksums; one release per date."""

from __future__ import annotations

import csv
import hashlib
import json
from datetime import date, timedelta

import pyarrow.parquet as pq
import pytest
from django.test import Client
from django.utils import timezone

from agents.services import agent_battle_vote
from arena.errors import RuleError
from battles.models import Vote
from battles.tests.factories import vote_on
from debates.crowd import debate_vote
from releases.models import Release
from releases.redaction import EMAIL, PHONE
from releases.selectors import release_dir
from releases.services import CSV, FUTURE_DATE, PARQUET, release_build

from .support import (
    SECRET_PROMPT,
    complete,
    finished_debate,
    talked_voice_battle,
    text_battle,
    visitor,
)

pytestmark = pytest.mark.django_db


def _rows(release: Release) -> list[dict]:
    return pq.read_table(release_dir(release.date) / PARQUET).to_pylist()


def test_a_release_holds_every_modes_counted_votes_and_text_only_by_consent():
    key = visitor(Client())
    shared = text_battle(key, prompt=SECRET_PROMPT)
    private = text_battle(key, prompt="Keep this one to myself.")
    never_voted = text_battle(key, prompt="Nobody voted on me.")
    vote_on(shared, choice="left_better", publish_text=True)
    vote_on(private, choice="tie")
    debate = finished_debate()
    debate_vote(debate_id=debate.pk, session_key="viewer-1", choice="pro", publish_text=True)
    complete(debate)
    voice = talked_voice_battle(key)
    agent_battle_vote(battle_id=voice.pk, session_key=key, overall="b")

    release, made = release_build()
    assert made
    rows = {row["contest_id"]: row for row in _rows(release)}
    assert set(rows) == {str(shared.pk), str(private.pk), str(debate.pk), str(voice.pk)}
    assert str(never_voted.pk) not in rows  # only voted contests
    assert release.counts["modes"] == {"battle": 2, "debate": 1, "voice": 1}

    published = rows[str(shared.pk)]
    assert published["mode"] == "battle" and published["board"] == "text"
    assert published["voter"] == "human" and published["turns"] == 1
    assert published["synthetic"] is False
    conversation = json.loads(published["conversation_a"])
    assert conversation[0] == {"role": "user",
                               "content": f"Mail me at {EMAIL} or call {PHONE}."}
    assert conversation[1] == {"role": "assistant", "content": "answer a1"}
    assert "jo.doe" not in release_dir(release.date).joinpath(CSV).read_text()
    assert rows[str(private.pk)]["conversation_a"] == ""
    assert rows[str(private.pk)]["publish_text"] is False
    assert rows[str(private.pk)]["winner"] == "tie"
    # The prompt is in both sides' conversations: redacted in each.
    assert release.counts["redacted"] == {"email": 2, "phone": 2, "key": 0}

    crowd = rows[str(debate.pk)]
    assert (crowd["board"], crowd["model_a"], crowd["winner"]) == ("debate-crowd", "row-a",
                                                                    "model_a")
    assert "This house would ban cars" in crowd["conversation_a"]
    assert rows[str(voice.pk)]["winner"] == "model_b"
    assert rows[str(voice.pk)]["conversation_a"] == ""


def test_a_demo_battles_vote_is_marked_synthetic():
    key = visitor(Client())
    vote_on(text_battle(key, is_demo=True), choice="left_better")
    release, _ = release_build()
    [row] = _rows(release)
    assert row["synthetic"] is True


def test_votes_that_do_not_count_are_left_out_and_the_datasheet_says_why():
    key = visitor(Client())
    counted, flagged = text_battle(key), text_battle(key)
    vote_on(counted, choice="left_better")
    vote_on(flagged, choice="right_better")
    Vote.objects.filter(battle=flagged).update(counts_for_rating=False,
                                               exclusion_reason="flagged: always left")
    running = finished_debate()
    debate_vote(debate_id=running.pk, session_key="viewer-2", choice="con")

    release, _ = release_build()
    assert [r["contest_id"] for r in _rows(release)] == [str(counted.pk)]
    assert release.counts["removed"]["text"] == {"flagged": 1}
    assert release.counts["removed"]["debate-crowd"][
        "the debate was still running (its viewers are blind)"] == 1
    assert "| text | flagged | 1 |" in release.datasheet
    assert "Licence:** CC BY 4.0" in release.datasheet


def test_parquet_csv_and_checksums_agree():
    key = visitor(Client())
    for _ in range(3):
        vote_on(text_battle(key), choice="left_better", publish_text=True)
    release, _ = release_build()
    folder = release_dir(release.date)
    parquet = _rows(release)
    with (folder / CSV).open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [r["id"] for r in rows] == [r["id"] for r in parquet]
    assert rows[0]["coding"] in ("true", "false") and rows[0]["publish_text"] == "true"
    sums = dict(line.split("  ")[::-1] for line in
                (folder / "SHA256SUMS").read_text().splitlines())
    for described in release.files:
        data = (folder / described["name"]).read_bytes()
        assert described["size"] == len(data)
        assert described["sha256"] == hashlib.sha256(data).hexdigest()
        if described["name"] != "SHA256SUMS":
            assert sums[described["name"]] == described["sha256"]


def test_a_date_is_released_once_and_a_later_vote_does_not_change_it():
    key = visitor(Client())
    vote_on(text_battle(key), choice="left_better")
    first, made = release_build()
    files = {f["name"]: f["sha256"] for f in first.files}
    vote_on(text_battle(key), choice="tie")
    again, made_again = release_build()
    assert made and not made_again and again.pk == first.pk and again.votes == 1
    assert {f["name"]: f["sha256"] for f in again.files} == files
    assert Release.objects.count() == 1


def test_a_past_date_holds_the_votes_before_its_end_and_a_future_date_is_refused():
    key = visitor(Client())
    vote_on(text_battle(key), choice="left_better")
    yesterday = timezone.now().date() - timedelta(days=1)
    old, _ = release_build(day=yesterday)
    assert old.votes == 0 and old.period_start is None
    assert "(no votes)" in old.datasheet
    tomorrow = date.today() + timedelta(days=2)
    with pytest.raises(RuleError) as caught:
        release_build(day=tomorrow)
    assert caught.value.message == FUTURE_DATE.format(today=timezone.now().date())
    assert not release_dir(tomorrow).exists()


def test_a_finished_panels_ai_judgements_are_a_board_of_their_own_without_text():
    from battles.tests.factories import AIModelFactory
    from panels.models import Panel, PanelJudgement, PanelOutcome, PanelStatus

    alpha, beta = AIModelFactory(slug="p-alpha"), AIModelFactory(slug="p-beta")
    done = Panel.objects.create(status=PanelStatus.DONE, question="Private question?")
    running = Panel.objects.create(status=PanelStatus.JUDGING, question="Another one?")
    for panel in (done, running):
        judgement = PanelJudgement.objects.create(panel=panel, judge=alpha)
        PanelOutcome.objects.create(judgement=judgement, panel=panel, judge=alpha,
                                    model_a=alpha, model_b=beta, winner="model_b",
                                    is_self_vote=True)
    release, _ = release_build()
    [row] = _rows(release)
    assert (row["board"], row["mode"], row["voter"], row["judge"]) == ("panel", "panel", "ai",
                                                                       "p-alpha")
    assert (row["contest_id"], row["winner"]) == (str(done.pk), "model_b")
    assert row["conversation_a"] == "" and "Private question" not in release.datasheet
    assert release.counts["removed"]["panel"]["the panel was still running"] == 1


def test_the_daily_task_releases_the_day_that_ended_and_is_scheduled():
    from arena.celery import app
    from releases.tasks import release_previous_day

    release_previous_day()
    yesterday = timezone.now().date() - timedelta(days=1)
    assert list(Release.objects.values_list("date", flat=True)) == [yesterday]
    app.loader.import_default_modules()
    app.finalize()
    assert app.conf.beat_schedule["releases-daily"]["task"] == "releases.tasks.release_previous_day"
