"""ApiToken moved to the `api` app; its table keeps its name, so only Django's state changes."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("hardtests_web", "0001_api_token"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ApiToken")],
            database_operations=[],
        ),
    ]
