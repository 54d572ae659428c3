"""What valid battle objects look like, in one place."""

import factory

from arena.models import AIModel, ProviderKind
from arena.steps import StepStatus
from battles.models import Battle, Position, Response, Slot, Thread, Turn, Vote


class AIModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AIModel
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"model-{n}")
    name = factory.Sequence(lambda n: f"Model {n}")
    provider = "Fake"
    provider_kind = ProviderKind.OPENAI
    api_model = factory.LazyAttribute(lambda m: f"{m.slug}-api")
    base_url = "http://127.0.0.1:9/v1"
    organization = factory.Sequence(lambda n: f"Org{n}")
    license = "Apache-2.0"


class ThreadFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Thread

    session_key = "session-of-owner"
    title = "A prompt"


class BattleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Battle

    session_key = "session-of-owner"
    thread = factory.SubFactory(ThreadFactory, session_key=factory.SelfAttribute("..session_key"))
    model_a = factory.SubFactory(AIModelFactory)
    model_b = factory.SubFactory(AIModelFactory)
    model_a_position = Position.LEFT
    title = "A prompt"


class TurnFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Turn

    battle = factory.SubFactory(BattleFactory)
    index = 1
    prompt = "A prompt"


class ResponseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Response

    turn = factory.SubFactory(TurnFactory)
    slot = Slot.A
    status = StepStatus.DONE
    text = "An answer."
    latency_ms = 120
    output_tokens = 3


def answered_battle(*, turns: int = 1, prompt: str = "", **battle_fields) -> Battle:
    """A battle whose every turn has both answers done (``prompt``: the first one's)."""
    battle = BattleFactory(**battle_fields)
    for index in range(1, turns + 1):
        turn = TurnFactory(battle=battle, index=index,
                           prompt=(index == 1 and prompt) or f"prompt {index}")
        ResponseFactory(turn=turn, slot=Slot.A, text=f"answer a{index}")
        ResponseFactory(turn=turn, slot=Slot.B, text=f"answer b{index}")
    return battle


def vote_on(battle: Battle, **fields) -> Vote:
    """The vote of the battle's own session, through the service (``choice=``, ``voter=``)."""
    from battles.services import battle_vote

    return battle_vote(battle_id=battle.pk, session_key=battle.session_key, **fields)


__all__ = ["AIModelFactory", "BattleFactory", "ResponseFactory", "ThreadFactory", "TurnFactory",
           "Vote", "answered_battle", "vote_on"]
