"""Sessions (threads of battles): every existing battle becomes the one battle of its own
thread, with its owner, title and times, so no battle is left without one."""

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


def thread_per_battle(apps, schema_editor):
    Battle = apps.get_model("battles", "Battle")
    Thread = apps.get_model("battles", "Thread")
    for battle in Battle.objects.filter(thread__isnull=True).iterator():
        thread = Thread.objects.create(
            session_key=battle.session_key, title=battle.title,
            created_at=battle.created_at, last_active_at=battle.last_active_at)
        Battle.objects.filter(pk=battle.pk).update(thread=thread)


class Migration(migrations.Migration):

    dependencies = [
        ("battles", "0006_response_stopped"),
    ]

    operations = [
        migrations.CreateModel(
            name="Thread",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True,
                                        serialize=False)),
                ("session_key", models.CharField(max_length=64)),
                ("title", models.CharField(
                    blank=True, max_length=120,
                    help_text="The first prompt of its first battle, unless named.")),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_active_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "verbose_name": "session",
                "ordering": ["-last_active_at"],
                "indexes": [models.Index(fields=["session_key", "-last_active_at"],
                                         name="thread_owner_recent")],
            },
        ),
        migrations.AddField(
            model_name="battle",
            name="thread",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="battles", to="battles.thread"),
        ),
        migrations.RunPython(thread_per_battle, migrations.RunPython.noop),
    ]
