"""The judging function that judges a suite, read two ways: `judge_source` (the ORM, one query)
and `judge_source_sql` (a subquery of the API's one query of a verification, api/selectors.py).
Both must choose the same code in every case, or the API's snapshot and verdict cache would name
another judging than the worker's."""

from __future__ import annotations

import pytest
from django.db import connection

from api.selectors import verification_target
from problems.judging import JUDGE_SOURCE_READ, judge_source, judge_source_sql
from problems.models import CodeOrigin, Problem, TestKit, TestSuite
from problems.services import NewTest, judge_create, suite_activate, suite_add_tests, suite_create
from problems.verify_contract import suite_judging
from tests.factories import ProblemFactory

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _sql_choice(suite: TestSuite) -> str | None:
    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {judge_source_sql('s', qn)} FROM {qn(TestSuite._meta.db_table)} s "
                       f"WHERE s.{qn('id')} = %s", [suite.pk])
        [(code,)] = cursor.fetchall()
    return code


def _suite(problem: Problem, judge=None) -> TestSuite:
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, output_judge=judge)
    suite_add_tests(suite=suite, tests=[NewTest(input="1 2\n", output="3\n", kind="direct")])
    return suite_activate(suite=suite)


def _kit(problem: Problem, version: int, judge=None) -> TestKit:
    return TestKit.objects.create(problem=problem, version=version, origin=CodeOrigin.LLM, output_judge=judge)


def test_both_reads_choose_the_same_judging_function_in_every_case() -> None:
    problem = ProblemFactory()
    first = judge_create(problem=problem, code="def output_judging_function(i, c, r):\n    return True\n",
                         origin=CodeOrigin.LLM)
    second = judge_create(problem=problem, code="def output_judging_function(i, c, r):\n    return c == r\n",
                          origin=CodeOrigin.LLM)
    own = _suite(problem, judge=first)
    plain = _suite(ProblemFactory())
    seen = []
    # no kit, no judge of its own: none; its own judge: that one, whatever the kits say
    seen.append((judge_source(plain), _sql_choice(plain)))
    _kit(problem, 1, judge=second)
    seen.append((judge_source(own), _sql_choice(own)))
    # none of its own: its problem's latest kit's, even when an older kit had one
    borrowed = _suite(problem)
    seen.append((judge_source(borrowed), _sql_choice(borrowed)))
    _kit(problem, 2, judge=first)
    seen.append((judge_source(borrowed), _sql_choice(borrowed)))
    _kit(problem, 3)  # the latest kit has none: no judging function
    seen.append((judge_source(borrowed), _sql_choice(borrowed)))
    assert [orm for orm, _ in seen] == [None, first.code, second.code, first.code, None]
    assert [sql for _, sql in seen] == [orm for orm, _ in seen]


def test_the_api_reads_the_judging_function_with_the_problem_and_suite(django_assert_num_queries) -> None:
    problem = ProblemFactory(source="t", pid="ab/one")
    judge = judge_create(problem=problem, code="def output_judging_function(i, c, r):\n    return True\n",
                         origin=CodeOrigin.LLM)
    _kit(problem, 1, judge=judge)
    _suite(problem)
    with django_assert_num_queries(1):
        _, suite = verification_target("ab/one", None)
        digest = suite_judging(suite)
    assert suite.__dict__[JUDGE_SOURCE_READ] == (judge.code,)
    fresh = TestSuite.objects.select_related("problem").get(pk=suite.pk)
    assert digest == suite_judging(fresh)  # the digest the worker and the verdict cache compute
