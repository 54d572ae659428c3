from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0004_run_failed_boards"),
    ]

    operations = [
        migrations.AddField(
            model_name="snapshotentry",
            name="volatility",
            field=models.FloatField(blank=True, help_text="Glicko-2's σ (Glicko-2 boards; null elsewhere).", null=True),
        ),
    ]
