import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("battles", "0010_categories_and_vote_facts"),
    ]

    operations = [
        migrations.AlterField("vote", "model_a", models.ForeignKey(
            on_delete=django.db.models.deletion.PROTECT, related_name="+", to="arena.aimodel")),
        migrations.AlterField("vote", "model_b", models.ForeignKey(
            on_delete=django.db.models.deletion.PROTECT, related_name="+", to="arena.aimodel")),
    ]
