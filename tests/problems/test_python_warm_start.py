"""A new Python program's syntax check is answered by the zygote that runs its tests.

Judging a Python program used to start a sandbox and an interpreter of the check's own for every
new text (the check beside the tests): most of a 1-test call's cost.  Where the first batch's
zygote compiled the program (the same compile as the check's), no check runs; where compiling
raised, or no zygote could say, the check runs and its answer stands (CE with its message).
Asserted on which calls were made, never on time.
"""

from __future__ import annotations

import secrets
import threading

import pytest

from problems import judging
from problems.judging import judge_code
from problems.models import TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from sandbox.base import ZYGOTE_ENV
from tests.factories import ProblemFactory

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

ADD = "a, b = map(int, input().split())\nprint(a + b)\n"


def _suite(problem, count: int) -> TestSuite:
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED)
    suite_add_tests(suite=suite, tests=[NewTest(input=f"{a} {a * 10}\n", output=f"{a * 11}\n", kind="regular")
                                        for a in range(count)])
    return suite_activate(suite=suite)


@pytest.fixture()
def checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Python sources the sandbox was asked to check (Sandbox.compile)."""
    seen: list[str] = []
    lock = threading.Lock()
    sb = judging.get_sandbox()
    real = sb.compile

    def compile_(language, source, **kwargs):
        with lock:
            seen.append(source)
        return real(language, source, **kwargs)

    monkeypatch.setattr(sb, "compile", compile_)
    monkeypatch.setattr(judging, "get_sandbox", lambda: sb)
    return seen


def new(code: str) -> str:
    return code + f"# {secrets.token_hex(8)}\n"  # a text of its own: in no cache


@pytest.mark.parametrize(("tests", "lanes"), [(1, 1), (12, 2)])
def test_a_program_the_zygote_compiled_starts_no_check(settings, monkeypatch, checks, tests: int,
                                                       lanes: int) -> None:
    monkeypatch.setenv(ZYGOTE_ENV, "1")
    settings.HARDTESTS_JUDGE_PARALLEL = lanes
    problem = ProblemFactory()
    suite = _suite(problem, tests)
    for mode in ("fail_fast", "all"):
        result = judge_code(problem=problem, suite=suite, language="python3", code=new(ADD), mode=mode)
        assert (result.verdict, result.passed) == ("AC", tests), result
    wrong = judge_code(problem=problem, suite=suite, language="python3", code=new("print(-1)\n"))
    assert (wrong.verdict, wrong.passed) == ("WA", 0)
    assert checks == []


def test_a_program_whose_compile_raised_is_ce_with_the_check_s_message(settings, monkeypatch, checks) -> None:
    monkeypatch.setenv(ZYGOTE_ENV, "1")
    settings.HARDTESTS_JUDGE_PARALLEL = 1
    problem = ProblemFactory()
    suite = _suite(problem, 3)
    code = new("print(1\n")
    result = judge_code(problem=problem, suite=suite, language="python3", code=code, mode="all")
    assert (result.verdict, result.passed, result.tests) == ("CE", 0, [])
    assert "SyntaxError" in result.message, result.message
    assert checks == [code]


def test_without_a_zygote_the_check_runs_for_every_new_program(settings, monkeypatch, checks) -> None:
    monkeypatch.setenv(ZYGOTE_ENV, "0")
    settings.HARDTESTS_JUDGE_PARALLEL = 1
    problem = ProblemFactory()
    suite = _suite(problem, 2)
    code = new(ADD)
    result = judge_code(problem=problem, suite=suite, language="python3", code=code)
    assert (result.verdict, result.passed) == ("AC", 2)
    broken = new("def f(:\n")
    assert judge_code(problem=problem, suite=suite, language="python3", code=broken).verdict == "CE"
    assert checks == [code, broken]


def test_a_program_the_zygote_could_not_compile_within_its_limit_is_checked(settings, monkeypatch, checks) -> None:
    # compiling 1.5 M list items takes most of a GB: the zygote is killed with the program,
    # says nothing, and the tests run exec'd (MLE); the check (2 GB) says it compiles
    monkeypatch.setenv(ZYGOTE_ENV, "1")
    settings.HARDTESTS_JUDGE_PARALLEL = 1
    problem = ProblemFactory(memory_limit_mb=256, time_limit_ms=5000)
    suite = _suite(problem, 1)
    code = new("data = [" + "7," * 1_500_000 + "]\nprint(len(data))\n")
    result = judge_code(problem=problem, suite=suite, language="python3", code=code)
    assert result.verdict == "MLE", result
    assert checks == [code]
