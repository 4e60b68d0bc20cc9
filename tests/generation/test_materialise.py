"""Materialising kits without the LLM: oracles, output judging functions, regeneration from a kit."""

from __future__ import annotations

import pytest

from generation.materialise import MaterialiseError, materialise_kit
from generation.models import FailureReason, GenerationRun
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.models import CodeOrigin, TestCase, TestSuite
from problems.services import kit_create, kit_with_edited_code, validator_create
from tests.factories import UserFactory
from tests.generation.conftest import (
    HACKING,
    ORACLE_CPP,
    ORACLE_PY,
    ORACLE_PY_ALT,
    REGULAR,
    VALIDATOR,
    FakeLLM,
    make_problem,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]

# Wrong whenever a > 1000, which random inputs almost always are.
BUGGY_PY = "a, b = map(int, input().split())\nprint(a + b + (a > 1000))\n"
# Right on the sample (so they pass the pre-flight), wrong on most generated inputs.
OFF_BY_ONE = "a, b = map(int, input().split())\nprint(a + b + (a > 1000))\n"
OFF_BY_TWO = "a, b = map(int, input().split())\nprint(a + b + 2 * (a > 1000))\n"
CRASHING = "import sys\nsys.exit(3)\n"
NOT_COMPILING = "int main( { return 0; }\n"


def make_kit(problem, *, validator: str = VALIDATOR, direct=None, regular: str = REGULAR, hacking: str = HACKING,
             judge=None):
    v = validator_create(problem=problem, code=validator, origin=CodeOrigin.IMPORTED)
    return kit_create(problem=problem, origin=CodeOrigin.IMPORTED, validator=v, output_judge=judge,
                      direct_inputs=direct if direct is not None else ["1 2\n", "5 5\n"],
                      regular_generator=regular, hacking_generator=hacking)


def run_from_kit(problem, user=None) -> GenerationRun:
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False, user=user)
    return generation_run_execute(run_id=run.pk)


def test_a_buggy_most_reliable_oracle_is_outvoted() -> None:
    problem = make_problem(oracles=[("python3", BUGGY_PY), ("cpp", ORACLE_CPP), ("python3", ORACLE_PY_ALT)])
    make_kit(problem)
    run = run_from_kit(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    rank2 = problem.solutions.get(reliability=2)
    assert set(run.suite.tests.values_list("oracle_id", flat=True)) == {rank2.pk}
    big = run.suite.tests.get(generator="gen_hacking_input_big", call_number=1)
    # the honest oracle's answer, not the buggy top one's (which adds 1 whenever a > 1000)
    a, b = map(int, big.input_preview.split())
    assert a > 1000 and big.output_preview == f"{a + b}\n"
    assert "agree on" in run.log and "oracle1" in run.log


def test_oracles_that_never_agree_fail_with_output_verification_failed() -> None:
    problem = make_problem(oracles=[("python3", ORACLE_PY), ("python3", OFF_BY_ONE), ("python3", OFF_BY_TWO)])
    make_kit(problem)
    run = run_from_kit(problem)
    assert run.status == GenerationRun.Status.FAILED
    assert run.failure_reason == FailureReason.OUTPUT_VERIFICATION_FAILED
    assert "no two of 3 oracles agree" in run.error
    assert not TestSuite.objects.filter(problem=problem, origin=TestSuite.Origin.GENERATED,
                                        status=TestSuite.Status.ACTIVE).exists()


def test_oracles_that_crash_or_do_not_compile_are_skipped() -> None:
    problem = make_problem(oracles=[("python3", CRASHING), ("cpp", NOT_COMPILING), ("python3", ORACLE_PY),
                                    ("cpp", ORACLE_CPP)])
    make_kit(problem)
    run = run_from_kit(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert "RE on test #1 of the pre-flight" in run.log and "does not compile" in run.log
    assert set(run.suite.tests.values_list("oracle_id", flat=True)) == {problem.solutions.get(reliability=3).pk}


def test_fewer_than_two_working_oracles_fail_with_no_valid_oracle() -> None:
    problem = make_problem(oracles=[("python3", ORACLE_PY), ("python3", CRASHING)])
    make_kit(problem)
    run = run_from_kit(problem)
    assert run.failure_reason == FailureReason.NO_VALID_ORACLE


def test_the_output_judging_function_decides_agreement_when_answers_are_not_unique(settings) -> None:
    from problems.services import judge_create

    settings.HARDTESTS_HACKING_CALLS = 1
    # "print any x with min(a, b) <= x <= max(a, b)": the oracles print different ends.
    low = "a, b = map(int, input().split())\nprint(min(a, b))\n"
    high = "a, b = map(int, input().split())\nprint(max(a, b))\n"
    judge_code = (
        "def output_judging_function(input_str, candidate_output, reference_output):\n"
        "    a, b = map(int, input_str.split())\n"
        "    try:\n        x = int(candidate_output.strip())\n    except ValueError:\n        return False\n"
        "    return min(a, b) <= x <= max(a, b)\n"
    )
    problem = make_problem(oracles=[("python3", low), ("python3", high)])
    problem.samples = [{"input": "1 2\n", "output": "1\n"}]
    problem.save()
    with pytest.raises(MaterialiseError) as without:
        materialise_kit(kit=make_kit(problem, hacking=""))
    assert without.value.reason == FailureReason.OUTPUT_VERIFICATION_FAILED
    judge = judge_create(problem=problem, code=judge_code, origin=CodeOrigin.IMPORTED)
    result = materialise_kit(kit=make_kit(problem, hacking="", judge=judge))
    assert result.agreement == 1.0 and result.tests


def test_regeneration_from_an_edited_kit_uses_no_llm(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    kit = make_kit(problem)
    first = run_from_kit(problem)
    assert first.status == GenerationRun.Status.SUCCEEDED, first.error
    # a person narrows the validator: only a, b < 10 are accepted
    narrow = VALIDATOR.replace("int(p) > 10**9", "int(p) >= 10")
    user = UserFactory()
    edited = kit_with_edited_code(kit=kit, user=user, validator_code=narrow, note="tighter")
    second = run_from_kit(problem, user=user)
    assert second.status == GenerationRun.Status.SUCCEEDED, second.error
    assert second.kit == edited and second.suite.validator.version == 2
    assert set(second.suite.tests.values_list("validator_version", flat=True)) == {2}
    # only "1 2", "5 5" (direct) and "0 0" (hacking) survive the narrower validator
    assert sorted(second.suite.tests.values_list("input_preview", flat=True)) == ["0 0\n", "1 2\n", "5 5\n"]
    first.suite.refresh_from_db()
    assert first.suite.status == TestSuite.Status.SUPERSEDED and second.suite.status == TestSuite.Status.ACTIVE
    assert fake_llm.requests == []


def test_a_validator_accepting_a_regression_input_fails_the_run() -> None:
    problem = make_problem()
    kit = make_kit(problem)
    kit.validator.regression_inputs = ["1 2\n"]
    kit.validator.save()
    run = run_from_kit(problem)
    assert run.failure_reason == FailureReason.VALIDATOR_INVALID
    assert "regression input(s) #1" in run.error


def test_a_problem_without_a_kit_cannot_be_regenerated_from_it() -> None:
    run = run_from_kit(make_problem())
    assert run.failure_reason == FailureReason.INPUT_GENERATION_FAILED
    assert "no test kit" in run.error


def test_stratified_generators_are_called_the_stratified_count(settings) -> None:
    settings.HARDTESTS_STRATIFIED_CALLS = 2
    stratified = (
        "import random\n\n\ndef gen_stratified_input_equal():\n    v = random.randint(0, 10**9)\n"
        "    return f'{v} {v}\\n'\n\n\ndef gen_stratified_input_different():\n"
        "    return f'{random.randint(0, 10**8)} {random.randint(10**8 + 1, 10**9)}\\n'\n"
    )
    problem = make_problem()
    result = materialise_kit(kit=make_kit(problem, direct=[], regular=stratified, hacking=""))
    kinds = {(t.kind, t.generator) for t in result.tests}
    assert kinds == {(TestCase.Kind.STRATIFIED, "gen_stratified_input_equal"),
                     (TestCase.Kind.STRATIFIED, "gen_stratified_input_different")}
    assert result.counts["stratified"]["generated"] == 4


def test_a_batch_generator_is_called_once_and_its_list_used() -> None:
    problem = make_problem()
    v = validator_create(problem=problem, code=VALIDATOR, origin=CodeOrigin.IMPORTED)
    batch = ("import random\n\ndef generate_test_inputs(num_cases=5):\n    random.seed(1)\n"
             "    return [f'{random.randint(0, 9)} {i}\\n' for i in range(num_cases)] + ['1 0\\n', 'bad']\n")
    kit = kit_create(problem=problem, origin=CodeOrigin.IMPORTED, validator=v, batch_generator=batch)
    result = materialise_kit(kit=kit)
    assert result.counts["regular"]["generated"] == 7 and result.counts["regular"]["invalid"] == 1
    assert {t.generator for t in result.tests} == {"generate_test_inputs"}
    assert result.counts["total"]["kept"] == len(result.tests) >= 5


def test_oracles_run_in_reliability_order_with_unsupported_languages_skipped() -> None:
    problem = make_problem(oracles=[("python2", "print 1\n"), ("python3", ORACLE_PY), ("cpp", ORACLE_CPP)])
    result = materialise_kit(kit=make_kit(problem, hacking=""))
    assert result.oracle_id == problem.solutions.get(reliability=2).pk
    assert result.second_oracle_id == problem.solutions.get(reliability=3).pk


def test_calls_stuck_in_c_code_fall_back_to_one_process_per_call(settings) -> None:
    # sum(range(...)) runs in C, where the per-call timer cannot interrupt it: the shared
    # process dies at its limit and the calls are made again, one process each.
    settings.HARDTESTS_GENERATOR_TIME_S = 0.5
    settings.HARDTESTS_HACKING_CALLS = 4
    hacking = (
        "import os\n\n\ndef gen_hacking_input_stuck():\n    return str(sum(range(10**13)))\n\n\n"
        "def gen_hacking_input_exit():\n    os._exit(0)\n"
    )
    problem = make_problem()
    result = materialise_kit(kit=make_kit(problem, regular="", hacking=hacking))
    hacking = result.counts["hacking"]
    assert hacking["generated"] == 8 and hacking["failed"] == 8
    assert result.counts["direct"]["kept"] == 2
