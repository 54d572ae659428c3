"""Every battle belongs to a thread (0007 gave each existing battle one). Its own migration:
on PostgreSQL the rows 0007 updated must be committed before the column is altered."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("battles", "0007_threads"),
    ]

    operations = [
        migrations.AlterField(
            model_name="battle",
            name="thread",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                    related_name="battles", to="battles.thread"),
        ),
    ]
