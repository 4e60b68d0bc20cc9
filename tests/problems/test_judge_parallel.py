"""judge_code(parallel=N) sets one call's lanes without touching the setting: a curation job
asks for its own lanes while an API verification beside it keeps HARDTESTS_JUDGE_PARALLEL.

Asserted on how many sandbox batches a verification opened (a spy on Sandbox.run).
"""

from __future__ import annotations

import threading

import pytest

from problems import judging
from problems.judging import judge_code
from problems.models import TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.factories import ProblemFactory

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def _suite(problem, count: int) -> TestSuite:
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED)
    suite_add_tests(suite=suite, tests=[NewTest(input=f"{a} {a * 10}\n", output=f"{a * 11}\n", kind="regular")
                                        for a in range(count)])
    return suite_activate(suite=suite)


@pytest.fixture
def batches(monkeypatch) -> list[int]:
    """How many tests each Sandbox.run call (one per lane) was given."""
    seen: list[int] = []
    lock = threading.Lock()
    sb = judging.get_sandbox()
    real = sb.run

    def run(prog, inputs, limits, **kwargs):
        results = real(prog, inputs, limits, **kwargs)
        with lock:
            seen.append(len(results))
        return results

    monkeypatch.setattr(sb, "run", run)
    monkeypatch.setattr(judging, "get_sandbox", lambda: sb)
    return seen


@pytest.mark.parametrize(("setting", "parallel", "lanes"), [(1, 2, 2), (2, 1, 1), (2, None, 2)])
def test_parallel_sets_the_lanes_of_one_call_and_none_is_the_setting(settings, batches, setting, parallel, lanes):
    settings.HARDTESTS_JUDGE_PARALLEL = setting
    problem = ProblemFactory(time_limit_ms=3000)
    suite = _suite(problem, 12)
    code = "a, b = map(int, input().split())\nprint(a + b)\n"
    result = judge_code(problem=problem, suite=suite, language="python3", code=code, mode="all", parallel=parallel)
    assert (result.verdict, result.passed, result.complete) == ("AC", 12, True)
    assert len(batches) == lanes, batches
    assert sum(batches) == 12
    assert settings.HARDTESTS_JUDGE_PARALLEL == setting
