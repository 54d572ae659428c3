"""Moving panels out of battles keeps every saved panel: only Django's state changes app; renaming
their tables to the panels app's names later keeps every row too."""

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


BEFORE_THE_RENAME = [("panels", "0005_answer_cut_at_limit")]
OLD_TABLES = {"battles_panel", "battles_clarificationround", "battles_panelanswer",
              "battles_paneljudgement", "battles_paneloutcome"}
NEW_TABLES = {name.replace("battles_", "panels_", 1) for name in OLD_TABLES}


def tables_and_keys():
    """The database's panel tables, and where each of their foreign keys points."""
    introspection = connection.introspection
    with connection.cursor() as cursor:
        tables = {t for t in introspection.table_names(cursor) if t in OLD_TABLES | NEW_TABLES
                  or t == "panels_questionstep"}
        keys = {(table, tuple(info["columns"])): info["foreign_key"][0]
                for table in tables
                for info in introspection.get_constraints(cursor, table).values()
                if info["foreign_key"] and not info["foreign_key"][0].startswith("arena_")}
        names = {name for table in tables for name in introspection.get_constraints(cursor, table)}
    return tables, keys, names


def saved_rows(apps) -> dict:
    """What the panel saved before the rename holds, read through ``apps``' models."""
    Panel = apps.get_model("panels", "Panel")
    panel = Panel.objects.get(question="Kept?")
    return {
        "rounds": list(panel.rounds.values_list("index", "question")),
        "steps": list(panel.question_steps.values_list("kind", "round__index")),
        "answers": list(panel.answers.order_by("model").values_list("model", "text")),
        "judgements": list(panel.judgements.values_list("judge", "ranking")),
        "outcomes": list(panel.outcomes.values_list("judgement__judge", "model_a", "model_b",
                                                    "winner")),
    }


@pytest.mark.django_db(transaction=True)
def test_panels_saved_before_the_tables_were_renamed_are_there_after_it_and_back():
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE_THE_RENAME)
    old = executor.loader.project_state(BEFORE_THE_RENAME).apps
    assert old.get_model("panels", "Panel")._meta.db_table == "battles_panel"
    from arena.models import AIModel

    for slug in ("m1", "m2"):
        AIModel.objects.create(slug=slug, name=slug, provider="p", api_model=slug,
                               provider_kind="openai")
    panel = old.get_model("panels", "Panel").objects.create(question="Kept?", status="done")
    round_ = old.get_model("panels", "ClarificationRound").objects.create(
        panel=panel, index=1, question="Kept?", phase="done")
    old.get_model("panels", "QuestionStep").objects.create(panel=panel, round=round_,
                                                           kind="check", status="done")
    for slug in ("m1", "m2"):
        old.get_model("panels", "PanelAnswer").objects.create(
            panel=panel, model_id=slug, status="done", text=f"Yes, says {slug}.")
    judgement = old.get_model("panels", "PanelJudgement").objects.create(
        panel=panel, judge_id="m1", status="done", ranking=["m2", "m1"], is_valid=True)
    old.get_model("panels", "PanelOutcome").objects.create(
        judgement=judgement, panel=panel, judge_id="m1", model_a_id="m1", model_b_id="m2",
        winner="model_b", is_self_vote=True)
    before = saved_rows(old)
    tables, keys, _ = tables_and_keys()
    assert tables == OLD_TABLES | {"panels_questionstep"}

    MigrationExecutor(connection).migrate(leaves)

    from django.apps import apps

    assert saved_rows(apps) == before
    tables, keys, names = tables_and_keys()
    assert tables == NEW_TABLES | {"panels_questionstep"}
    # Every key between the tables (the question steps' too) points at the new names.
    assert set(keys.values()) == {"panels_panel", "panels_paneljudgement",
                                  "panels_clarificationround"}
    connection.check_constraints(table_names=sorted(tables))
    if connection.vendor == "postgresql":
        # Index, key and check names follow (SQLite cannot rename an index).
        assert not [name for name in names if name.startswith("battles_")]

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_THE_RENAME)
    assert tables_and_keys()[0] == OLD_TABLES | {"panels_questionstep"}
    assert saved_rows(executor.loader.project_state(BEFORE_THE_RENAME).apps) == before

    MigrationExecutor(connection).migrate(leaves)
    assert saved_rows(apps) == before
    assert tables_and_keys()[1] == keys
