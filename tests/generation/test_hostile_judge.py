"""Judging functions are tried against hostile outputs before a suite goes live: NaN, inf, -0,
huge numbers, the empty output, extra tokens and garbage bytes, each against a test's reference
output. One that accepts what the comparison rejects with no reason the statement gives (a
tolerance, several answers) goes back to the model once (judge_repair), and a run from a kit
fails as judge_invalid. Loopback fake LLM, real sandbox, real database."""

from __future__ import annotations

from pathlib import Path

import pytest

from generation.materialise.oracles import Checker, hostile_judge
from generation.materialise.tolerance import Tolerance, tolerance_judge_code
from generation.models import FailureReason, GenerationRun
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.models import CodeOrigin
from problems.services import judge_create, kit_create, validator_create
from sandbox import get_sandbox
from tests.generation.conftest import (
    HACKING,
    REGULAR,
    VALIDATOR,
    FakeLLM,
    inputs_reply,
    make_problem,
    validator_reply,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]

# The common LLM pattern: it tests the rejecting condition, which NaN never meets.
NAN_JUDGE = ("import math\n"
             "def output_judging_function(input_str, candidate_output, reference_output):\n"
             "    try:\n"
             "        a, b = float(candidate_output.split()[0]), float(reference_output.split()[0])\n"
             "    except (ValueError, IndexError):\n"
             "        return False\n"
             "    if len(candidate_output.split()) != len(reference_output.split()):\n"
             "        return False\n"
             "    return not abs(a - b) > 1e-6\n")
# Reads the first token only: accepts the answer followed by anything.
FIRST_TOKEN = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
               "    try:\n"
               "        return int(candidate_output.split()[0]) == int(reference_output.split()[0])\n"
               "    except (ValueError, IndexError):\n"
               "        return False\n")
# Any exception accepted: garbage passes.
SWALLOWS = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
            "    try:\n"
            "        return int(candidate_output) == int(reference_output)\n"
            "    except Exception:\n"
            "        return True\n")
STRICT = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
          "    return candidate_output.split() == reference_output.split()\n")
ANSWERS = [("1 2\n", "3\n"), ("5 5\n", "10\n"), ("0 7\n", "7\n")]
DEMO = Path(__file__).resolve().parents[2] / "problems" / "demo_data"


@pytest.mark.parametrize(("code", "what"), [(NAN_JUDGE, "nan"), (FIRST_TOKEN, "extra token"),
                                            (SWALLOWS, "garbage bytes")], ids=["nan", "extra_token", "garbage"])
def test_a_judge_accepting_a_hostile_output_is_named_with_the_case(code: str, what: str) -> None:
    found = hostile_judge(get_sandbox(), Checker(code), ANSWERS, several_answers=True)
    assert found is not None
    message, cases = found
    assert what in message and cases and all(case.why.startswith("accepted") for case in cases)


def test_nan_is_refused_whatever_the_tolerance() -> None:
    checker = Checker(NAN_JUDGE, tolerance=Tolerance(1e-6))
    found = hostile_judge(get_sandbox(), checker, ANSWERS, several_answers=False)
    assert found is not None and "nan in place of '3'" in found[1][0].why


def test_sound_judges_pass_the_hostile_outputs() -> None:
    sb = get_sandbox()
    assert hostile_judge(sb, Checker(STRICT), ANSWERS, several_answers=False) is None
    # the standard real-number judge, with its tolerance, on real-number answers ("-0" for "0" is 0)
    reals = [("1\n", "0.5000000\n"), ("2\n", "0\n"), ("3\n", "-2.25\n")]
    standard = Checker(tolerance_judge_code(1e-6), tolerance=Tolerance(1e-6))
    assert hostile_judge(sb, standard, reals, several_answers=False) is None
    # the demo's own judges: several answers (any valid pair) and a real number within 1e-6
    two_sum = (DEMO / "two-sum-any" / "kit" / "judge.py").read_text()
    assert hostile_judge(sb, Checker(two_sum), [("4 9\n2 7 11 15\n", "1 2\n")], several_answers=True) is None
    derangement = (DEMO / "derangement" / "kit" / "judge.py").read_text()
    assert hostile_judge(sb, Checker(derangement), [("2\n3\n1\n", "2 3 1\n-1\n")], several_answers=True) is None
    meet = (DEMO / "meet-on-line" / "kit" / "judge.py").read_text()
    assert hostile_judge(sb, Checker(meet, tolerance=Tolerance(1e-6)), reals, several_answers=False) is None


def _start(problem, mode=GenerationRun.Mode.FROM_SCRATCH) -> GenerationRun:
    run = generation_run_start(problem=problem, mode=mode, enqueue=False)
    return generation_run_execute(run_id=run.pk)


def test_a_nan_accepting_judge_goes_back_once_then_fails(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    bad = validator_reply(needs=True, judge=NAN_JUDGE)
    fake_llm.reply(bad, inputs_reply(), bad)
    run = _start(problem)
    assert run.failure_reason == FailureReason.JUDGE_INVALID, run.error
    assert "no correct answer can be" in run.error and "nan" in run.error
    assert list(run.llm_calls.values_list("purpose", flat=True)) == ["validator", "inputs", "judge_repair"]
    assert "abs(a - b) <= tol" in fake_llm.requests[2]["messages"][-1]["content"]


def test_a_nan_accepting_judge_is_repaired_by_the_retry(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    fake_llm.reply(validator_reply(needs=True, judge=NAN_JUDGE), inputs_reply(),
                   validator_reply(needs=True, judge=STRICT))
    run = _start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.suite.output_judge.code == STRICT


def test_a_kit_whose_judge_accepts_extra_tokens_fails_without_llm() -> None:
    problem = make_problem()
    validator = validator_create(problem=problem, code=VALIDATOR, origin=CodeOrigin.IMPORTED)
    judge = judge_create(problem=problem, code=FIRST_TOKEN, origin=CodeOrigin.IMPORTED)
    kit_create(problem=problem, origin=CodeOrigin.IMPORTED, validator=validator, output_judge=judge,
               needs_output_judge=True, direct_inputs=["1 2\n", "5 5\n"], regular_generator=REGULAR,
               hacking_generator=HACKING)
    run = _start(problem, GenerationRun.Mode.FROM_KIT)
    assert run.failure_reason == FailureReason.JUDGE_INVALID, run.error
    assert "extra token" in run.error
