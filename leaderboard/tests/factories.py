"""Valid votes in one place. Models, battles and answers come from the battles factories."""

from __future__ import annotations

import factory

from arena.prompt_categories import category_bits
from battles.models import Battle, Position, Thread, Vote, VoteChoice, Winner
from battles.tests.factories import AIModelFactory, BattleFactory, answered_battle

# winner -> (choice when model a sits on the left, score_a, score_b)
_WINNERS = {
    Winner.MODEL_A: (VoteChoice.LEFT_BETTER, 1.0, 0.0),
    Winner.MODEL_B: (VoteChoice.RIGHT_BETTER, 0.0, 1.0),
    Winner.TIE: (VoteChoice.TIE, 0.5, 0.5),
    Winner.BOTH_BAD: (VoteChoice.BOTH_BAD, 0.25, 0.25),
}


class VoteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Vote

    battle = factory.SubFactory(BattleFactory, model_a_position=Position.LEFT)
    winner = Winner.MODEL_A
    choice = factory.LazyAttribute(lambda v: _WINNERS[v.winner][0])
    score_a = factory.LazyAttribute(lambda v: _WINNERS[v.winner][1])
    score_b = factory.LazyAttribute(lambda v: _WINNERS[v.winner][2])
    counts_for_rating = True
    model_a = factory.SelfAttribute("battle.model_a")
    model_b = factory.SelfAttribute("battle.model_b")


def make_votes(
    rows: list[tuple[str, str, str, int]],
    *,
    counts_for_rating: bool = True,
    is_demo: bool = False,
    categories: tuple[str, ...] = (),
) -> list[Vote]:
    """Create ``count`` voted battles per ``(slug_a, slug_b, winner, count)`` row, in bulk.

    Models are created on first use (slug = name). No signal is sent: this is data as a
    seed script or an import would leave it.
    """
    for slug in {s for a, b, _w, _n in rows for s in (a, b)}:
        AIModelFactory(slug=slug, name=slug.replace("-", " ").title())
    battles, votes = [], []
    thread = Thread.objects.create(session_key="seed", title="seeded")
    # A language among the categories (``lang-en``) is the battle's language.
    languages = [c.removeprefix("lang-") for c in categories if c.startswith("lang-")]
    facts = {"categories": category_bits(categories),
             "language": languages[0] if languages else ""}
    for a, b, winner, count in rows:
        choice, score_a, score_b = _WINNERS[Winner(winner)]
        for _ in range(count):
            battle = Battle(
                session_key="seed",
                thread=thread,
                model_a_id=a,
                model_b_id=b,
                is_demo=is_demo,
                model_a_position=Position.LEFT,
                title="seeded",
                **facts,
            )
            battles.append(battle)
            votes.append(
                Vote(
                    battle=battle,
                    choice=choice,
                    winner=winner,
                    score_a=score_a,
                    score_b=score_b,
                    counts_for_rating=counts_for_rating,
                    **Vote.facts_of(battle),
                )
            )
    Battle.objects.bulk_create(battles, batch_size=500)
    return Vote.objects.bulk_create(votes, batch_size=500)


__all__ = ["AIModelFactory", "BattleFactory", "VoteFactory", "answered_battle", "make_votes"]
