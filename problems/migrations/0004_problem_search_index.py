"""Full-text search over problem titles and statements, for the problems list at 50k problems.

The statements are problems.search_index's (the search repair after a later migration runs
the same ones). Nothing here is model state, so makemigrations stays quiet about it.
"""

from django.db import migrations

from problems.search_index import POSTGRES_INSTALL, POSTGRES_REMOVE, SQLITE_INSTALL, SQLITE_REMOVE


def _run(schema_editor, statements_by_vendor):
    for sql in statements_by_vendor.get(schema_editor.connection.vendor, []):
        schema_editor.execute(sql)


def install(apps, schema_editor):
    _run(schema_editor, {"sqlite": SQLITE_INSTALL, "postgresql": POSTGRES_INSTALL})


def remove(apps, schema_editor):
    _run(schema_editor, {"sqlite": SQLITE_REMOVE, "postgresql": POSTGRES_REMOVE})


class Migration(migrations.Migration):
    dependencies = [("problems", "0003_judging_task")]
    operations = [migrations.RunPython(install, remove)]
