"""What the native format carries survives export and import: the comparison a problem is judged
with and a suite's unverified mark (built with a single oracle)."""

from __future__ import annotations

import json

import pytest

from problems.exporters.bundles import problems_select
from problems.exporters.native import native_export
from problems.importers.runner import dataset_import
from problems.models import Comparison, Problem, TestCase, TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.factories import ProblemFactory

pytestmark = [pytest.mark.django_db]


def test_comparison_and_unverified_survive_a_native_round_trip(tmp_path):
    exact = ProblemFactory(source="rt", pid="rt/exact", comparison=Comparison.EXACT)
    ProblemFactory(source="rt", pid="rt/tokens")
    suite = suite_create(problem=exact, origin=TestSuite.Origin.GENERATED, unverified=True)
    suite_add_tests(suite=suite, tests=[NewTest(input=b"1 2\n", output=b"3\n", kind=TestCase.Kind.DIRECT)])
    suite_activate(suite=suite)
    out = tmp_path / "rows.jsonl"
    native_export(problems=problems_select([])[0], out=out)
    rows = {json.loads(line)["pid"]: json.loads(line) for line in out.read_text().splitlines()}
    assert rows["rt/exact"]["comparison"] == "exact"
    Problem.objects.all().delete()
    dataset_import(format_name="native", paths=[str(out)])
    again = Problem.objects.get(pid="rt/exact")
    assert again.comparison == Comparison.EXACT
    assert Problem.objects.get(pid="rt/tokens").comparison == Comparison.TOKENS
    assert again.suites.get(status=TestSuite.Status.ACTIVE, origin=TestSuite.Origin.GENERATED).unverified is True
