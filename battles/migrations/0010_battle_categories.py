import django.db.models.deletion
from django.db import migrations, models


def tag_multi_turn(apps, schema_editor):
    """Battles that already have follow-ups are multi-turn (the other categories come from
    classifying their first prompt: manage.py classify_battles)."""
    Battle = apps.get_model("battles", "Battle")
    BattleCategory = apps.get_model("battles", "BattleCategory")
    ids = (Battle.objects.annotate(n=models.Count("turns")).filter(n__gt=1)
           .values_list("pk", flat=True))
    BattleCategory.objects.bulk_create(
        [BattleCategory(battle_id=pk, category="multi_turn") for pk in ids.iterator()],
        batch_size=1000, ignore_conflicts=True)


class Migration(migrations.Migration):

    dependencies = [
        ('battles', '0009_response_markdown_style'),
    ]

    operations = [
        migrations.AddField(
            model_name='battle',
            name='classification_note',
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.AddField(
            model_name='battle',
            name='classified_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='battle',
            name='language',
            field=models.CharField(blank=True, max_length=8),
        ),
        migrations.CreateModel(
            name='BattleCategory',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('category', models.CharField(db_index=True, max_length=40)),
                ('battle', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='categories', to='battles.battle')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('battle', 'category'), name='battle_category_unique')],
            },
        ),
        migrations.RunPython(tag_multi_turn, migrations.RunPython.noop),
    ]
