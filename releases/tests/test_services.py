"""release_build: every mode's counted votes, text only by consent and redacted, Parquet and
CSV alike, a datasheet, checksums; one release per date."""

from __future__ import annotations

import csv
import hashlib
import json
from datetime import UTC, date, datetime, time, timedelta
from unittest.mock import patch

import pyarrow.parquet as pq
import pytest
from django.test import Client
from django.utils import timezone

from agents.services import agent_battle_vote
from arena.errors import RuleError
from battles.models import Vote
from battles.tests.factories import AIModelFactory, vote_on
from debates.crowd import debate_vote
from debates.models import CrowdVote
from panels.models import Panel, PanelJudgement, PanelOutcome, PanelStatus
from releases.identifiers import contest_key
from releases.models import Release
from releases.redaction import EMAIL, PHONE
from releases.schema import CATEGORIES
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
    shared_id, private_id = contest_key("battle", shared.pk), contest_key("battle", private.pk)
    debate_id, voice_id = contest_key("debate", debate.pk), contest_key("voice", voice.pk)
    assert set(rows) == {shared_id, private_id, debate_id, voice_id}
    assert contest_key("battle", never_voted.pk) not in rows  # only voted contests
    assert release.counts["modes"] == {"battle": 2, "debate": 1, "voice": 1}

    published = rows[shared_id]
    assert published["mode"] == "battle" and published["board"] == "text"
    assert published["voter"] == "human" and published["turns"] == 1
    assert published["synthetic"] is False
    conversation = json.loads(published["conversation_a"])
    assert conversation[0] == {"role": "user",
                               "content": f"Mail me at {EMAIL} or call {PHONE}."}
    assert conversation[1] == {"role": "assistant", "content": "answer a1"}
    assert "jo.doe" not in release_dir(release.date).joinpath(CSV).read_text()
    assert rows[private_id]["conversation_a"] == ""
    assert rows[private_id]["publish_text"] is False
    assert rows[private_id]["winner"] == "tie"
    # The prompt is in both sides' conversations: redacted in each.
    assert release.counts["redacted"] == {"email": 2, "phone": 2, "key": 0}

    crowd = rows[debate_id]
    assert (crowd["board"], crowd["model_a"], crowd["winner"]) == ("debate-crowd", "row-a",
                                                                    "model_a")
    assert "This house would ban cars" in crowd["conversation_a"]
    assert rows[voice_id]["winner"] == "model_b"
    assert rows[voice_id]["conversation_a"] == ""


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
    assert [r["contest_id"] for r in _rows(release)] == [contest_key("battle", counted.pk)]
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


def _at_noon_yesterday(queryset) -> None:
    queryset.update(created_at=timezone.now().replace(hour=12, minute=0)
                    - timedelta(days=1))


def test_a_complete_day_is_released_once_and_a_later_vote_does_not_change_it():
    key = visitor(Client())
    vote_on(text_battle(key), choice="left_better")
    _at_noon_yesterday(Vote.objects.all())
    yesterday = timezone.now().date() - timedelta(days=1)
    first, made = release_build(day=yesterday)
    files = {f["name"]: f["sha256"] for f in first.files}
    late = vote_on(text_battle(key), choice="tie")
    _at_noon_yesterday(Vote.objects.filter(pk=late.pk))
    again, made_again = release_build(day=yesterday)
    assert made and not made_again and again.pk == first.pk and again.votes == 1
    assert {f["name"]: f["sha256"] for f in again.files} == files
    assert Release.objects.count() == 1


def test_a_day_released_while_under_way_is_made_whole_by_the_nightly_job():
    from releases.tasks import release_previous_day

    key = visitor(Client())
    vote_on(text_battle(key), choice="left_better")
    partial, _ = release_build()  # today, cut now
    today = partial.date
    end_of_day = datetime.combine(today + timedelta(days=1), time.min, tzinfo=UTC)
    assert partial.votes == 1 and partial.period_end < end_of_day
    vote_on(text_battle(key), choice="tie")  # later the same day

    with patch("django.utils.timezone.now", return_value=end_of_day + timedelta(minutes=15)):
        release_previous_day()
        whole = Release.objects.get(date=today)
        assert whole.pk == partial.pk and whole.votes == 2
        assert whole.period_end == end_of_day
        assert len(_rows(whole)) == 2
        files = whole.files
        again, made = release_build(day=today)  # now complete: it stays
    assert not made and again.files == files


def test_a_debate_that_ended_after_the_cut_is_not_in_an_earlier_day():
    debate = finished_debate()
    debate_vote(debate_id=debate.pk, session_key="viewer-3", choice="pro")
    _at_noon_yesterday(CrowdVote.objects.all())
    complete(debate)  # ended today, after yesterday's cut
    yesterday = timezone.now().date() - timedelta(days=1)
    old, _ = release_build(day=yesterday)
    assert old.votes == 0
    assert old.counts["removed"]["debate-crowd"][
        "the debate was still running (its viewers are blind)"] == 1
    today, _ = release_build()
    assert [r["contest_id"] for r in _rows(today)] == [contest_key("debate", debate.pk)]


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
    assert (row["contest_id"], row["winner"]) == (contest_key("panel", done.pk), "model_b")
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


def test_debates_panels_and_calls_carry_the_language_and_categories_of_what_was_asked():
    key = visitor(Client())
    debate = finished_debate()  # "This house would ban cars from city centres"
    debate_vote(debate_id=debate.pk, session_key="viewer-1", choice="con")
    complete(debate)
    voice = talked_voice_battle(key, caller="Bonjour, je voudrais réserver une coupe de "
                                            "cheveux demain à dix heures, s'il vous plaît.")
    agent_battle_vote(battle_id=voice.pk, session_key=key, overall="a")
    alpha, beta = AIModelFactory(slug="lang-alpha"), AIModelFactory(slug="lang-beta")
    panel = Panel.objects.create(status=PanelStatus.DONE, question=(
        "Write a Python function that returns the prime factors of a number."))
    judgement = PanelJudgement.objects.create(panel=panel, judge=alpha)
    PanelOutcome.objects.create(judgement=judgement, panel=panel, judge=alpha, model_a=alpha,
                                model_b=beta, winner="model_a", is_self_vote=False)

    release, _ = release_build()
    rows = {row["mode"]: row for row in _rows(release)}
    assert (rows["debate"]["language"], rows["panel"]["language"]) == ("en", "en")
    assert rows["voice"]["language"] == "fr"  # what the caller said
    assert rows["panel"]["coding"] is True and rows["panel"]["creative_writing"] is False
    assert not any(rows["debate"][name] for name in CATEGORIES)
    assert not any(rows["voice"][name] for name in CATEGORIES)
