"""The panels' tables take the panels app's own names (``battles_panel`` becomes
``panels_panel``, and so on): 0001 moved the models out of battles in Django's state only and
kept the old table names, so the tables still said battles.

Each rename is one ``ALTER TABLE ... RENAME`` (rows, keys and constraints stay; foreign keys
between the tables follow the rename on SQLite and PostgreSQL alike); unapplying renames them
back. On PostgreSQL the names made from the old table's name follow too: the indexes Django
named (it finds a ``_like`` index again by the name it would give it, so one left under the
old name would be missed when its column later changes type), the foreign keys, the primary
keys, the check constraints PostgreSQL named and the key's sequence; every one is renamed to
what a table created under the new name would have. SQLite's index names stay: SQLite cannot
rename an index, and Django never looks one up by name there (it rebuilds the table).
"""

from django.db import migrations

RENAMED = {
    "battles_panel": "panels_panel",
    "battles_clarificationround": "panels_clarificationround",
    "battles_panelanswer": "panels_panelanswer",
    "battles_paneljudgement": "panels_paneljudgement",
    "battles_paneloutcome": "panels_paneloutcome",
}
POSTGRES_NAME_MAX = 63


def _names(schema_editor, table, info, naming):
    """The names Django or PostgreSQL gives the constraint or index ``info`` of ``table``,
    were the tables named by ``naming`` (today's name -> the name to use)."""
    name_for = schema_editor._create_index_name
    columns = info["columns"]
    named = naming.get(table, table)
    if info["primary_key"]:
        return [f"{named}_pkey"]
    if info["foreign_key"]:
        to_table, to_column = info["foreign_key"]
        return [name_for(named, columns, f"_fk_{naming.get(to_table, to_table)}_{to_column}")]
    if info["check"] and len(columns) == 1:
        return [f"{named}_{columns[0]}_check"]
    if info["index"] and not info["unique"]:
        return [name_for(named, columns, ""), name_for(named, columns, "_like")]
    return []


def _rename_postgres_names(schema_editor, naming_from, naming_to):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    introspection = connection.introspection
    with connection.cursor() as cursor:
        tables = introspection.table_names(cursor)
        found = {table: (introspection.get_constraints(cursor, table),
                         introspection.get_sequences(cursor, table)) for table in tables}
    for table, (constraints, sequences) in found.items():
        for name, info in constraints.items():
            for old, new in zip(_names(schema_editor, table, info, naming_from),
                                _names(schema_editor, table, info, naming_to), strict=True):
                if name != old or old == new or len(new) > POSTGRES_NAME_MAX:
                    continue
                if info["index"]:
                    schema_editor.execute(f"ALTER INDEX {quote(old)} RENAME TO {quote(new)}")
                else:
                    schema_editor.execute(f"ALTER TABLE {quote(table)} RENAME CONSTRAINT "
                                          f"{quote(old)} TO {quote(new)}")
        for sequence in sequences:
            old, new = (f"{naming.get(table, table)}_{sequence['column']}_seq"
                        for naming in (naming_from, naming_to))
            if sequence["name"] == old != new and len(new) <= POSTGRES_NAME_MAX:
                schema_editor.execute(f"ALTER SEQUENCE {quote(old)} RENAME TO {quote(new)}")


# Both run while the tables have their new names: forwards after the renames, backwards before
# the renames are undone.
def names_follow(apps, schema_editor):
    old_of = {new: old for old, new in RENAMED.items()}
    _rename_postgres_names(schema_editor, naming_from=old_of, naming_to={})


def names_go_back(apps, schema_editor):
    old_of = {new: old for old, new in RENAMED.items()}
    _rename_postgres_names(schema_editor, naming_from={}, naming_to=old_of)


class Migration(migrations.Migration):

    dependencies = [
        ('panels', '0005_answer_cut_at_limit'),
    ]

    operations = [
        migrations.AlterModelTable(name='panel', table=None),
        migrations.AlterModelTable(name='clarificationround', table=None),
        migrations.AlterModelTable(name='panelanswer', table=None),
        migrations.AlterModelTable(name='paneljudgement', table=None),
        migrations.AlterModelTable(name='paneloutcome', table=None),
        migrations.RunPython(names_follow, names_go_back),
    ]
