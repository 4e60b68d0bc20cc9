"""The full-text search index's SQL, shared by the migration that made it and the repair.

SQLite: an FTS5 table over problems_problem (external content, kept in step by triggers).
PostgreSQL: a GIN index on to_tsvector('simple', title || ' ' || statement).
Both answer the same question (every query word is a prefix of a word in the title or the
statement), see problems.selectors.problem_search.

Migration 0004_problem_search_index runs these statements, and
problems.selectors.search_index_install runs SQLITE_INSTALL again after a later migration
remade problems_problem on SQLite and dropped its triggers. Both must install the same index,
so the statements live here and no module imports a migration. Changing a statement changes
what migration 0004 does on a new database: a changed index needs a new migration that drops
the old one and installs the new, and these lists kept as 0004 ran them.
"""

from __future__ import annotations

from typing import Final

SQLITE_INSTALL: Final = (
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
)
SQLITE_REMOVE: Final = (
    "DROP TRIGGER IF EXISTS problems_problem_fts_ai",
    "DROP TRIGGER IF EXISTS problems_problem_fts_ad",
    "DROP TRIGGER IF EXISTS problems_problem_fts_au",
    "DROP TABLE IF EXISTS problems_problem_fts",
)
POSTGRES_INSTALL: Final = (
    "CREATE INDEX IF NOT EXISTS problems_problem_search_gin ON problems_problem USING gin "
    "(to_tsvector('simple'::regconfig, coalesce(title, '') || ' ' || coalesce(statement, '')))",
)
POSTGRES_REMOVE: Final = ("DROP INDEX IF EXISTS problems_problem_search_gin",)
