"""Sessions arrive without losing a battle: each earlier battle becomes its own thread."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_THREADS = [("battles", "0006_response_stopped")]


@pytest.mark.django_db(transaction=True)
def test_every_battle_saved_before_threads_gets_a_thread_of_its_own():
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE_THREADS)
    old = executor.loader.project_state(BEFORE_THREADS).apps
    from arena.models import AIModel

    for slug in ("m1", "m2"):
        AIModel.objects.create(slug=slug, name=slug, provider="p", api_model=slug,
                               provider_kind="openai")
    OldBattle = old.get_model("battles", "Battle")
    saved = [OldBattle.objects.create(session_key=f"visitor-{n}", model_a_id="m1",
                                      model_b_id="m2", model_a_position="left",
                                      title=f"Question {n}") for n in range(2)]

    executor = MigrationExecutor(connection)
    executor.migrate(leaves)

    from battles.models import Battle

    for before in saved:
        battle = Battle.objects.select_related("thread").get(pk=before.pk)
        assert battle.thread.session_key == before.session_key
        assert battle.thread.title == before.title
        assert battle.thread.last_active_at == before.last_active_at
    assert len({b.thread_id for b in Battle.objects.all()}) == 2
