"""Every saved turn carries its place in the recordings and its answer latency (``start_ms``,
``end_ms``, ``latency_ms``): calls saved before the proxy measured them get the keys as null
(not measured), so every turn has one shape."""

from django.db import migrations, models

TIMING_KEYS = ("start_ms", "end_ms", "latency_ms")


def add_timing_keys(apps, schema_editor):
    AgentConversation = apps.get_model("agents", "AgentConversation")
    for conversation in AgentConversation.objects.exclude(turns_json=[]).iterator():
        turns = [{**dict.fromkeys(TIMING_KEYS), **turn} for turn in conversation.turns_json]
        if turns != conversation.turns_json:
            conversation.turns_json = turns
            conversation.save(update_fields=["turns_json"])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0005_vote_publish_text"),
    ]

    operations = [
        migrations.AlterField(
            model_name="agentconversation",
            name="turns_json",
            field=models.JSONField(
                blank=True, default=list,
                help_text="[{role, text, at_ms, start_ms, end_ms, latency_ms}] as heard live: "
                          "where each turn's audio lies in its recording and how long the "
                          "agent took to answer (agents.speech.turn_clock); the recordings "
                          "are measured again later."),
        ),
        migrations.RunPython(add_timing_keys, migrations.RunPython.noop),
    ]
