"""A time-only test (no expected output) is judged on time, memory and exit only, and a program
cannot turn it into a free pass: a crash, a time-out or a non-zero exit fails it, everywhere
judging happens (comparison or judging function, fail-fast or all, Python or C++)."""

from __future__ import annotations

import pytest

from problems.judging import judge_code
from problems.models import TestSuite
from problems.services import NewTest, judge_create, suite_activate, suite_add_tests, suite_create
from tests.factories import ProblemFactory

pytestmark = pytest.mark.django_db

ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
JUDGE = "def output_judging_function(input_str, candidate_output, reference_output):\n" \
        "    return candidate_output.split() == reference_output.split()\n"
BIG = "7 8\n"


def _suite(problem, judge=None):
    suite = suite_create(problem=problem, origin=TestSuite.Origin.ORACLE_FREE, output_judge=judge)
    suite_add_tests(suite=suite, tests=[
        NewTest(input="1 2\n", output="3\n", kind="edge", output_origin="brute_force"),
        NewTest(input="5 5\n", output="10\n", kind="edge", output_origin="brute_force"),
        NewTest(input=BIG, output=b"", kind="time_only", output_origin="none"),
    ])
    return suite_activate(suite=suite)


PROGRAMS = {
    "right": (ADD, "AC"),
    # prints something other than "" on the time-only test: still AC (its output is not judged)
    "right_verbose": ("a, b = map(int, input().split())\nprint(a + b)\nif a == 7:\n    print('trace')\n", "AC"),
    "crash_on_big": ("a, b = map(int, input().split())\nassert a != 7\nprint(a + b)\n", "RE"),
    "exit_1_on_big": ("import sys\na, b = map(int, input().split())\nprint(a + b)\nsys.exit(1 if a == 7 else 0)\n", "RE"),
    "slow_on_big": ("a, b = map(int, input().split())\nwhile a == 7:\n    pass\nprint(a + b)\n", "TLE"),
    # a program that prints nothing passes only the time-only test
    "silent": ("pass\n", "WA"),
}


@pytest.mark.parametrize("with_judge", [False, True])
@pytest.mark.parametrize("mode", ["all", "fail_fast"])
def test_time_only_test_is_judged_on_exit_and_time_only(with_judge: bool, mode: str) -> None:
    problem = ProblemFactory(time_limit_ms=500)
    judge = judge_create(problem=problem, code=JUDGE, origin="llm") if with_judge else None
    suite = _suite(problem, judge)
    verdicts = {}
    for name, (code, _) in PROGRAMS.items():
        result = judge_code(problem=problem, suite=suite, language="python3", code=code, mode=mode)
        verdicts[name] = result.verdict
        big = [t for t in result.tests if t.kind == "time_only"]
        if mode == "all":
            assert len(big) == 1
            expected_big = {"right": "AC", "right_verbose": "AC", "crash_on_big": "RE", "exit_1_on_big": "RE",
                            "slow_on_big": "TLE", "silent": "AC"}[name]
            assert big[0].verdict == expected_big, name
    assert verdicts["right"] == "AC"
    assert verdicts["right_verbose"] == "AC"
    assert verdicts["crash_on_big"] == "RE" and verdicts["exit_1_on_big"] == "RE"
    assert verdicts["slow_on_big"] == "TLE" and verdicts["silent"] == "WA"


def test_a_cpp_program_is_judged_the_same_way() -> None:
    problem = ProblemFactory(time_limit_ms=500)
    suite = _suite(problem)
    code = "#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);}\n"
    result = judge_code(problem=problem, suite=suite, language="cpp", code=code, mode="all")
    assert (result.verdict, result.passed, result.total) == ("AC", 3, 3)
