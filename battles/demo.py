"""Demo battles for a new install: realistic prompts, answers of varying quality,
votes drawn from hidden model strengths, so boards and pages have data at once.
No model is called; everything is marked ``is_demo`` and removable."""

from __future__ import annotations

import math
import random
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from arena.contests.pairing import pair_pick
from arena.contests.voting import vote_outcome
from arena.models import AIModel
from arena.prompt_categories import category_bits, classify_by_rules
from arena.steps import StepStatus
from battles.categories import MULTI_TURN
from battles.models import (
    Battle,
    Position,
    Response,
    Slot,
    Thread,
    Turn,
    Vote,
    VoteChoice,
)

DEMO_SESSION = "demo"

PROMPTS = [
    "Explain the difference between a process and a thread.",
    "Write a haiku about autumn rain in a city.",
    "What are the main causes of inflation?",
    "How do I reverse a linked list in Python?",
    "Summarise the plot of Romeo and Juliet in three sentences.",
    "What is the capital of Australia, and why isn't it Sydney?",
    "Give me three tips for a first job interview.",
    "Explain gradient descent to a high-school student.",
    "What is the time complexity of binary search, and why?",
    "Write a SQL query that finds the second highest salary.",
    "How does HTTPS keep my data private?",
    "Suggest a name for a bakery that specialises in sourdough.",
    "What is the difference between weather and climate?",
    "Translate 'Where is the train station?' into French and Spanish.",
    "Why is the sky blue?",
    "Write a short limerick about a cat who codes.",
    "How do vaccines train the immune system?",
    "Compare REST and GraphQL in a few bullet points.",
    "What should I pack for a three-day hiking trip?",
    "Explain what a Bradley-Terry model is.",
    "Write a Python function that checks whether a string is a palindrome.",
    "What were the main causes of the First World War?",
    "How do I make a good cup of pour-over coffee?",
    "Explain recursion with a simple example.",
]
FOLLOW_UPS = [
    "Can you make it shorter?",
    "Give me an example.",
    "Why does that matter?",
    "Can you explain that more simply?",
]
OPENINGS = [
    "Here is a clear answer.", "Good question!", "Short version first, then details.",
    "Let me break this down.", "Sure.",
]
BODIES = [
    "The key idea is to separate what changes from what stays the same, then reason step by step.",
    "In practice, the most important factor is the trade-off between simplicity and flexibility.",
    "A helpful way to see it is with a concrete example, which makes the general rule obvious.",
    "There are three parts to this: the definition, why it works, and where it breaks down.",
]


def _answer(rng: random.Random, prompt: str, quality: float) -> str:
    points = max(1, round(1 + quality * 3 + rng.random()))
    lines = [rng.choice(OPENINGS), ""]
    lines += [f"{i}. {rng.choice(BODIES)}" for i in range(1, points + 1)]
    if quality > 0.6:
        lines += ["", f"In short: a careful answer to “{prompt[:60]}” weighs all of the above."]
    return "\n".join(lines)


def demo_purge() -> int:
    deleted, _ = Battle.objects.filter(is_demo=True).delete()
    Thread.objects.filter(session_key=DEMO_SESSION, battles__isnull=True).delete()
    return deleted


@transaction.atomic
def demo_seed(*, battles: int = 320, seed: int = 7) -> int:
    """Create ``battles`` voted demo battles across every configured model."""
    rng = random.Random(seed)
    models = list(AIModel.objects.filter(in_models_file=True).order_by("slug"))
    if len(models) < 2:
        raise ValueError("at least two models are needed: run `manage.py seed` first")
    strength = {m.slug: rng.gauss(0, 1) for m in models}
    now = timezone.now()
    thread = Thread.objects.create(session_key=DEMO_SESSION, title="Demo battles")
    battle_rows, turn_rows, response_rows, vote_rows = [], [], [], []
    for i in range(battles):
        model_a, model_b = pair_pick(models, rng=rng)
        created = now - timedelta(minutes=rng.randint(1, 60 * 24 * 30))
        battle = Battle(session_key=DEMO_SESSION, thread=thread, model_a=model_a,
                        model_b=model_b, model_a_position=rng.choice(Position.values), is_demo=True,
                        title="", created_at=created, last_active_at=created)
        prompts = [rng.choice(PROMPTS)] + rng.sample(FOLLOW_UPS, rng.choice([0, 0, 0, 1, 2]))
        battle.title = prompts[0][:120]
        battle_rows.append(battle)
        # Classified by the rules only (no model call), as the worker would without one.
        found = classify_by_rules(prompts[0], note="demo battle: classified by the rules")
        battle.language, battle.classified_at = found.language, created
        battle.classification_note = found.note
        battle.categories = category_bits(found.categories | (
            {MULTI_TURN} if len(prompts) > 1 else set()))
        answers = []
        for index, prompt in enumerate(prompts, start=1):
            turn = Turn(battle=battle, index=index, prompt=prompt)
            turn_rows.append(turn)
            for slot, model in ((Slot.A, model_a), (Slot.B, model_b)):
                quality = 1 / (1 + math.exp(-strength[model.slug]))
                text = _answer(rng, prompt, quality)
                answers.append(Response(
                    turn=turn, slot=slot, status=StepStatus.DONE, text=text,
                    latency_ms=rng.randint(300, 4000), ttft_ms=rng.randint(80, 900),
                    input_tokens=len(prompt.split()) * 2, output_tokens=len(text.split()),
                    cost_usd=0.0, attempts=1, **Response.style_fields(text),
                ))
        response_rows += answers
        vote_rows.append(_demo_vote(rng, battle, strength, i, Vote.style_sums(answers)))
    Battle.objects.bulk_create(battle_rows)
    Turn.objects.bulk_create(turn_rows)
    Response.objects.bulk_create(response_rows)
    Vote.objects.bulk_create(vote_rows)
    return len(battle_rows)


def _demo_vote(rng: random.Random, battle: Battle, strength: dict, i: int,
               style: dict[str, int]) -> Vote:
    diff = strength[battle.model_a.slug] - strength[battle.model_b.slug]
    p_a = 1 / (1 + math.exp(-diff))
    roll = rng.random()
    if roll < 0.12:
        winner = "tie"
    elif roll < 0.2:
        winner = "both_bad"
    else:
        winner = "model_a" if rng.random() < p_a else "model_b"
    a_left = battle.model_a_position == Position.LEFT
    choice = {
        "tie": VoteChoice.TIE,
        "both_bad": VoteChoice.BOTH_BAD,
        "model_a": VoteChoice.LEFT_BETTER if a_left else VoteChoice.RIGHT_BETTER,
        "model_b": VoteChoice.RIGHT_BETTER if a_left else VoteChoice.LEFT_BETTER,
    }[winner]
    winner, score_a, score_b = vote_outcome(choice, a_position=battle.model_a_position)
    return Vote(battle=battle, choice=choice, winner=winner, score_a=score_a, score_b=score_b,
                counts_for_rating=True, **style, **Vote.facts_of(battle),
                created_at=battle.created_at + timedelta(minutes=2))
