from io import StringIO

import pytest
from django.core.management import call_command

from arena.models import AIModel
from arena.services import models_sync
from arena.steps import StepStatus
from battles.models import Battle, Response, Thread, Vote
from battles.tests.factories import BattleFactory


@pytest.mark.django_db
def test_seed_demo_creates_voted_battles_across_models_and_purge_removes_only_them():
    models_sync()
    real = BattleFactory(session_key="someone", model_a=AIModel.objects.get(pk="gpt-4o-mini"),
                         model_b=AIModel.objects.get(pk="smollm2-135m"), title="real")
    call_command("seed_demo", stdout=StringIO())
    demo = Battle.objects.filter(is_demo=True)
    assert demo.count() >= 300
    assert Vote.objects.filter(battle__is_demo=True).count() == demo.count()
    assert not Response.objects.filter(turn__battle__is_demo=True).exclude(
        status=StepStatus.DONE).exists()
    used = set(demo.values_list("model_a", flat=True)) | set(demo.values_list("model_b", flat=True))
    assert len(used) == 11
    call_command("seed_demo", "--purge", stdout=StringIO())
    assert list(Battle.objects.all()) == [real]
    assert list(Thread.objects.all()) == [real.thread]
