"""ApiToken, moved here from `hardtests_web`: the table (hardtests_web_apitoken) already exists,
made by hardtests_web's 0001, so this migration only records the model in Django's state."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("hardtests_web", "0002_api_token_moves_to_api"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiToken",
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(help_text="what the token is for, e.g. 'rl-cluster-a'", max_length=100)),
                        ('prefix', models.CharField(max_length=16, unique=True)),
                        ('secret_sha256', models.CharField(max_length=64)),
                        ('rate_limit_per_minute', models.PositiveIntegerField(blank=True, help_text='requests per minute; empty means the site default', null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('last_used_at', models.DateTimeField(blank=True, null=True)),
                        ('revoked_at', models.DateTimeField(blank=True, db_index=True, null=True)),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_tokens', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "ordering": ["-created_at"],
                        "db_table": "hardtests_web_apitoken",
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
