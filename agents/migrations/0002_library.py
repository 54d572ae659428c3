"""The seed's scenarios and the agent configurations from ``fixtures/voice/``."""

from django.db import migrations


def load_library(apps, schema_editor):
    from agents.library import library_load

    library_load(apps=apps)


class Migration(migrations.Migration):
    dependencies = [("agents", "0001_voice")]

    operations = [migrations.RunPython(load_library, migrations.RunPython.noop)]
