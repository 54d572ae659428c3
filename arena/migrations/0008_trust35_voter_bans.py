import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('arena', '0007_alerts'),
    ]

    operations = [
        migrations.CreateModel(
            name='VoterBan',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('visitor', models.CharField(max_length=80, unique=True)),
                ('reason', models.CharField(blank=True, max_length=200)),
                ('banned_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('banned_by', models.CharField(blank=True, max_length=150)),
                ('lifted_at', models.DateTimeField(blank=True, db_index=True, help_text='When staff lifted it (empty: it stands).', null=True)),
                ('lifted_by', models.CharField(blank=True, max_length=150)),
            ],
            options={
                'ordering': ['-banned_at'],
            },
        ),
    ]
