"""Sessions arrive without losing a battle: each earlier battle becomes its own thread."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_THREADS = [("battles", "0006_response_stopped")]


def rewound_to(target):
    """The schema (its apps) as it was at ``target``, with models m1 and m2 to battle, and a
    function that migrates the database on to the latest schema."""
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate(target)
    from arena.models import AIModel

    for slug in ("m1", "m2"):
        AIModel.objects.create(slug=slug, name=slug, provider="p", api_model=slug,
                               provider_kind="openai")
    return (executor.loader.project_state(target).apps,
            lambda: MigrationExecutor(connection).migrate(leaves))


@pytest.mark.django_db(transaction=True)
def test_every_battle_saved_before_threads_gets_a_thread_of_its_own():
    old, migrate_to_latest = rewound_to(BEFORE_THREADS)
    OldBattle = old.get_model("battles", "Battle")
    saved = [OldBattle.objects.create(session_key=f"visitor-{n}", model_a_id="m1",
                                      model_b_id="m2", model_a_position="left",
                                      title=f"Question {n}") for n in range(2)]

    migrate_to_latest()

    from battles.models import Battle

    for before in saved:
        battle = Battle.objects.select_related("thread").get(pk=before.pk)
        assert battle.thread.session_key == before.session_key
        assert battle.thread.title == before.title
        assert battle.thread.last_active_at == before.last_active_at
    assert len({b.thread_id for b in Battle.objects.all()}) == 2


BEFORE_CATEGORIES = [("battles", "0009_response_markdown_style")]


@pytest.mark.django_db(transaction=True)
def test_votes_get_their_style_and_battles_with_follow_ups_are_multi_turn():
    old, migrate_to_latest = rewound_to(BEFORE_CATEGORIES)
    Thread, Battle, Turn, Response, Vote = (old.get_model("battles", name) for name in (
        "Thread", "Battle", "Turn", "Response", "Vote"))
    thread = Thread.objects.create(session_key="v", title="t")
    battles = []
    for n, turns in enumerate((1, 2)):
        battle = Battle.objects.create(session_key="v", thread=thread, model_a_id="m1",
                                       model_b_id="m2", model_a_position="left", title=f"{n}")
        for index in range(1, turns + 1):
            turn = Turn.objects.create(battle=battle, index=index, prompt="p")
            Response.objects.create(turn=turn, slot="a", output_tokens=10 * index,
                                    md_headers=1, md_lists=2, md_bold=0)
            Response.objects.create(turn=turn, slot="b", output_tokens=None, md_bold=3)
        Vote.objects.create(battle=battle, choice="tie", winner="tie", score_a=0.5,
                            score_b=0.5)
        battles.append(battle)

    migrate_to_latest()

    from arena.prompt_categories import category_tags
    from battles.models import Vote as NewVote

    one, two = (NewVote.objects.get(battle_id=b.pk) for b in battles)
    assert (one.model_a_id, one.model_b_id) == ("m1", "m2")
    assert (one.tokens_a, one.headers_a, one.lists_a, one.bold_a) == (10, 1, 2, 0)
    assert (one.tokens_b, one.bold_b) == (0, 3)
    assert (two.tokens_a, two.headers_a, two.lists_a, two.bold_b) == (30, 2, 4, 6)
    assert (category_tags(one.categories), category_tags(two.categories)) == (
        set(), {"multi_turn"})
    assert category_tags(two.battle.categories) == {"multi_turn"}


BEFORE_VOTE_SESSIONS = [("battles", "0013_vote_categories_pending")]


@pytest.mark.django_db(transaction=True)
def test_votes_take_their_battles_session_by_which_the_daily_cap_counts():
    old, migrate_to_latest = rewound_to(BEFORE_VOTE_SESSIONS)
    Thread, Battle, Vote = (old.get_model("battles", name) for name in ("Thread", "Battle",
                                                                         "Vote"))
    voted = {}
    for key in ("visitor-1", "visitor-2"):
        thread = Thread.objects.create(session_key=key, title="t")
        battle = Battle.objects.create(session_key=key, thread=thread, model_a_id="m1",
                                       model_b_id="m2", model_a_position="left", title="t")
        voted[key] = Vote.objects.create(battle=battle, choice="tie", winner="tie",
                                         score_a=0.5, score_b=0.5, model_a_id="m1",
                                         model_b_id="m2").pk

    migrate_to_latest()

    from battles.models import Vote as NewVote

    assert {key: NewVote.objects.get(pk=pk).session_key for key, pk in voted.items()} == {
        "visitor-1": "visitor-1", "visitor-2": "visitor-2"}
