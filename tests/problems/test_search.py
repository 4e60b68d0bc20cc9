"""Full-text search is served by the database's index (FTS5 on SQLite, a tsvector on PostgreSQL),
not by the fallback scan: the index matches query words as word prefixes, while the scan matches
any substring, and each backend's own SQL is the one that runs."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from problems.models import Problem
from problems.selectors import problem_search
from tests.factories import ProblemFactory

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.fixture
def corpus() -> dict[str, Problem]:
    return {
        "array": ProblemFactory(pid="t/one", title="Sorting an array", statement="Sort the numbers."),
        "rays": ProblemFactory(pid="t/two", title="Rays of light", statement="Count reflections."),
        "graph": ProblemFactory(pid="t/three", title="Shortest paths", statement="A weighted graph is given."),
    }


def found(q: str) -> set[str]:
    return set(problem_search(Problem.objects.all(), q).values_list("pid", flat=True))


def test_query_words_match_as_word_prefixes_not_substrings(corpus):
    # "ray" is inside "array" but starts no word of it: only the index tells them apart.
    assert found("ray") == {"t/two"}
    assert found("arr") == {"t/one"}
    assert found("sort ARRAY") == {"t/one"}  # every word, any order, any case
    assert found("graph weigh") == {"t/three"}  # statement words count too
    assert found("graph light") == set()


def test_search_runs_on_the_backends_own_index(corpus):
    with CaptureQueriesContext(connection) as queries:
        assert found("rays") == {"t/two"}
    sql = " ".join(q["sql"] for q in queries.captured_queries)
    if connection.vendor == "sqlite":
        assert "problems_problem_fts MATCH" in sql
    else:
        assert "to_tsquery" in sql and "to_tsvector" in sql
