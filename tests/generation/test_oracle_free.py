"""Oracle-free suites (HardTests A.7) and AceCoder's baseline, with the LLM faked on the loopback
server and everything else real (sandbox, database)."""

from __future__ import annotations

import json

import pytest

from generation.models import FailureReason, GenerationRun, LLMCall
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.blobs import blobs_iter
from problems.judging import judge_code
from problems.models import Solution, TestCase, TestSuite
from tests.generation.conftest import FakeLLM
from tests.oracle_free_kit import (
    BRUTE_WRONG_ON_SAMPLE,
    BRUTE_WRONG_ON_SINGLE,
    CRASHES_WHEN_BIG,
    KADANE,
    QUADRATIC,
    RESET_TO_ZERO,
    a7_reply,
    brute_reply,
    kadane,
    make_solutionless,
)

pytestmark = [pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _limits(settings) -> None:
    settings.HARDTESTS_GENERATOR_TIME_S = 5.0
    settings.HARDTESTS_CHECKER_TIME_S = 5.0
    settings.HARDTESTS_BRUTE_FORCE_TIME_S = 5.0


def run_mode(problem, mode: str = GenerationRun.Mode.ORACLE_FREE) -> GenerationRun:
    run = generation_run_start(problem=problem, mode=mode, enqueue=False)
    return generation_run_execute(run_id=run.pk)


def body(sha: str) -> str:
    return next(blobs_iter([sha])).decode()


def test_a7_suite_has_brute_force_outputs_checked_and_one_time_only_test(fake_llm: FakeLLM) -> None:
    problem = make_solutionless()
    fake_llm.reply(a7_reply(), brute_reply())
    # A from-scratch run of a problem with no oracle becomes oracle-free by itself.
    run = run_mode(problem, GenerationRun.Mode.FROM_SCRATCH)
    assert run.mode == GenerationRun.Mode.ORACLE_FREE
    assert run.status == "succeeded", run.error
    suite = run.suite
    assert suite.origin == TestSuite.Origin.ORACLE_FREE and suite.status == TestSuite.Status.ACTIVE
    tests = list(suite.tests.order_by("ordinal"))
    kinds = [t.kind for t in tests]
    assert kinds.count("public") == 2 and kinds.count("time_only") == 1
    edge = [t for t in tests if t.kind == "edge"]
    # 4 valid edge generators x 2 calls, minus duplicates; the n = 0 one is refused by the validator
    assert 5 <= len(edge) <= 8
    assert all(body(t.input_sha256) != "0\n\n" for t in tests)
    for t in edge:
        assert int(body(t.output_sha256)) == kadane(body(t.input_sha256))
        assert t.output_origin == TestCase.OutputOrigin.BRUTE_FORCE and t.oracle_id is None
    (big,) = [t for t in tests if t.kind == "time_only"]
    assert big.output_origin == TestCase.OutputOrigin.NONE and big.output_size == 0
    assert body(big.input_sha256).startswith("200000\n")
    assert {t.output_origin for t in tests if t.kind == "public"} == {TestCase.OutputOrigin.STATEMENT}
    trust = suite.trust
    assert trust["method"] == "hardtests_a7" and trust["brute_force"]["samples_passed"] == 2
    assert trust["cross_check"]["with"] == "second_brute_force" and trust["cross_check"]["used"] is True
    assert trust["cross_check"]["agreed"] == trust["cross_check"]["compared"] == len(edge)
    assert trust["model_made_outputs"] == len(edge) and trust["time_only_tests"] == 1
    assert suite.unverified is True
    calls = list(LLMCall.objects.filter(run=run).order_by("id").values_list("purpose", "prompt_version"))
    assert calls == [("oracle_free", "oracle_free_v1"),
                     ("oracle_free_second_brute_force", "oracle_free_bruteforce_v1")]
    # the model's programs are kept on the kit, never as solutions a later run would trust as oracles
    assert not problem.solutions.exists()
    assert suite.kit.extra["brute_force"].startswith("\nn = int(input())")

    verdicts = {name: judge_code(problem=problem, suite=suite, language="python3", code=code, mode="all").verdict
                for name, code in (("kadane", KADANE), ("quadratic", QUADRATIC), ("reset", RESET_TO_ZERO),
                                   ("crash", CRASHES_WHEN_BIG))}
    assert verdicts == {"kadane": "AC", "quadratic": "TLE", "reset": "WA", "crash": "RE"}


def test_a_brute_force_that_fails_the_samples_is_refused_with_its_reason(fake_llm: FakeLLM) -> None:
    problem = make_solutionless()
    fake_llm.reply(a7_reply(brute=BRUTE_WRONG_ON_SAMPLE), a7_reply(brute=BRUTE_WRONG_ON_SAMPLE), brute_reply())
    run = run_mode(problem)
    assert run.status == "failed"
    assert run.failure_reason == FailureReason.BRUTE_FORCE_REJECTED
    assert "sample #1" in run.error and "expected '7\\n'" in run.error
    assert not problem.suites.exists()
    # the model was told why, with the failing sample
    feedback = fake_llm.requests[1]["messages"][-1]["content"]
    assert "does not reproduce the statement's samples" in feedback and "sample #1" in feedback


def test_a_refused_brute_force_sent_back_and_fixed_is_used(fake_llm: FakeLLM) -> None:
    problem = make_solutionless()
    fake_llm.reply(a7_reply(brute=BRUTE_WRONG_ON_SAMPLE), a7_reply(), brute_reply())
    run = run_mode(problem)
    assert run.status == "succeeded", run.error
    assert LLMCall.objects.filter(run=run, parse_error__contains="sample #1").count() == 1


def test_a_brute_force_the_second_one_contradicts_is_not_used(fake_llm: FakeLLM) -> None:
    # Passes the samples, but answers 0 for one-element arrays: the independent brute force disagrees.
    problem = make_solutionless()
    fake_llm.reply(a7_reply(brute=BRUTE_WRONG_ON_SINGLE, efficient=None), brute_reply())
    run = run_mode(problem)
    assert run.status == "failed" and run.failure_reason == FailureReason.BRUTE_FORCE_UNCONFIRMED, run.error
    assert not problem.suites.exists()


def test_the_efficient_solution_cross_checks_when_there_is_no_second_brute_force(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_ORACLE_FREE_SECOND_BRUTE_FORCE = False
    problem = make_solutionless()
    fake_llm.reply(a7_reply())
    run = run_mode(problem)
    assert run.status == "succeeded", run.error
    assert run.suite.trust["cross_check"]["with"] == "efficient_solution"
    assert len(fake_llm.requests) == 1


def test_without_a_max_input_the_suite_says_so_and_slow_programs_pass(fake_llm: FakeLLM) -> None:
    problem = make_solutionless()
    fake_llm.reply(a7_reply(maximum=None), brute_reply())
    run = run_mode(problem)
    assert run.status == "succeeded", run.error
    assert run.suite.trust["time_only_tests"] == 0 and run.suite.trust["max_test"]["status"] == "missing"
    slow = judge_code(problem=problem, suite=run.suite, language="python3", code=QUADRATIC, mode="all")
    assert slow.verdict == "AC"  # what the time-only test exists to catch


ACE_SOLUTION = "```json\n" + json.dumps({"solution": KADANE}) + "\n```"


def ace_pairs(pairs: list[tuple[str, str]]) -> str:
    return "```json\n" + json.dumps({"test_cases": [{"input": i, "output": o} for i, o in pairs]}) + "\n```"


GOOD_PAIRS = [(f"{n}\n" + " ".join(str(v) for v in range(-n, n, 2)) + "\n", "") for n in range(1, 8)]
GOOD_PAIRS = [(i, f"{kadane(i)}\n") for i, _ in GOOD_PAIRS]
WRONG_PAIRS = [("2\n-5 -7\n", "0\n"), ("1\n4\n", "5\n"), ("3\n1 2 3\n", "5\n")]


def test_acecoder_keeps_the_pairs_its_solution_reproduces(fake_llm: FakeLLM) -> None:
    problem = make_solutionless(candidates=True)
    fake_llm.reply(ace_pairs(GOOD_PAIRS + WRONG_PAIRS), ACE_SOLUTION)
    run = run_mode(problem, GenerationRun.Mode.ACECODER)
    assert run.status == "succeeded", run.error
    suite = run.suite
    assert suite.origin == TestSuite.Origin.ORACLE_FREE and suite.trust["method"] == "acecoder"
    kept = [(body(t.input_sha256), body(t.output_sha256)) for t in suite.tests.order_by("ordinal")]
    assert kept == GOOD_PAIRS
    assert set(suite.tests.values_list("output_origin", flat=True)) == {TestCase.OutputOrigin.MODEL_PAIR}
    assert suite.trust["cross_check"] == {"with": "model_solution", "agreed": 7, "compared": 10,
                                          "judged_with": "comparison:tokens"}
    # no max-size test: the slow candidate passes, as the paper's comparison shows
    assert judge_code(problem=problem, suite=suite, language="python3", code=QUADRATIC, mode="all").verdict == "AC"


def test_acecoder_drops_a_problem_under_five_tests(fake_llm: FakeLLM) -> None:
    problem = make_solutionless()
    fake_llm.reply(ace_pairs(GOOD_PAIRS[:4] + WRONG_PAIRS), ACE_SOLUTION)
    run = run_mode(problem, GenerationRun.Mode.ACECODER)
    assert run.status == "failed" and run.failure_reason == FailureReason.TOO_FEW_TESTS
    assert "4 of 7" in run.error and not problem.suites.exists()


def test_a_problem_with_oracles_still_runs_from_scratch(fake_llm: FakeLLM) -> None:
    problem = make_solutionless()
    Solution.objects.create(problem=problem, role="oracle", language="python3", code=KADANE, code_sha256="x")
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False)
    assert run.mode == GenerationRun.Mode.FROM_SCRATCH


def test_a_judging_function_that_accepts_anything_is_refused(fake_llm: FakeLLM) -> None:
    problem = make_solutionless()
    anything = "def output_judging_function(input_str, candidate_output, reference_output):\n    return True\n"
    reply = json.loads(a7_reply().split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    reply.update(needs_custom_output_judging_function=True, output_judging_function=anything,
                 brute_force_solution="print(0)\n")
    text = "```json\n" + json.dumps(reply) + "\n```"
    fake_llm.reply(text, text)
    run = run_mode(problem)
    assert run.status == "failed" and run.failure_reason == FailureReason.JUDGE_INVALID
    assert "accepts wrong outputs" in run.error and not problem.suites.exists()
