"""Rows of text battles read and written with plain statements, for the busiest write: the
vote (a hundred a second is the load benchmark's target on two cores).

Through the ORM a vote's reads and writes were eight statements, and building them (the
battle with both models and its vote, every answer with its turn, two updates, the insert)
cost more CPU than the database spent running them. Here each statement is built once per
process: the battle with what the leak check needs of its models, locked; its answers; the
activity times; the vote. The rules stay in :mod:`battles.services`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from django.db import connection

from arena.models import AIModel
from arena.queries import column_name, table_name
from battles.models import Battle, Response, Thread, Turn, Vote

# What the leak check reads of a model (arena.contests.leaks.identity_terms).
MODEL_FIELDS = ("slug", "name", "provider", "api_model", "organization", "aliases")


@dataclass(frozen=True)
class Ballot:
    """A battle under its row lock, as its vote needs it."""

    battle: Battle  # with both models (the fields of MODEL_FIELDS; the rest load on access)
    voted: bool
    unclassified: bool


class Answer(NamedTuple):
    turn_index: int
    prompt: str
    slot: str
    status: str
    text: str
    output_tokens: int | None
    md_headers: int
    md_lists: int
    md_bold: int


@cache
def _ballot_sql(vendor: str) -> str:  # noqa: ARG001 - one statement per database kind
    def model_columns(alias: str) -> str:
        return ", ".join(f"{alias}.{column_name(AIModel, name)}" for name in MODEL_FIELDS)

    lock = (" FOR UPDATE OF b" if connection.features.has_select_for_update_of
            else " FOR UPDATE" if connection.features.has_select_for_update else "")
    b = {name: f"b.{column_name(Battle, name)}" for name in
         ("id", "session_key", "thread", "model_a", "model_b", "model_a_position",
          "categories", "language", "classified_at")}
    return (
        f"SELECT {b['model_a_position']}, {b['thread']}, {b['categories']}, {b['language']}, "
        f"EXISTS (SELECT 1 FROM {table_name(Vote)} v "
        f"WHERE v.{column_name(Vote, 'battle')} = {b['id']}),"
        f" {b['classified_at']} IS NULL, "
        f"{model_columns('ma')}, {model_columns('mb')} "
        f"FROM {table_name(Battle)} b "
        f"JOIN {table_name(AIModel)} ma ON ma.{column_name(AIModel, 'slug')} = {b['model_a']} "
        f"JOIN {table_name(AIModel)} mb ON mb.{column_name(AIModel, 'slug')} = {b['model_b']} "
        f"WHERE {b['id']} = %s AND {b['session_key']} = %s{lock}")


def ballot_locked(battle_id: uuid.UUID, session_key: str) -> Ballot | None:
    """The session's battle under its row lock (None: no such battle of this session)."""
    id_field = Battle._meta.pk
    with connection.cursor() as cursor:
        cursor.execute(_ballot_sql(connection.vendor),
                       [id_field.get_db_prep_value(battle_id, connection), session_key])
        row = cursor.fetchone()
    if row is None:
        return None
    position, thread_id, categories, language, voted, unclassified, *models = row
    n = len(MODEL_FIELDS)
    model_a, model_b = (_model(models[:n]), _model(models[n:]))
    battle = Battle.from_db(connection.alias, [
        "id", "session_key", "thread_id", "model_a_id", "model_b_id", "model_a_position",
        "categories", "language",
    ], [battle_id, session_key, uuid.UUID(str(thread_id)), model_a.slug, model_b.slug, position,
        categories, language])
    battle.model_a, battle.model_b = model_a, model_b
    return Ballot(battle=battle, voted=bool(voted), unclassified=bool(unclassified))


def _model(values: list) -> AIModel:
    values = list(values)
    aliases = MODEL_FIELDS.index("aliases")
    values[aliases] = AIModel._meta.get_field("aliases").from_db_value(
        values[aliases], None, connection)
    return AIModel.from_db(connection.alias, list(MODEL_FIELDS), values)


@cache
def _answers_sql(vendor: str) -> str:  # noqa: ARG001 - one statement per database kind
    r = {name: f"r.{column_name(Response, name)}" for name in Answer._fields[2:]}
    return (
        f"SELECT t.{column_name(Turn, 'index')}, t.{column_name(Turn, 'prompt')}, "
        f"{', '.join(r.values())} "
        f"FROM {table_name(Response)} r JOIN {table_name(Turn)} t "
        f"ON t.{column_name(Turn, 'id')} = r.{column_name(Response, 'turn')} "
        f"WHERE t.{column_name(Turn, 'battle')} = %s "
        f"ORDER BY t.{column_name(Turn, 'index')}, {r['slot']}")


def answers(battle: Battle) -> list[Answer]:
    """Every answer of the battle with its turn's prompt, in order (one statement)."""
    with connection.cursor() as cursor:
        cursor.execute(_answers_sql(connection.vendor),
                       [Battle._meta.pk.get_db_prep_value(battle.pk, connection)])
        return [Answer(*row) for row in cursor.fetchall()]


@cache
def _touch_sql(vendor: str) -> list[str]:  # noqa: ARG001 - statements per database kind
    return [f"UPDATE {table_name(model)} SET {column_name(model, 'last_active_at')} = %s "
            f"WHERE {column_name(model, 'id')} = %s" for model in (Battle, Thread)]


def touch(battle: Battle, now) -> None:
    """The battle and its session were active ``now`` (the sidebar sorts by it)."""
    when = connection.ops.adapt_datetimefield_value(now)
    battle.last_active_at = now
    battle_sql, thread_sql = _touch_sql(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(battle_sql, [when, Battle._meta.pk.get_db_prep_value(battle.pk, connection)])
        cursor.execute(thread_sql, [when, Thread._meta.pk.get_db_prep_value(battle.thread_id,
                                                                            connection)])


@cache
def _vote_fields(vendor: str) -> tuple[list, str]:  # noqa: ARG001 - per database kind
    fields = list(Vote._meta.concrete_fields)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    return fields, f"INSERT INTO {table_name(Vote)} ({columns}) VALUES ({marks})"


def vote_insert(vote: Vote) -> Vote:
    """Store a new vote (every field prepared as the ORM's insert prepares it; no model
    signals, which nothing listens to for votes: the vote's own signal is sent by the
    service); the same vote, now saved."""
    fields, sql = _vote_fields(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, [f.get_db_prep_save(f.pre_save(vote, add=True), connection)
                             for f in fields])
    vote._state.adding = False
    vote._state.db = connection.alias
    return vote
