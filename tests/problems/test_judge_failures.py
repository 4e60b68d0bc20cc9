"""A judge's failure is the machine's, not the program's: a judging function that is starved,
cannot be prepared or loaded, crashes, runs out of time or returns something other than a bool
on every output makes the verdict SE (never the program's WA); one that fails only on what this
program printed (and accepts the reference output) says WA, so no program reaches SE by
printing what a fragile judge trips on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from django.test import override_settings

from problems.judging import judge_code
from problems.models import Problem, TestSuite
from problems.services import NewTest, judge_create, suite_activate, suite_add_tests, suite_create
from sandbox import RunResult, Verdict, get_sandbox
from sandbox.base import Sandbox
from tests.factories import ProblemFactory

pytestmark = pytest.mark.django_db

ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
WRONG = "a, b = map(int, input().split())\nprint(a - b)\n"
GARBAGE = "print('not a number')\n"
TESTS = [NewTest(input="1 2\n", output="3\n", kind="direct"), NewTest(input="5 5\n", output="10\n", kind="regular")]

FAIR = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
        "    return int(candidate_output.split()[0]) == int(reference_output.split()[0])\n")
# every path of a broken judge, by what makes it fail
BROKEN = {
    "load": "def output_judging_function(input_str, candidate_output, reference_output)\n    return True\n",
    "import": "raise RuntimeError('the module cannot start')\n"
              "def output_judging_function(i, c, r):\n    return True\n",
    "missing": "def judge(i, c, r):\n    return True\n",
    "crash": "def output_judging_function(i, c, r):\n    return 1 / 0\n",
    "timeout": "def output_judging_function(i, c, r):\n    while True:\n        pass\n",
    "non_bool": "def output_judging_function(i, c, r):\n    return 'yes'\n",
    "memory": "def output_judging_function(i, c, r):\n    x = bytearray(1 << 34)\n    return True\n",
}


def _judged(problem: Problem, code: str) -> TestSuite:
    judge = judge_create(problem=problem, code=code, origin="imported")
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, output_judge=judge)
    suite_add_tests(suite=suite, tests=TESTS)
    return suite_activate(suite=suite)


# the calls of a judging function failing on every test, for a program of two tests: fail-fast
# reads the first failure only, so only that one is called again with the reference (each second
# call may cost its whole time limit); "all" calls each again
CALLS = {"fail_fast": 2 + 1, "all": 2 + 2}


@override_settings(HARDTESTS_CHECKER_TIME_S=0.5, HARDTESTS_CHECKER_MEMORY_MB=256)
@pytest.mark.parametrize("path", sorted(BROKEN))
@pytest.mark.parametrize("mode", ["fail_fast", "all"])
def test_a_judging_function_that_fails_on_every_output_is_a_judging_error_never_wa(path: str, mode: str) -> None:
    problem = ProblemFactory()
    suite = _judged(problem, BROKEN[path])
    for code in (ADD, WRONG):
        # the crashing one's calls are counted on the way (a test of their own judged it again)
        counting = _CountingJudge(get_sandbox()) if path == "crash" and code == ADD else None
        result = judge_code(problem=problem, suite=suite, language="python3", code=code, mode=mode, sandbox=counting)
        assert result.verdict == "SE", (path, code, result.verdict, result.message)
        assert result.reward == 0 and result.message.startswith("judging error"), result.message
        assert result.tests[0].verdict == "SE"
        if counting is not None:
            assert counting.judge_runs == CALLS[mode], (mode, counting.judge_runs)


@override_settings(HARDTESTS_CHECKER_TIME_S=0.5)
def test_a_judge_that_trips_on_the_programs_own_output_is_wa_not_a_judging_error() -> None:
    problem = ProblemFactory()
    suite = _judged(problem, FAIR)
    garbage = judge_code(problem=problem, suite=suite, language="python3", code=GARBAGE, mode="all")
    assert garbage.verdict == "WA" and [t.verdict for t in garbage.tests] == ["WA", "WA"]
    assert "accepts the reference output" in garbage.message
    # returning False stays WA and a right answer AC, with no second call's note
    wrong = judge_code(problem=problem, suite=suite, language="python3", code=WRONG, mode="all")
    assert (wrong.verdict, wrong.message) == ("WA", "")
    assert judge_code(problem=problem, suite=suite, language="python3", code=ADD).verdict == "AC"


class _StarvedJudge(Sandbox):
    """The real sandbox, except that every run of a judging function's harness comes back SE as
    when the machine withholds the CPU (starvation cannot be caused on purpose in a test)."""

    name = "starved-judge"

    def __init__(self, real: Sandbox) -> None:
        self.real = real
        self.judge_runs = 0

    def open_batch(self, spec: Any) -> Any:
        return self.real.open_batch(spec)

    def compile(self, language: str, source: str, *, cpp_std: str = "c++17") -> Any:
        return self.real.compile(language, source, cpp_std=cpp_std)

    def run(self, prog: Any, inputs: Sequence[bytes | str], limits: Any, **kwargs: Any) -> list[RunResult]:
        first = inputs[0] if inputs else b""
        if (first.encode() if isinstance(first, str) else first).startswith(b'{"function": "output_judging'):
            self.judge_runs += 1
            return [RunResult(verdict=Verdict.SE, stderr="sandbox error: starved") for _ in inputs]
        return self.real.run(prog, inputs, limits, **kwargs)


def test_a_starved_judging_function_is_a_judging_error() -> None:
    problem = ProblemFactory()
    suite = _judged(problem, FAIR)
    starved = _StarvedJudge(get_sandbox())
    for code in (ADD, WRONG, GARBAGE):
        result = judge_code(problem=problem, suite=suite, language="python3", code=code, sandbox=starved)
        assert result.verdict == "SE" and "starved" in result.message, (code, result.message)
    # the machine's failure is not retried as if the program's output were to blame
    assert starved.judge_runs == 3


class _CountingJudge(_StarvedJudge):
    """The real sandbox, counting the calls of a judging function (each input of its harness)."""

    def run(self, prog: Any, inputs: Sequence[bytes | str], limits: Any, **kwargs: Any) -> list[RunResult]:
        first = inputs[0] if inputs else b""
        if (first.encode() if isinstance(first, str) else first).startswith(b'{"function": "output_judging'):
            self.judge_runs += len(inputs)
        return self.real.run(prog, inputs, limits, **kwargs)
