from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("debates", "0008_vote_publish_text"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgeevaluation",
            name="justification_reasks",
            field=models.PositiveSmallIntegerField(default=0, help_text="Times the judge was asked again for a justification of at least 100 words (seed 004)."),
        ),
        migrations.AddField(
            model_name="judgeevaluation",
            name="justification_short",
            field=models.BooleanField(default=False, help_text="Still under 100 words after the re-asks: kept, marked."),
        ),
    ]
