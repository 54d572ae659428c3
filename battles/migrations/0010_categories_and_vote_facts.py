"""Categories on battles, and on each vote what a rating run reads: the pair, the battle's
categories and language, and each side's style summed over the turns. The votes already cast
get theirs from their battles and answers; battles with follow-ups become multi-turn (their
other categories come from classifying their first prompt: manage.py classify_battles).
The pair is made required in 0011 (PostgreSQL will not alter a column that has pending
updates in the same transaction)."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Count, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce

MULTI_TURN_BIT = 1 << 5  # arena.prompt_categories.CATEGORY_BITS["multi_turn"] when written
SUMMED = {"tokens": "output_tokens", "headers": "md_headers", "lists": "md_lists",
          "bold": "md_bold"}


def fill_in(apps, schema_editor):
    Battle = apps.get_model("battles", "Battle")
    Vote = apps.get_model("battles", "Vote")
    Response = apps.get_model("battles", "Response")
    followed_up = Battle.objects.annotate(n=Count("turns")).filter(n__gt=1).values("pk")
    Battle.objects.filter(pk__in=Subquery(followed_up)).update(categories=MULTI_TURN_BIT)

    def battle(field):
        return Subquery(Battle.objects.filter(pk=OuterRef("battle_id")).values(field)[:1])

    def side(slot, column):
        total = (Response.objects.filter(turn__battle_id=OuterRef("battle_id"), slot=slot)
                 .order_by().values("slot").annotate(total=Sum(column)).values("total"))
        return Coalesce(Subquery(total), 0)

    Vote.objects.update(model_a_id=battle("model_a_id"), model_b_id=battle("model_b_id"),
                        categories=battle("categories"),
                        **{f"{name}_{slot}": side(slot, column)
                           for name, column in SUMMED.items() for slot in ("a", "b")})


class Migration(migrations.Migration):

    dependencies = [
        ("arena", "0001_initial"),
        ("battles", "0009_response_markdown_style"),
    ]

    operations = [
        migrations.AddField("battle", "categories", models.PositiveIntegerField(default=0)),
        migrations.AddField("battle", "language", models.CharField(blank=True, max_length=8)),
        migrations.AddField("battle", "classified_at",
                            models.DateTimeField(blank=True, null=True)),
        migrations.AddField("battle", "classification_note",
                            models.CharField(blank=True, max_length=300)),
        migrations.AddField("vote", "model_a", models.ForeignKey(
            null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+",
            to="arena.aimodel")),
        migrations.AddField("vote", "model_b", models.ForeignKey(
            null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+",
            to="arena.aimodel")),
        migrations.AddField("vote", "categories", models.PositiveIntegerField(default=0)),
        migrations.AddField("vote", "language", models.CharField(blank=True, max_length=8)),
        *(migrations.AddField("vote", f"{name}_{slot}", models.PositiveIntegerField(default=0))
          for name in SUMMED for slot in ("a", "b")),
        migrations.RunPython(fill_in, migrations.RunPython.noop),
    ]
