"""/data/ lists the releases and serves their files; GET /api/data/releases says the same as
JSON; the leaderboard links to the release holding its run's votes; the command."""

from __future__ import annotations

import base64
import hashlib
import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from battles.tests.factories import vote_on
from leaderboard.models import RunTrigger
from leaderboard.runs.services import ratings_run
from releases.management.commands.release_data import BAD_DATE
from releases.models import Release
from releases.selectors import release_dir
from releases.services import release_build

from .support import text_battle, visitor

pytestmark = pytest.mark.django_db


@pytest.fixture
def release():
    key = visitor(Client())
    vote_on(text_battle(key), choice="left_better", publish_text=True)
    vote_on(text_battle(key), choice="tie")
    return release_build()[0]


def test_the_api_lists_releases_with_files_sizes_checksums_and_datasheet(client, release):
    answer = client.get("/api/data/releases")
    assert answer.status_code == 200
    [listed] = answer.json()["releases"]
    assert listed["date"] == release.date.isoformat() and listed["votes"] == 2
    assert listed["counts"]["boards"] == {"text": 2}
    assert [f["name"] for f in listed["files"]] == ["votes.parquet", "votes.csv",
                                                    "datasheet.md", "SHA256SUMS"]
    day = release.date.isoformat()
    for described in listed["files"]:
        assert described["url"] == f"/data/{day}/{described['name']}"
        data = (release_dir(release.date) / described["name"]).read_bytes()
        assert described["size"] == len(data)
        assert described["sha256"] == hashlib.sha256(data).hexdigest()
    assert listed["datasheet"].startswith(f"# Arena votes, release {day}")
    assert listed["datasheet_url"] == f"/data/{day}/datasheet.md"


def test_the_openapi_documents_the_releases(client):
    schema = client.get("/api/openapi.json").json()
    operation = schema["paths"]["/api/data/releases"]["get"]
    assert operation["tags"] == ["data"]
    assert "ReleaseOut" in schema["components"]["schemas"]
    vote_fields = [schema["components"]["schemas"][name]["properties"]
                   for name in ("VoteIn", "DebateVoteIn")]
    voice = client.get("/voice-api/openapi.json").json()["components"]["schemas"]
    vote_fields.append(voice["VoiceVoteIn"]["properties"])
    assert all(fields["publish_text"]["default"] is False for fields in vote_fields)


def test_the_page_lists_each_release_and_its_downloads(client, release):
    page = client.get("/data/")
    assert page.status_code == 200
    html = page.content.decode()
    day = release.date.isoformat()
    assert f'id="release-{day}"' in html
    for described in release.files:
        assert f'href="/data/{day}/{described["name"]}"' in html
        assert described["sha256"] in html
    assert "What was left out, and why" in html  # the datasheet, rendered


@pytest.mark.parametrize(("name", "content_type"), [
    ("votes.parquet", "application/vnd.apache.parquet"),
    ("votes.csv", "text/csv; charset=utf-8"),
    ("datasheet.md", "text/markdown; charset=utf-8"),
    ("SHA256SUMS", "text/plain; charset=utf-8"),
])
def test_downloads_have_their_content_type_and_bytes(client, release, name, content_type):
    answer = client.get(f"/data/{release.date.isoformat()}/{name}")
    assert answer.status_code == 200
    assert answer["Content-Type"] == content_type
    assert "attachment" in answer["Content-Disposition"]
    body = b"".join(answer.streaming_content)
    assert hashlib.sha256(body).hexdigest() == release.file(name)["sha256"]
    digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
    assert answer["Repr-Digest"] == f"sha-256=:{digest}:"


@pytest.mark.parametrize("url", ["/data/2001-01-01/votes.csv", "/data/not-a-date/votes.csv",
                                 "/data/{day}/passwd", "/data/{day}/..%2Fsecret_key"])
def test_unknown_releases_and_files_are_404(client, release, url):
    answer = client.get(url.format(day=release.date.isoformat()))
    assert answer.status_code == 404 and b"Not found" in answer.content


def test_the_page_without_releases_says_so(client):
    page = client.get("/data/")
    assert page.status_code == 200 and b'data-testid="no-releases"' in page.content


def test_the_leaderboard_links_the_release_holding_its_runs_votes(client):
    key = visitor(Client())
    for _ in range(3):
        vote_on(text_battle(key), choice="left_better")
    ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    before = client.get("/leaderboard/?board=text").content.decode()
    assert 'data-testid="release-link"' not in before  # no release holds the run's votes yet
    release, _ = release_build()
    html = client.get("/leaderboard/?board=text").content.decode()
    assert f'href="/data/#release-{release.date.isoformat()}"' in html
    assert "--board text --until" in html


def test_every_board_links_its_release_and_the_rate_hint_only_where_it_reproduces(client):
    from battles.tests.factories import AIModelFactory
    from panels.models import Panel, PanelJudgement, PanelOutcome, PanelStatus

    key = visitor(Client())
    for _ in range(3):
        vote_on(text_battle(key), choice="left_better")
    alpha, beta = AIModelFactory(slug="l-alpha"), AIModelFactory(slug="l-beta")
    panel = Panel.objects.create(status=PanelStatus.DONE, question="Which is larger?")
    judgement = PanelJudgement.objects.create(panel=panel, judge=alpha)
    PanelOutcome.objects.create(judgement=judgement, panel=panel, judge=alpha, model_a=alpha,
                                model_b=beta, winner="model_a", is_self_vote=False)
    ratings_run(trigger=RunTrigger.COMMAND, boards=["text", "panel"])
    release_build()
    text = client.get("/leaderboard/?board=text").content.decode()
    assert 'data-testid="release-link"' in text and "--board text" in text
    html = client.get("/leaderboard/?board=panel").content.decode()
    assert 'data-testid="vote-count"' in html  # rated, and covered by the release
    assert 'data-testid="release-link"' in html and "--board panel" not in html


def test_the_leaderboard_links_the_earliest_release_covering_the_run(client):
    key = visitor(Client())
    for _ in range(3):
        vote_on(text_battle(key), choice="left_better")
    ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    release, _ = release_build()
    later = release.date + timedelta(days=1)
    Release.objects.create(date=later, period_end=release.period_end + timedelta(days=1),
                           datasheet="")
    html = client.get("/leaderboard/?board=text").content.decode()
    assert f'href="/data/#release-{release.date.isoformat()}"' in html
    assert f"release-{later.isoformat()}" not in html


def test_the_command_writes_a_past_day_once_today_again_and_refuses_a_bad_date():
    yesterday = (timezone.now() - timedelta(days=1)).date().isoformat()
    outputs = []
    for args in (("--date", yesterday), ("--date", yesterday), (), ()):
        out = io.StringIO()
        call_command("release_data", *args, stdout=out)
        outputs.append(out.getvalue())
    assert "0 votes, written to" in outputs[0]
    assert "already released" in outputs[1]  # a complete day stays as it is
    assert "written to" in outputs[2] and "written to" in outputs[3]  # today: still partial
    with pytest.raises(CommandError) as caught:
        call_command("release_data", "--date", "26/11/2026", stdout=io.StringIO())
    assert str(caught.value) == BAD_DATE.format(value="26/11/2026")
