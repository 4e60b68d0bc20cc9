"""A suite goes live only after it has checked itself: pre-flight, judge and validator self-checks,
validator errors, budgets. Loopback fake LLM, real sandbox, real database."""

from __future__ import annotations

import re

import pytest

from generation.models import FailureReason, GenerationRun, LLMCall
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.models import CodeOrigin, TestSuite
from problems.services import (
    NewTest,
    judge_create,
    kit_create,
    suite_activate,
    suite_add_tests,
    suite_create,
    validator_create,
)
from tests.generation.conftest import (
    HACKING,
    ORACLE_CPP,
    ORACLE_PY,
    REGULAR,
    VALIDATOR,
    FakeLLM,
    inputs_reply,
    make_problem,
    validator_reply,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]

REJECT_ALL = "def output_judging_function(input_str, candidate_output, reference_output):\n    return False\n"
TOKENS_JUDGE = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
                "    return candidate_output.split() == reference_output.split()\n")
# Right on the samples (small sums), wrong on the large outputs of generated inputs.
REJECT_LARGE = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
                "    return candidate_output.split() == reference_output.split() and len(reference_output) < 6\n")
TOO_STRICT = VALIDATOR.replace("int(p) > 10**9", "int(p) > 1")  # rejects the sample "1 2"
# Spins on the large inputs the hacking generator makes.
SLOW_ON_BIG = VALIDATOR.replace("    return True\n",
                                "    if int(parts[0]) > 10**8:\n        while True:\n            pass\n    return True\n")


def previous_suite(problem) -> TestSuite:
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, note="earlier")
    suite_add_tests(suite=suite, tests=[NewTest(input="1 2\n", output="3\n", kind="direct")])
    return suite_activate(suite=suite)


def start(problem, mode=GenerationRun.Mode.FROM_SCRATCH) -> GenerationRun:
    run = generation_run_start(problem=problem, mode=mode, enqueue=False)
    return generation_run_execute(run_id=run.pk)


def make_kit(problem, *, validator: str = VALIDATOR, judge: str | None = None, regular: str = REGULAR,
             hacking: str = HACKING, direct=None):
    v = validator_create(problem=problem, code=validator, origin=CodeOrigin.IMPORTED)
    j = judge_create(problem=problem, code=judge, origin=CodeOrigin.IMPORTED) if judge else None
    return kit_create(problem=problem, origin=CodeOrigin.IMPORTED, validator=v, output_judge=j,
                      needs_output_judge=bool(judge), direct_inputs=direct if direct is not None else ["1 2\n", "5 5\n"],
                      regular_generator=regular, hacking_generator=hacking)


def assert_previous_active(problem, earlier: TestSuite) -> None:
    earlier.refresh_from_db()
    assert list(TestSuite.objects.filter(problem=problem, status=TestSuite.Status.ACTIVE)) == [earlier]


# -- pre-flight -------------------------------------------------------------------


def test_a_single_oracle_problem_fails_before_any_llm_call(fake_llm: FakeLLM) -> None:
    problem = make_problem(oracles=[("python3", ORACLE_PY)])
    fake_llm.reply(validator_reply(), inputs_reply())
    run = start(problem)
    assert run.failure_reason == FailureReason.NO_VALID_ORACLE
    assert "1 of 1 oracle(s)" in run.error and "at least 2 needed" in run.error
    assert fake_llm.requests == [] and LLMCall.objects.filter(run=run).count() == 0


def test_an_oracle_wrong_on_the_sample_does_not_count(fake_llm: FakeLLM) -> None:
    wrong = "a, b = map(int, input().split())\nprint(a * b)\n"
    problem = make_problem(oracles=[("python3", ORACLE_PY), ("python3", wrong)])
    run = start(problem)
    assert run.failure_reason == FailureReason.NO_VALID_ORACLE
    assert "wrong answer on pre-flight test #1" in run.error and fake_llm.requests == []


def test_with_min_oracles_one_a_single_oracle_suite_ships_marked_unverified(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_MIN_ORACLES = 1
    problem = make_problem(oracles=[("cpp", ORACLE_CPP)])
    fake_llm.reply(validator_reply(), inputs_reply())
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.suite.unverified and run.suite.test_count > 0
    assert "UNVERIFIED" in run.log
    from problems.exporters.bundles import bundles
    from problems.exporters.native import native_row
    from problems.exporters.training import training_row
    from problems.models import Problem

    bundle = next(bundles(Problem.objects.filter(pk=problem.pk)))
    assert native_row(bundle)["suites"][0]["unverified"] is True
    assert training_row(bundle)["metadata"]["tests_unverified"] is True


# -- judge self-check ---------------------------------------------------------------


def test_a_judge_rejecting_correct_answers_never_ships(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    earlier = previous_suite(problem)
    bad = validator_reply(needs=True, judge=REJECT_ALL)
    fake_llm.reply(bad, bad)
    run = start(problem)
    assert run.status == GenerationRun.Status.FAILED
    assert run.failure_reason == FailureReason.JUDGE_INVALID
    assert "returns False" in run.error
    # the failing cases went back to the model once, with the sample's correct output
    assert "'3\\n'" in fake_llm.requests[1]["messages"][-1]["content"]
    assert_previous_active(problem, earlier)


def test_a_judge_rejecting_correct_answers_is_repaired_by_the_retry(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    fake_llm.reply(validator_reply(needs=True, judge=REJECT_ALL), validator_reply(needs=True, judge=TOKENS_JUDGE),
                   inputs_reply())
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.kit.output_judge.code == TOKENS_JUDGE


def test_a_judge_rejecting_oracle_outputs_goes_back_once_then_fails(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    earlier = previous_suite(problem)
    bad = validator_reply(needs=True, judge=REJECT_LARGE)
    fake_llm.reply(bad, inputs_reply(), bad)
    run = start(problem)
    assert run.failure_reason == FailureReason.JUDGE_INVALID, run.error
    assert "compared with itself" in run.error
    assert list(run.llm_calls.values_list("purpose", flat=True)) == ["validator", "inputs", "judge_repair"]
    # the large correct outputs it rejected went back to the model
    assert re.search(r"candidate '\d{6,}\\n', reference '\d{6,}\\n'", fake_llm.requests[2]["messages"][-1]["content"])
    assert_previous_active(problem, earlier)


def test_a_judge_rejecting_oracle_outputs_is_repaired_after_materialisation(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    fake_llm.reply(validator_reply(needs=True, judge=REJECT_LARGE), inputs_reply(),
                   validator_reply(needs=True, judge=TOKENS_JUDGE))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.suite.output_judge.code == TOKENS_JUDGE and run.suite.test_count > 5


def test_a_kit_whose_judge_rejects_correct_outputs_fails_without_llm() -> None:
    problem = make_problem()
    earlier = previous_suite(problem)
    make_kit(problem, judge=REJECT_LARGE)
    run = start(problem, GenerationRun.Mode.FROM_KIT)
    assert run.failure_reason == FailureReason.JUDGE_INVALID
    assert_previous_active(problem, earlier)


# -- validator self-check and validator errors ----------------------------------------


def test_a_validator_rejecting_a_sample_never_ships(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    earlier = previous_suite(problem)
    fake_llm.reply(validator_reply(TOO_STRICT), validator_reply(TOO_STRICT))
    run = start(problem)
    assert run.failure_reason == FailureReason.VALIDATOR_INVALID
    assert "rejects sample input #1" in run.error
    assert not problem.kits.exists()
    assert_previous_active(problem, earlier)


def test_a_kit_whose_validator_rejects_a_sample_fails_as_validator_invalid() -> None:
    problem = make_problem()
    earlier = previous_suite(problem)
    make_kit(problem, validator=TOO_STRICT)
    run = start(problem, GenerationRun.Mode.FROM_KIT)
    assert run.failure_reason == FailureReason.VALIDATOR_INVALID and "rejects sample input" in run.error
    assert_previous_active(problem, earlier)


@pytest.mark.slow
def test_validator_timeouts_fail_the_run_with_the_inputs_listed(settings, client) -> None:
    settings.HARDTESTS_CHECKER_TIME_S = 1.0
    problem = make_problem()
    earlier = previous_suite(problem)
    # Inputs drawn from 10^15 pairs: the shared HACKING draws from 36, and the pipeline drops
    # duplicates, so with it the count of errors depended on the draw (1 run in 12 saw 2).
    distinct = ("import random\n\n\ndef gen_hacking_input_big():\n"
                "    return f\"{10**9 - random.randrange(10**6)} {random.randrange(10**9)}\\n\"\n")
    make_kit(problem, validator=SLOW_ON_BIG, regular="", hacking=distinct)
    run = start(problem, GenerationRun.Mode.FROM_KIT)
    assert run.failure_reason == FailureReason.VALIDATOR_ERROR, run.error
    assert "gen_hacking_input_big call 1" in run.error and "hacking input" in run.error
    errors = run.validator_errors
    assert {e["generator"] for e in errors} == {"gen_hacking_input_big"}
    assert len(errors) == settings.HARDTESTS_HACKING_CALLS
    assert all("time limit" in e["error"] for e in errors) and errors[0]["input"].startswith("999")
    assert run.counts["hacking"]["validator_error"] == len(errors)
    assert_previous_active(problem, earlier)
    from tests.factories import UserFactory

    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "gen_hacking_input_big" in page and page.count("time limit exceeded") >= len(errors)


# -- budgets -----------------------------------------------------------------------


@pytest.mark.parametrize(("setting", "value", "reason"), [
    ("HARDTESTS_INPUT_BUDGET_S", 0.0, FailureReason.INPUT_BUDGET_EXCEEDED),
    ("HARDTESTS_OUTPUT_BUDGET_S", 0.0, FailureReason.OUTPUT_BUDGET_EXCEEDED),
    ("HARDTESTS_SUITE_MAX_MB", 0.00001, FailureReason.SUITE_TOO_LARGE),
])
def test_each_budget_fails_with_its_own_reason(settings, setting: str, value: float, reason: str) -> None:
    setattr(settings, setting, value)
    problem = make_problem()
    make_kit(problem, hacking="")
    run = start(problem, GenerationRun.Mode.FROM_KIT)
    assert run.failure_reason == reason and setting in run.error
