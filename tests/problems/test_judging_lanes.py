"""The lanes of one verification share its tests, and fail-fast judging does not wait for tests
that can no longer change the answer.

Asserted on which lane ran what (a spy on Sandbox.run), never on wall time.
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


class Spy:
    """The results each Sandbox.run call (one per lane) returned."""

    def __init__(self, monkeypatch) -> None:
        self.calls: list[list[str]] = []
        self.lock = threading.Lock()
        sb = judging.get_sandbox()
        real = sb.run

        def run(prog, inputs, limits, **kwargs):
            results = real(prog, inputs, limits, **kwargs)
            with self.lock:
                self.calls.append([str(r.verdict) for r in results])
            return results

        monkeypatch.setattr(sb, "run", run)
        monkeypatch.setattr(judging, "get_sandbox", lambda: sb)


def test_claims_hand_out_tests_in_order_and_none_past_the_first_failure():
    from problems.judging import _Claims, _FirstFailure

    first = _FirstFailure()
    claims = _Claims(6, first)
    assert [claims.take(), claims.take(), claims.take()] == [0, 1, 2]
    first.record(3)
    assert claims.take() == 3  # position 3 itself was claimed before it failed elsewhere: not again
    assert claims.take() is None
    every = _Claims(3, None)  # mode "all": every test, whatever failed
    assert [every.take(), every.take(), every.take(), every.take()] == [0, 1, 2, None]


def test_a_lane_that_gets_ahead_takes_the_tests_a_slow_lane_has_not_reached(settings, monkeypatch):
    settings.HARDTESTS_JUDGE_PARALLEL = 2
    problem = ProblemFactory(time_limit_ms=3000)
    suite = _suite(problem, 10)
    # test 0 sleeps 2 s: its lane holds it (and the test it asked for ahead) while the other
    # lane runs the rest; a fixed share per lane would give each lane 5
    code = "import time\na, b = map(int, input().split())\nif a == 0: time.sleep(2)\nprint(a + b)\n"
    spy = Spy(monkeypatch)
    result = judge_code(problem=problem, suite=suite, language="python3", code=code, mode="all")
    assert (result.verdict, result.passed, result.complete) == ("AC", 10, True)
    assert sorted(len(c) for c in spy.calls) in ([2, 8], [3, 7]), spy.calls


def test_fail_fast_aborts_a_lane_whose_tests_in_flight_all_come_after_the_failure(settings, monkeypatch):
    settings.HARDTESTS_JUDGE_PARALLEL = 2
    problem = ProblemFactory(time_limit_ms=3000)
    suite = _suite(problem, 8)
    # test 0 is wrong after 0.3 s (the other lane has started its tests by then); every other
    # test sleeps 2 s: the other lane's tests in flight (positions 2 and 3) cannot change the
    # answer, and are abandoned rather than waited for
    code = ("import time\na, b = map(int, input().split())\n"
            "time.sleep(0.3 if a == 0 else 2)\nprint(a + b + (a == 0))\n")
    spy = Spy(monkeypatch)
    result = judge_code(problem=problem, suite=suite, language="python3", code=code, mode="fail_fast")
    assert (result.verdict, len(result.tests), result.passed) == ("WA", 1, 0)
    # the failing lane returned its failure; the other nothing (waited for, it would return its AC)
    assert sorted(spy.calls) == [[], ["OK"]], spy.calls
