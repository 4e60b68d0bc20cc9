"""Full-text search over titles and statements (SQLite FTS5, PostgreSQL tsvector, a scan without either)."""

from __future__ import annotations

import re
from typing import Any

from django.core.cache import cache
from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from problems.models import (
    Problem,
)
from problems.search_index import SQLITE_INSTALL


def search_terms(q: str) -> list[str]:
    """Words of a query, lowercased; both backends split on anything that is not a letter or digit."""
    return [t for t in re.split(r"[\W_]+", q.lower()) if t][:12]


def _sqlite_fts_ready() -> bool:
    # The FTS table is kept current by triggers, which SQLite drops whenever Django remakes
    # problems_problem in a migration; without them the index would go stale silently, so
    # search falls back to a (slow but correct) scan until they are installed again.
    key = "problems:fts-ready"
    ready = cache.get(key)
    if ready is None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(*) FROM sqlite_master WHERE name IN "
                "('problems_problem_fts', 'problems_problem_fts_ai', 'problems_problem_fts_ad', 'problems_problem_fts_au')"
            )
            ready = cursor.fetchone()[0] == 4
        cache.set(key, ready, 60)
    return bool(ready)


def search_index_install(**_signal_kwargs: Any) -> bool:
    """Reinstall the SQLite search triggers and rebuild the index if a migration dropped them.

    Django remakes a SQLite table (and so drops its triggers) for many schema changes, e.g.
    adding a NOT NULL column to problems_problem. Meant as a post_migrate receiver; idempotent,
    and a no-op (False) when the index is intact or on PostgreSQL, whose GIN index survives.
    """
    cache.delete("problems:fts-ready")
    if connection.vendor != "sqlite" or _sqlite_fts_ready():
        return False
    with connection.cursor() as cursor:
        for sql in SQLITE_INSTALL:
            cursor.execute(sql)
    cache.delete("problems:fts-ready")
    return True


def problem_search(qs: QuerySet[Problem], q: str) -> QuerySet[Problem]:
    """Problems whose title or statement contains every query word as a word prefix, or whose
    id contains the query (people paste ids, or the memorable part of one: "1A", "isqrt")."""
    q = q.strip()
    terms = search_terms(q)
    # A scan of the short pid column; the statement search is what needs the full-text index.
    by_pid = Q(pid__icontains=q) if q else Q()
    if not terms:
        return qs.filter(by_pid) if q else qs
    vendor = connection.vendor
    if vendor == "sqlite" and _sqlite_fts_ready():
        match = " ".join(f'"{t}"*' for t in terms)
        # One IN over a UNION, so SQLite drives the query from the matching ids.
        ids = RawSQL("SELECT rowid FROM problems_problem_fts WHERE problems_problem_fts MATCH %s", [match])
        return qs.filter(Q(pk__in=ids) | by_pid)
    if vendor == "postgresql":
        tsquery = " & ".join(f"{t}:*" for t in terms)
        matched = RawSQL(
            "to_tsvector('simple'::regconfig, coalesce(\"problems_problem\".\"title\", '') || ' ' || "
            "coalesce(\"problems_problem\".\"statement\", '')) @@ to_tsquery('simple'::regconfig, %s)",
            [tsquery],
        )
        return qs.alias(_matched=matched).filter(Q(_matched=True) | by_pid)
    words = Q()
    for term in terms:
        words &= Q(title__icontains=term) | Q(statement__icontains=term)
    return qs.filter(words | by_pid)
