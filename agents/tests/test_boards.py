"""The voice-agent boards: a vote moves the online Elo at once, and a rating run rates the
agents by name, across architectures and within one."""

from __future__ import annotations

import pytest
from django.test import Client

from agents.boards import AGENT_BOARD, ARCHITECTURE_BOARDS
from agents.models import AgentBattle, AgentConfiguration, AgentVote, Provider, Scenario
from agents.signals import agent_vote_recorded
from leaderboard.models import RunTrigger, SnapshotEntry
from leaderboard.pages.selectors import online_elo_map
from leaderboard.runs.services import debounce_clear, ratings_run
from testkit.ratings import quiet_rating_runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def trio(monkeypatch):
    from agents.library import library_load

    library_load()
    runs = quiet_rating_runs(monkeypatch)
    configs = [AgentConfiguration.objects.create(slug=f"agent-{n}", name=f"Agent {n}",
                                                 provider=Provider.ECHO,
                                                 architecture_type=arch)
               for n, arch in (("one", "cascade"), ("two", "cascade"), ("three", "s2s"))]
    return configs, runs


def _voted(a, b, overall: str) -> AgentVote:
    battle = AgentBattle.objects.create(session_key="s", scenario=Scenario.objects.first(),
                                        config_a=a, config_b=b, status="voted")
    return AgentVote.objects.create(battle=battle, session_key="s", overall=overall)


def test_the_boards_are_the_seeds(trio):
    assert AGENT_BOARD.name == "agent"
    assert [b.name for b in ARCHITECTURE_BOARDS] == ["agent-cascade"]


def test_a_vote_moves_the_online_elo_of_the_right_boards(trio, django_capture_on_commit_callbacks):
    (one, two, three), runs = trio
    for name in ("agent", "agent-cascade"):  # an earlier test's vote may have scheduled one
        debounce_clear(board_name=name)
    for a, b in ((one, two), (one, three)):
        with django_capture_on_commit_callbacks(execute=True):
            vote = _voted(a, b, "a")
            agent_vote_recorded.send(sender=AgentVote, vote=vote)
    overall, cascade = online_elo_map(board="agent"), online_elo_map(board="agent-cascade")
    assert overall["agent-one"] > max(overall["agent-two"], overall["agent-three"])
    assert set(cascade) == {"agent-one", "agent-two"}  # the s2s battle is not within-type
    assert ("agent",) in runs and ("agent-cascade",) in runs


def test_a_rating_run_rates_agents_by_name(trio):
    (one, two, three), _runs = trio
    for a, b, overall in ((one, two, "a"), (one, two, "a"), (two, one, "tie"),
                          (three, one, "b"), (two, three, "a")):
        _voted(a, b, overall)
    exported = list(AGENT_BOARD.export_rows())
    assert [(r["model_a"], r["model_b"], r["winner"]) for r in exported][:3] == [
        ("agent-one", "agent-two", "model_a"), ("agent-one", "agent-two", "model_a"),
        ("agent-two", "agent-one", "tie")]
    assert str(AgentBattle.objects.get(pk=exported[0]["battle_id"]).pk) == exported[0][
        "battle_id"]
    run = ratings_run(trigger=RunTrigger.COMMAND, boards=["agent", "agent-cascade"])
    assert run.status == "succeeded", run.error
    entries = {e.subject: e for e in SnapshotEntry.objects.filter(snapshot__board="agent")}
    assert set(entries) == {"agent-one", "agent-two", "agent-three"}
    assert entries["agent-one"].name == "Agent one"
    assert entries["agent-one"].organization.startswith("Echo")
    assert entries["agent-one"].rating > entries["agent-three"].rating
    page = Client().get("/leaderboard/?board=agent")
    assert page.status_code == 200 and b"Agent one" in page.content
    assert b'href="/models/agent-one/"' not in page.content  # agents have no model page


def test_a_flagged_visitors_votes_leave_the_boards_and_the_cap_holds(trio, settings):
    """The platform's vote-integrity rules on voice votes: an A-clicker is flagged, their
    votes are kept but leave every board's outcomes; votes past the daily cap never count."""
    from agents.integrity import COUNTED_VOTES
    from arena.contests.flags import OVER_DAILY_CAP

    (one, two, three), _runs = trio
    settings.ARENA_INTEGRITY_MIN_VOTES = 20
    pairs = [(one, two), (two, three), (three, one)]
    for i in range(21):
        a, b = pairs[i % 3]
        vote = _voted(a, b, "a")
        AgentVote.objects.filter(pk=vote.pk).update(session_key="a-clicker")
    honest = _voted(two, one, "b")
    assert len(list(AGENT_BOARD.export_rows())) == 22
    assert COUNTED_VOTES.sweep() == {"flagged": 1, "votes_marked": 21}
    kept = AgentVote.objects.filter(session_key="a-clicker")
    assert kept.count() == 21 and not kept.filter(counts_for_rating=True).exists()
    assert kept.first().exclusion_reason.startswith("visitor flagged: same side: a in 21")
    rows = list(AGENT_BOARD.export_rows())
    assert [r["battle_id"] for r in rows] == [str(honest.battle_id)]
    assert AGENT_BOARD.counts()["votes"] == 1
    assert AGENT_BOARD.outcome_from_signal(vote=kept.first()) is None  # no online Elo move

    settings.ARENA_COUNTED_VOTES_PER_DAY = 1
    assert COUNTED_VOTES.eligibility(session_key="s", voter="") == {
        "counts_for_rating": False, "exclusion_reason": OVER_DAILY_CAP.format(cap=1)}
    assert COUNTED_VOTES.eligibility(session_key="someone-new", voter="") == {}
