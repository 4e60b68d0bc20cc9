"""Full-text search over problem titles and statements, for the problems list at 50k problems.

SQLite: an FTS5 table over problems_problem (external content, kept in step by triggers).
PostgreSQL: a GIN index on to_tsvector('simple', title || ' ' || statement).
Both answer the same question (every query word is a prefix of a word in the title or the
statement), see problems.selectors.problem_search. Nothing here is model state, so
makemigrations stays quiet about it.
"""

from django.db import migrations

SQLITE_INSTALL = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS problems_problem_fts USING fts5("
    "title, statement, content='problems_problem', content_rowid='id', tokenize='unicode61 remove_diacritics 0')",
    "CREATE TRIGGER IF NOT EXISTS problems_problem_fts_ai AFTER INSERT ON problems_problem BEGIN "
    "INSERT INTO problems_problem_fts(rowid, title, statement) VALUES (new.id, new.title, new.statement); END",
    "CREATE TRIGGER IF NOT EXISTS problems_problem_fts_ad AFTER DELETE ON problems_problem BEGIN "
    "INSERT INTO problems_problem_fts(problems_problem_fts, rowid, title, statement) "
    "VALUES ('delete', old.id, old.title, old.statement); END",
    "CREATE TRIGGER IF NOT EXISTS problems_problem_fts_au AFTER UPDATE OF title, statement ON problems_problem BEGIN "
    "INSERT INTO problems_problem_fts(problems_problem_fts, rowid, title, statement) "
    "VALUES ('delete', old.id, old.title, old.statement); "
    "INSERT INTO problems_problem_fts(rowid, title, statement) VALUES (new.id, new.title, new.statement); END",
    "INSERT INTO problems_problem_fts(problems_problem_fts) VALUES ('rebuild')",
]
SQLITE_REMOVE = [
    "DROP TRIGGER IF EXISTS problems_problem_fts_ai",
    "DROP TRIGGER IF EXISTS problems_problem_fts_ad",
    "DROP TRIGGER IF EXISTS problems_problem_fts_au",
    "DROP TABLE IF EXISTS problems_problem_fts",
]
POSTGRES_INSTALL = [
    "CREATE INDEX IF NOT EXISTS problems_problem_search_gin ON problems_problem USING gin "
    "(to_tsvector('simple'::regconfig, coalesce(title, '') || ' ' || coalesce(statement, '')))",
]
POSTGRES_REMOVE = ["DROP INDEX IF EXISTS problems_problem_search_gin"]


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
