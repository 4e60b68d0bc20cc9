"""`curate demo` builds the generated suites it needs (curation.services.demo_suites_ensure): a
demo problem with a kit and no active generated suite gets one, materialised in the real sandbox;
one that has a suite is not built again; a problem with no kit is left out of the demo."""

from __future__ import annotations

import pytest
from django.test.utils import override_settings

from curation.services import demo_suites_ensure
from generation.models import GenerationRun
from problems.demo import demo_load
from problems.models import Problem, TestSuite
from tests.conftest import DEMO_COUNTS

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_only_the_missing_suites_are_materialised_and_a_problem_without_a_kit_is_left_out() -> None:
    demo_load()
    first, second = Problem.objects.filter(source="demo", pid__in=["demo/isqrt", "demo/derangement"]).order_by("pid")
    bare = Problem.objects.create(source="demo", pid="demo/no-kit", title="No kit", statement="Print 1.")
    with override_settings(**DEMO_COUNTS):
        assert demo_suites_ensure(problems=[first]) == [first]
        assert first.generation_runs.count() == 1
        ready = demo_suites_ensure(problems=[first, second, bare])
    assert ready == [first, second]
    # the first was not built again; the second got its own run, which succeeded
    assert first.generation_runs.count() == 1
    [run] = second.generation_runs.all()
    assert run.status == GenerationRun.Status.SUCCEEDED and run.mode == GenerationRun.Mode.FROM_KIT
    for problem in (first, second):
        suite = problem.suites.get(origin=TestSuite.Origin.GENERATED, status=TestSuite.Status.ACTIVE)
        assert suite.test_count > 0
    assert not bare.suites.exists() and not bare.generation_runs.exists()
