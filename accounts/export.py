"""Everything the arena keeps tied to a person, as one JSON document (``GET /me/export``,
``GET /api/me/export``).

The account (e-mail addresses, the provider accounts' ids and what the provider sent at
sign-in, when it was made), what staff decided about it, every mode's contests (a text
battle with its prompts and answers), votes, debate points and wagers, the API tokens'
names and prefixes (never their digests) and the sign-ins' times (never the session keys:
they are credentials). Nothing is left out for length: it is the person's own data.
"""

from __future__ import annotations

from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.utils import timezone

from accounts.models import SignIn
from accounts.selectors import (
    panel_rows,
    thread_rows,
    token_list_for,
    voice_rows,
    vote_rows,
)
from accounts.services import profile_of
from agents.models import AgentBattle
from battles.models import Battle
from debates.crowd import points_of
from debates.models import Debate, Topic

FORMAT = "arena-personal-export/1"
EVERYTHING = 10**9  # the selectors' limit, lifted


def _battles(key: str) -> list[dict]:
    battles = (Battle.objects.filter(session_key=key).select_related("vote")
               .prefetch_related("turns__responses").order_by("created_at"))
    out = []
    for battle in battles:
        vote = getattr(battle, "vote", None)
        out.append({
            "id": str(battle.pk), "thread_id": str(battle.thread_id), "title": battle.title,
            "created_at": battle.created_at,
            # The models once voted (the vote revealed them), as the battle's page does.
            "models": [vote.model_a_id, vote.model_b_id] if vote else None,
            "turns": [{"prompt": turn.prompt, "created_at": turn.created_at,
                       "answers": {r.slot: r.text for r in turn.responses.all()}}
                      for turn in sorted(battle.turns.all(), key=lambda t: t.index)],
        })
    return out


def _debates(key: str) -> list[dict]:
    debates = Debate.objects.filter(session_key=key).select_related("topic").order_by(
        "created_at")
    return [{"id": str(d.pk), "motion": d.topic.motion, "status": d.status,
             "rounds": d.rounds, "created_at": d.created_at} for d in debates]


def _voice(key: str) -> list[dict]:
    rows = voice_rows(key, limit=EVERYTHING)
    conversations = {}
    for battle in AgentBattle.objects.filter(session_key=key).prefetch_related(
            "conversations"):
        conversations[str(battle.pk)] = [
            {"agent": c.agent_label, "status": c.status, "transcript": c.transcript_full,
             "turns": c.turns_json, "duration_seconds": c.duration_seconds}
            for c in battle.conversations.all()]
    return [{**row, "conversations": conversations.get(row["id"], [])} for row in rows]


def personal_export(*, user) -> dict:
    profile = profile_of(user)
    key = profile.visitor_key
    threads, _total = thread_rows(key, limit=EVERYTHING)
    return {
        "format": FORMAT,
        "exported_at": timezone.now(),
        "account": {
            "email": user.email,
            "joined": user.date_joined,
            "last_login": user.last_login,
            "email_addresses": list(EmailAddress.objects.filter(user=user).values(
                "email", "verified", "primary")),
            "provider_accounts": list(SocialAccount.objects.filter(user=user).values(
                "provider", "uid", "date_joined", "last_login", "extra_data")),
            "flagged": profile.flagged, "banned": profile.banned,
            "banned_at": profile.banned_at,
        },
        "sign_ins": list(SignIn.objects.filter(user=user).order_by("created_at").values(
            "created_at")),
        "tokens": token_list_for(user=user),
        "battles": _battles(key),
        "sessions": threads,
        "panels": panel_rows(key, limit=EVERYTHING),
        "debates": _debates(key),
        "proposed_motions": list(Topic.objects.filter(proposed_by=key).values(
            "motion", "category", "is_approved", "created_at")),
        "voice_battles": _voice(key),
        "votes": vote_rows(key, limit=EVERYTHING),
        "debate_points": points_of(key),
    }
