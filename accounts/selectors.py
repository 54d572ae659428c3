"""What a person's profile shows (/me/, ``GET /api/me``): their contests and votes in every
mode, their debate points and wagers, their API tokens.

Every mode's rows are owned by a ``session_key`` column; a signed-in person's rows are kept
under their Profile's ``visitor_key``. Each mode's own selectors are used where they answer
the question (a visitor's battles and sessions); the rest are plain reads of the visitor's
own rows. Nothing here names a model of a contest that is still blind: a text battle's
models appear only with its vote, a debate's and a voice battle's not at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from accounts.models import ApiToken, Profile
from accounts.services import profile_of
from agents.models import AgentBattle, AgentVote
from arena.contests.voting import Winner
from battles.models import Vote
from battles.selectors import battle_list_for_session, thread_list_for_session
from debates.crowd import points_of
from debates.models import CrowdVote, Debate
from panels.models import Panel

LIST_LIMIT = 50  # of each kind, latest first, on the page and in GET /api/me


@dataclass(frozen=True)
class Me:
    """The profile, as dicts ready for a template and for JSON."""

    account: dict
    battles: list[dict]
    threads: list[dict]
    thread_total: int
    panels: list[dict]
    debates: list[dict]
    voice_battles: list[dict]
    votes: dict[str, list[dict]]
    points: int
    wagers: list[dict]
    tokens: list[dict]

    def as_json(self) -> dict:
        return {
            "account": self.account,
            "battles": self.battles,
            "sessions": {"total": self.thread_total, "items": self.threads},
            "panels": self.panels,
            "debates": self.debates,
            "voice_battles": self.voice_battles,
            "votes": self.votes,
            "points": self.points,
            "wagers": self.wagers,
            "tokens": self.tokens,
        }


def account_summary(user, profile: Profile) -> dict:
    return {"email": user.email, "joined": profile.created_at,
            "providers": sorted(user.socialaccount_set.values_list("provider", flat=True))}


def token_list_for(*, user) -> list[dict]:
    """The person's API tokens as the profile lists them: never the digest."""
    return [{"id": str(t.id), "name": t.name, "prefix": t.prefix, "created_at": t.created_at,
             "last_used_at": t.last_used_at, "revoked_at": t.revoked_at}
            for t in ApiToken.objects.filter(user=user).order_by("-created_at")]


def battle_rows(key: str, *, limit: int = LIST_LIMIT) -> list[dict]:
    rows = []
    for battle in battle_list_for_session(session_key=key, limit=limit):
        vote = getattr(battle, "vote", None)
        rows.append({
            "id": str(battle.pk), "title": battle.title, "created_at": battle.created_at,
            "messages": battle.message_count, "url": f"/battle/{battle.pk}/",
            # The models only once voted: the vote revealed them.
            "voted": vote is not None,
            "models": [vote.model_a_id, vote.model_b_id] if vote else None,
        })
    return rows


def thread_rows(key: str, *, limit: int = LIST_LIMIT) -> tuple[list[dict], int]:
    threads, total = thread_list_for_session(session_key=key, limit=limit)
    return [{"id": str(t.pk), "title": t.title, "battles": t.battle_count,
             "last_active_at": t.last_active_at} for t in threads], total


def panel_rows(key: str, *, limit: int = LIST_LIMIT) -> list[dict]:
    panels = Panel.objects.filter(session_key=key).order_by("-created_at")[:limit]
    return [{"id": str(p.pk), "question": p.question or p.original_question,
             "status": p.status, "created_at": p.created_at, "url": f"/panel/{p.pk}/"}
            for p in panels]


def debate_rows(key: str, *, limit: int = LIST_LIMIT) -> list[dict]:
    debates = (Debate.objects.filter(session_key=key).select_related("topic")
               .order_by("-created_at")[:limit])
    return [{"id": str(d.pk), "motion": d.topic.motion, "status": d.status,
             "created_at": d.created_at, "url": f"/debates/{d.pk}/"} for d in debates]


def voice_rows(key: str, *, limit: int = LIST_LIMIT) -> list[dict]:
    battles = (AgentBattle.objects.filter(session_key=key).select_related("scenario")
               .order_by("-created_at")[:limit])
    return [{"id": str(b.pk), "scenario": b.scenario.name, "status": b.status,
             "created_at": b.created_at, "url": f"/battles/{b.pk}"} for b in battles]


def _pick(vote: Vote) -> str:
    """What the person preferred, in the models' names (the vote revealed them)."""
    if vote.winner == Winner.MODEL_A:
        return vote.model_a.name
    if vote.winner == Winner.MODEL_B:
        return vote.model_b.name
    return Winner(vote.winner).label


def vote_rows(key: str, *, limit: int = LIST_LIMIT) -> dict[str, list[dict]]:
    """The person's votes in every mode that has people's votes (a panel is judged by the
    models themselves), latest first."""
    text = (Vote.objects.filter(session_key=key).select_related("model_a", "model_b")
            .order_by("-created_at")[:limit])
    crowd = (CrowdVote.objects.filter(session_key=key).select_related("debate__topic")
             .order_by("-created_at")[:limit])
    voice = (AgentVote.objects.filter(session_key=key).select_related("battle__scenario")
             .order_by("-created_at")[:limit])
    return {
        "text": [{"battle_id": str(v.battle_id), "choice": v.choice, "winner": v.winner,
                  "models": [v.model_a_id, v.model_b_id], "counts": v.counts_for_rating,
                  "pick": _pick(v), "names": [v.model_a.name, v.model_b.name],
                  "created_at": v.created_at} for v in text],
        "debate": [{"debate_id": str(v.debate_id), "motion": v.debate.topic.motion,
                    "choice": v.choice, "wager": v.wager, "payout": v.payout,
                    "counts": v.counts_for_rating, "created_at": v.created_at}
                   for v in crowd],
        "voice": [{"battle_id": str(v.battle_id), "scenario": v.battle.scenario.name,
                   "overall": v.overall, "counts": v.counts_for_rating,
                   "created_at": v.created_at} for v in voice],
    }


def profile_view(*, user) -> Me:
    profile = profile_of(user)
    key = profile.visitor_key
    threads, thread_total = thread_rows(key)
    votes = vote_rows(key)
    return Me(
        account=account_summary(user, profile),
        battles=battle_rows(key),
        threads=threads,
        thread_total=thread_total,
        panels=panel_rows(key),
        debates=debate_rows(key),
        voice_battles=voice_rows(key),
        votes=votes,
        points=points_of(key),
        wagers=[v for v in votes["debate"] if v["wager"]],
        tokens=token_list_for(user=user),
    )
