from django.db import migrations, models
from django.db.models import OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce

SUMMED = {"tokens": "output_tokens", "headers": "md_headers", "lists": "md_lists",
          "bold": "md_bold"}


def sum_styles(apps, schema_editor):
    """Each vote's style: its battle's answers summed per side, in one UPDATE."""
    Vote = apps.get_model("battles", "Vote")
    Response = apps.get_model("battles", "Response")

    def side(slot, column):
        total = (Response.objects.filter(turn__battle_id=OuterRef("battle_id"), slot=slot)
                 .order_by().values("slot").annotate(total=Sum(column)).values("total"))
        return Coalesce(Subquery(total), 0)

    Vote.objects.update(**{f"{name}_{slot}": side(slot, column)
                           for name, column in SUMMED.items() for slot in ("a", "b")})


class Migration(migrations.Migration):

    dependencies = [
        ('battles', '0010_battle_categories'),
    ]

    operations = [
        migrations.AddField(
            model_name='vote',
            name='bold_a',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='vote',
            name='bold_b',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='vote',
            name='headers_a',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='vote',
            name='headers_b',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='vote',
            name='lists_a',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='vote',
            name='lists_b',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='vote',
            name='tokens_a',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='vote',
            name='tokens_b',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(sum_styles, migrations.RunPython.noop),
    ]
