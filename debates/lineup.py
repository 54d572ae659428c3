"""Who and what a new debate gets: its two models, personas and topic (chosen or drawn), its
judges, and the daily spend cap. Problems with a request are collected, so one 400 names them
all (:func:`debates.services.debate_create`)."""

from __future__ import annotations

import random
from datetime import timedelta

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from arena.contests.pairing import pair_pick
from arena.errors import RuleError
from arena.inputs import parse_uuid
from arena.models import AIModel
from arena.selectors import model_list_available
from debates.models import Debate, Persona, Topic
from debates.topics import clean_motion

NOT_ENOUGH_MODELS = ("A debate needs two available models; {count} {verb} available.")
NO_PERSONAS = ("The debate library has fewer than two active personas; an admin can load it "
               "with manage.py load_debate_library.")
SPEND_CAP = ("{model} has spent its debate budget for today (${spent:.2f} of ${cap:.2f}); "
             "try other models or come back after midnight UTC.")


def available_models() -> dict:
    return {m.slug: m for m in model_list_available()}


def debate_pair_pick(model_a: str | None, model_b: str | None, available: dict,
                 problems: list[str], rng: random.Random) -> tuple:
    chosen = []
    for label, slug in (("model_a", model_a), ("model_b", model_b)):
        chosen.append(available.get(slug) if slug else None)
        if slug and slug not in available:
            known = AIModel.objects.filter(pk=slug).exists()
            problems.append(f"{label} {slug!r} is "
                            f"{'not available now' if known else 'not a known model'}")
    if chosen[0] is not None and chosen[1] is not None and chosen[0].pk == chosen[1].pk:
        problems.append("model_a and model_b must be two different models")
    if problems:
        return None, None
    if len(available) < 2:
        raise RuleError(NOT_ENOUGH_MODELS.format(
            count=len(available), verb="is" if len(available) == 1 else "are"), status=503)
    # A model the person named keeps its side; the others are drawn, every pair alike.
    return pair_pick(available.values(), chosen=(chosen[0], chosen[1]), rng=rng)


def pick_personas(persona_a, persona_b, problems: list[str], rng: random.Random) -> tuple:
    active = {str(p.pk): p for p in Persona.objects.filter(is_active=True)}
    chosen = []
    for label, wanted in (("persona_a", persona_a), ("persona_b", persona_b)):
        if not wanted:
            chosen.append(None)
            continue
        persona = active.get(str(wanted)) or next(
            (p for p in active.values() if p.name.lower() == str(wanted).lower()), None)
        if persona is None:
            problems.append(f"{label} {wanted!r} is not an active persona")
        chosen.append(persona)
    if chosen[0] is not None and chosen[0] == chosen[1]:
        problems.append("persona_a and persona_b must be two different personas")
    if problems:
        return None, None
    pool = [p for p in active.values() if p not in chosen]
    rng.shuffle(pool)
    filled = [p if p is not None else pool.pop() if pool else None for p in chosen]
    if None in filled:
        raise RuleError(NO_PERSONAS, status=503)
    return filled[0], filled[1]


def pick_topic(topic_id, motion: str | None, session_key: str, problems: list[str],
                rng: random.Random) -> Topic | None:
    if topic_id and motion:
        problems.append("give a topic or your own motion, not both")
        return None
    if motion is not None:
        try:
            return Topic(motion=clean_motion(motion), category="Proposed", is_approved=False,
                         proposed_by=session_key)
        except RuleError as exc:
            problems.append(exc.message)
            return None
    public = Topic.objects.filter(is_approved=True, retired_at__isnull=True)
    if topic_id:
        topic = public.filter(pk=topic_id).first() if parse_uuid(topic_id) else None
        if topic is None:
            problems.append(f"topic {topic_id!r} is not an open topic")
        return topic
    # Least-used topics first, so the pool is covered evenly.
    fewest = public.order_by("times_used").values_list("times_used", flat=True).first()
    candidates = list(public.filter(times_used=fewest)) if fewest is not None else []
    if not candidates:
        problems.append("there is no open topic; propose a motion")
        return None
    return rng.choice(candidates)


def choose_judge(model_a, model_b, available: dict):  # noqa: ANN001, ANN201 - AIModels
    """The configured judge, else another available model; never a debater (None when every
    available model debates: the debate then has no AI verdict and the crowd decides)."""
    debaters = {model_a.pk, model_b.pk}
    preferred = available.get(settings.ARENA_DEBATE_JUDGE_MODEL)
    if preferred is not None and preferred.pk not in debaters:
        return preferred
    others = sorted((m for m in available.values() if m.pk not in debaters),
                    key=lambda m: (m.is_local, m.slug))
    return others[0] if others else None


def judges_for(debate: Debate) -> list[tuple[str, object]]:
    """The primary judge, a fallback judge and, when configured and available, the
    tiebreaker: none of them a debater (none at all when the debate has no judge)."""
    primary = debate.judge_model
    if primary is None:
        return []
    available = available_models()
    debaters = {debate.model_a_id, debate.model_b_id}
    others = sorted((m for m in available.values()
                     if m.pk != primary.pk and m.pk not in debaters),
                    key=lambda m: (m.is_local, m.slug))
    judges: list[tuple[str, object]] = [("primary", primary)]
    if others:
        judges.append(("fallback", others[0]))
    tiebreaker = available.get(settings.ARENA_DEBATE_TIEBREAKER_MODEL)
    if tiebreaker is not None and tiebreaker.pk not in debaters:
        judges.append(("tiebreaker", tiebreaker))
    return judges


def fact_checker_for(debate: Debate, position: str):  # noqa: ANN201 - an AIModel
    """Who checks the claims of ``position``'s speeches: the judge, or when the debate has
    none, the other side's model (never the speaker itself)."""
    if debate.judge_model is not None:
        return debate.judge_model
    return debate.model_of("con" if position == "pro" else "pro")


def check_spend(models) -> None:
    cap = settings.ARENA_DEBATE_DAILY_SPEND_USD
    if not cap:
        return
    since = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    today = Debate.objects.filter(created_at__gte=since)
    for model in models:
        spent = ((today.filter(model_a=model).aggregate(s=Sum("cost_a"))["s"] or 0)
                 + (today.filter(model_b=model).aggregate(s=Sum("cost_b"))["s"] or 0))
        if spent >= cap:
            retry = int((since + timedelta(days=1) - timezone.now()).total_seconds()) + 1
            raise RuleError(SPEND_CAP.format(model=model.name, spent=spent, cap=cap),
                            status=429, retry_after=retry)
