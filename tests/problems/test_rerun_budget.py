"""Near-limit re-runs are bounded per call: only a TLE just over the limit is run again (an OK
run is final however near: a re-run is kept only when faster), and one verification spends at
most NEAR_LIMIT_RERUNS of them across all its lanes and chunks, so a program on the edge of
its limit on every test cannot double its call's time. Re-runs are counted, not timed."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from problems.judging import judge_code
from problems.models import TestSuite
from problems.services import NewTest, judge_create, suite_activate, suite_add_tests, suite_create
from sandbox import Limits, RunResult, Verdict, get_sandbox
from sandbox import base as sandbox_base
from tests.factories import ProblemFactory

pytestmark = [pytest.mark.django_db, pytest.mark.serial]

LIMIT_S = 0.3
# spins until its own CPU time reaches TARGET ms, then prints 1
SPIN = """#include <cstdio>
#include <ctime>
int main() {
    volatile unsigned long x = 0;
    while (clock() * 1000.0 / CLOCKS_PER_SEC < TARGET) x++;
    std::printf("1\\n");
}
"""
NEAR_OK = SPIN.replace("TARGET", "275")  # ~0.92x the limit: OK, and final
NEAR_TLE = SPIN.replace("TARGET", "318")  # ~1.06x: TLE, the kind a re-run could turn OK
TESTS = 8


@pytest.fixture
def reruns(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(first verdict, kept verdict) of every near-limit re-run (SE re-runs, the machine's, apart)."""
    seen: list[tuple[str, str]] = []
    real = sandbox_base.rerun_kept

    def counting(first: RunResult, again: RunResult) -> RunResult:
        if first.verdict != Verdict.SE:
            seen.append((str(first.verdict), str(again.verdict)))
        return real(first, again)

    monkeypatch.setattr(sandbox_base, "rerun_kept", counting)
    return seen


def test_an_ok_run_near_the_limit_is_never_run_again(reruns: list[tuple[str, str]]) -> None:
    sb = get_sandbox()
    prog = sb.compile("cpp", NEAR_OK)
    assert prog.ok, prog.message
    results = sb.run(prog, [""] * TESTS, Limits(time_s=LIMIT_S))
    ok = [r for r in results if r.verdict == Verdict.OK]
    # (a loaded machine may push one over; it is near-limit TLE then, and counted below)
    assert len(ok) >= TESTS - 2, [(r.verdict, r.time_ms) for r in results]
    assert all(first == "TLE" for first, _ in reruns), reruns
    assert len(reruns) <= sandbox_base.NEAR_LIMIT_RERUNS


def test_a_call_spends_at_most_its_budget_of_reruns(reruns: list[tuple[str, str]]) -> None:
    sb = get_sandbox()
    prog = sb.compile("cpp", NEAR_TLE)
    assert prog.ok, prog.message
    results = sb.run(prog, [""] * TESTS, Limits(time_s=LIMIT_S))
    near = [r for r in results if r.verdict == Verdict.TLE and r.time_ms <= 1.1 * LIMIT_S * 1000]
    assert len(near) >= 3, [(r.verdict, r.time_ms) for r in results]
    assert len(reruns) == sandbox_base.NEAR_LIMIT_RERUNS, reruns
    # a budget given by the caller is shared, and spent once
    reruns.clear()
    budget = sandbox_base.RerunBudget()
    sb.run(prog, [""] * 4, Limits(time_s=LIMIT_S), reruns=budget)
    sb.run(prog, [""] * 4, Limits(time_s=LIMIT_S), reruns=budget)
    assert budget.used == len(reruns) == sandbox_base.NEAR_LIMIT_RERUNS


@override_settings(HARDTESTS_JUDGE_PARALLEL=2)
@pytest.mark.parametrize("judged", [False, True], ids=["comparison", "judging_function"])
def test_one_verification_shares_one_budget_across_lanes_and_chunks(reruns: list[tuple[str, str]],
                                                                    judged: bool) -> None:
    problem: Any = ProblemFactory(time_limit_ms=int(LIMIT_S * 1000))
    judge = judge_create(problem=problem, origin="imported", code=(
        "def output_judging_function(i, c, r):\n    return c.split() == r.split()\n")) if judged else None
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, output_judge=judge)
    suite_add_tests(suite=suite, tests=[NewTest(input=f"{i}\n", output="1\n", kind="direct") for i in range(TESTS)])
    suite = suite_activate(suite=suite)
    result = judge_code(problem=problem, suite=suite, language="cpp", code=NEAR_TLE, mode="all")
    assert result.verdict == "TLE" and len(result.tests) == TESTS
    assert len(reruns) == sandbox_base.NEAR_LIMIT_RERUNS, reruns
