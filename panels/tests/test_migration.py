"""Moving panels out of battles keeps every saved panel: only Django's state changes app."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_THE_MOVE = [("battles", "0002_panel"), ("panels", None)]


@pytest.mark.django_db(transaction=True)
def test_panels_saved_before_the_move_are_there_after_it():
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE_THE_MOVE)
    old = executor.loader.project_state([("battles", "0002_panel")]).apps
    OldPanel = old.get_model("battles", "Panel")
    OldAnswer = old.get_model("battles", "PanelAnswer")
    # The model registry is not part of the move: today's model writes its row.
    from arena.models import AIModel

    AIModel.objects.create(slug="m1", name="M1", provider="p", api_model="m1",
                           provider_kind="openai")
    saved = OldPanel.objects.create(question="Kept?", status="done")
    OldAnswer.objects.create(panel=saved, model_id="m1", status="done", text="Yes.")

    executor = MigrationExecutor(connection)
    executor.migrate(leaves)

    from panels.models import Panel

    panel = Panel.objects.get(pk=saved.pk)
    assert panel.question == "Kept?"
    assert [a.text for a in panel.answers.all()] == ["Yes."]
    from django.contrib.contenttypes.models import ContentType

    assert ContentType.objects.get_for_model(Panel).app_label == "panels"
