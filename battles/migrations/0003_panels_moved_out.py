"""Panels now live in the ``panels`` app (see panels/migrations/0001_initial.py). Only Django's
state forgets them here; the tables stay, owned by the panels app."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('battles', '0002_panel'),
        ('panels', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='PanelOutcome'),
                migrations.DeleteModel(name='PanelJudgement'),
                migrations.DeleteModel(name='PanelAnswer'),
                migrations.DeleteModel(name='ClarificationRound'),
                migrations.DeleteModel(name='Panel'),
            ],
            database_operations=[],
        ),
    ]
