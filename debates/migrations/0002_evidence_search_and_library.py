"""The local evidence store's full-text index (PostgreSQL: a GIN index over the English
tsvector; SQLite: an FTS5 table kept in step by triggers), and the debate library from
``fixtures/debates/`` (topics with their evidence, personas)."""

from django.db import migrations

from debates.evidence_store import PG_SETUP, PG_TEARDOWN, SQLITE_SETUP, SQLITE_TEARDOWN


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)
    return run


def load_library(apps, schema_editor):
    from debates.topics import library_load

    library_load(apps=apps)


class Migration(migrations.Migration):
    dependencies = [("debates", "0001_debates")]

    operations = [
        migrations.RunPython(_run({"postgresql": PG_SETUP, "sqlite": SQLITE_SETUP}),
                             _run({"postgresql": PG_TEARDOWN, "sqlite": SQLITE_TEARDOWN})),
        migrations.RunPython(load_library, migrations.RunPython.noop),
    ]
