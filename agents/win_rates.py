"""Win rates per voice agent on each dimension of the vote (overall, and seed 002's
naturalness, speed, understanding and helpfulness), from the votes that count for ratings.

An agent's win rate on a dimension is its wins over the votes that judged that dimension in
its battles (a tie is a vote it did not win; ties are counted apart too), with a 95% Wilson
score interval, which stays inside 0–1 and is honest at small n: one win gives 21–100%, not
100%; no vote gives no rate at all. Shown on the voice board (its section), on the page of
the model an agent is built on (``/models/<id>/``), and in the JSON API.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass

from django.db.models import Count, Q
from django.db.models.fields.json import KT

from agents.models import SUB_DIMENSIONS, AgentConfiguration, AgentVote
from arena.contests.proportions import wilson_interval

DIMENSIONS = ("overall", *SUB_DIMENSIONS)
CONFIDENCE = 0.95


@dataclass(frozen=True)
class WinRate:
    dimension: str
    wins: int
    ties: int
    losses: int
    n: int  # the votes on this dimension in the agent's battles
    win_rate: float | None  # None: no vote yet
    ci_lower: float | None
    ci_upper: float | None


@dataclass(frozen=True)
class AgentWinRates:
    agent_id: str  # the configuration's slug
    name: str
    provider: str
    llm: str  # the language model it is built on (a registry model's id for local agents)
    rates: list[WinRate]

    @property
    def votes(self) -> int:
        return next(r.n for r in self.rates if r.dimension == "overall")


def win_rate(dimension: str, wins: int, ties: int, losses: int) -> WinRate:
    n = wins + ties + losses
    if not n:
        return WinRate(dimension, 0, 0, 0, 0, None, None, None)
    low, high = wilson_interval(wins, n)
    return WinRate(dimension, wins, ties, losses, n, round(wins / n, 4),
                   round(low, 4), round(high, 4))


def _tallies() -> dict[str, dict[str, list[int]]]:
    """{agent slug: {dimension: [wins, ties, losses]}} from one GROUP BY over the counted
    votes (pair, overall and each sub-vote)."""
    rows = (AgentVote.objects.filter(counts_for_rating=True)
            .values("battle__config_a__slug", "battle__config_b__slug", "overall",
                    **{d: KT(f"sub_votes_json__{d}") for d in SUB_DIMENSIONS})
            .annotate(n=Count("pk")).order_by())
    tallies: dict = defaultdict(lambda: {d: [0, 0, 0] for d in DIMENSIONS})
    for row in rows:
        sides = {"a": row["battle__config_a__slug"], "b": row["battle__config_b__slug"]}
        for dimension in DIMENSIONS:
            choice = row[dimension]
            if choice not in ("a", "b", "tie"):
                continue  # the voter left this dimension out
            for label, slug in sides.items():
                column = 1 if choice == "tie" else 0 if choice == label else 2
                tallies[slug][dimension][column] += row["n"]
    return tallies


def agent_win_rates(*, llm: str | None = None) -> list[AgentWinRates]:
    """Every active agent and every agent with a counted vote, most voted first; ``llm``:
    only the agents built on that language model."""
    tallies = _tallies()
    agents = AgentConfiguration.objects.filter(Q(active=True) | Q(slug__in=list(tallies)))
    found = []
    for config in agents:
        model = str(config.components_json.get("llm") or config.config_json.get("llm") or "")
        if llm is not None and model != llm:
            continue
        counts = tallies.get(config.slug, {})
        found.append(AgentWinRates(
            config.slug, config.name, config.get_provider_display(), model,
            [win_rate(d, *counts.get(d, (0, 0, 0))) for d in DIMENSIONS]))
    return sorted(found, key=lambda a: (-a.votes, a.name))


def win_rates_payload(agents: list[AgentWinRates]) -> dict:
    return {"dimensions": list(DIMENSIONS), "confidence": CONFIDENCE,
            "agents": [{"agent_id": a.agent_id, "name": a.name, "provider": a.provider,
                        "llm": a.llm, "votes": a.votes,
                        "win_rates": {r.dimension: asdict(r) for r in a.rates}}
                       for a in agents]}


def board_section() -> tuple[str, dict]:
    """The voice board's own section: every agent's win rate on each dimension."""
    return "agents/win_rates.html", {"agents": agent_win_rates(), "dimensions": DIMENSIONS}


def model_section(model_id: str) -> tuple[str, dict, dict] | None:
    """On a registry model's page: the voice agents built on it (None when there is none)."""
    agents = agent_win_rates(llm=model_id)
    if not agents:
        return None
    return ("agents/win_rates.html", {"agents": agents, "dimensions": DIMENSIONS,
                                      "on_model_page": True}, win_rates_payload(agents))
