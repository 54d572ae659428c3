"""The voice-agent boards (seed 002): ``agent`` rates every voted battle across
architectures; ``agent-<architecture>`` rates the battles whose two agents share that
architecture (seed 002's within-type rating). Subjects are agent configurations (by slug).

The architecture boards are those of the agents in ``fixtures/voice/agents.yaml`` (a board
registers at start-up, before the database is read).
"""

from __future__ import annotations

import yaml
from django.db.models import Case, CharField, Value, When

from agents.library import VOICE_FIXTURES
from agents.models import AgentBattle, AgentConfiguration, AgentVote, Architecture
from agents.signals import agent_vote_recorded
from leaderboard.boards import Board, Subject, register_board

PAIR = {"model_a": "battle__config_a__slug", "model_b": "battle__config_b__slug"}
WINNER = Case(When(overall="a", then=Value("model_a")), When(overall="b", then=Value("model_b")),
              default=Value("tie"), output_field=CharField())


def _fixture_architectures() -> list[str]:
    agents = yaml.safe_load((VOICE_FIXTURES / "agents.yaml").read_text())["agents"]
    return sorted({a.get("architecture", "cascade") for a in agents})


def _subjects(keys: list[str]) -> dict[str, Subject]:
    return {c.slug: Subject(key=c.slug, name=c.name, organization=c.get_provider_display())
            for c in AgentConfiguration.objects.filter(slug__in=keys)}


def _board(name: str, title: str, description: str, order: int,
           architecture: str | None = None, **sections: str) -> Board:
    votes = AgentVote.objects.filter(counts_for_rating=True)
    if architecture is not None:
        votes = votes.filter(battle__config_a__architecture_type=architecture,
                             battle__config_b__architecture_type=architecture)

    def outcome_from_signal(*, vote: AgentVote, **_kwargs):
        if not vote.counts_for_rating:
            return None
        battle = vote.battle
        a, b = battle.config_a, battle.config_b
        if architecture is not None and not (
                a.architecture_type == b.architecture_type == architecture):
            return None
        return a.slug, b.slug, vote.winner, vote.created_at

    return register_board(Board.from_queryset(
        votes.annotate(winner=WINNER), pair=PAIR, name=name, title=title,
        description=description, contests=AgentBattle.objects.all(),
        export={"battle_id": "battle_id"}, subjects=_subjects,
        signal=agent_vote_recorded, outcome_from_signal=outcome_from_signal, order=order,
        play=("Start a voice battle", "/voice/"), **sections))


AGENT_BOARD = _board(
    "agent", "Voice agents",
    "Each voice battle's overall vote (A, B or tie) between its two agents, across "
    "architectures, rated with Bradley–Terry.", 40,
    section="agents.win_rates.board_section", model_section="agents.win_rates.model_section")
ARCHITECTURE_BOARDS = [
    _board(f"agent-{arch.replace('_', '-')}", f"Voice agents: {arch.replace('_', ' ')}",
           f"Voice battles between two {Architecture(arch).label} agents only.", 41 + i,
           architecture=arch)
    for i, arch in enumerate(_fixture_architectures())
]
