"""The whole pipeline in-process: loopback LLM, real sandbox, real database."""

from __future__ import annotations

import pytest

from generation.models import FailureReason, GenerationRun, LLMCall
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.models import TestCase, TestSuite
from tests.generation.conftest import (
    HACKING,
    VALIDATOR,
    FakeLLM,
    inputs_reply,
    make_problem,
    validator_reply,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]


def run_from_scratch(problem, **kwargs) -> GenerationRun:
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False, **kwargs)
    return generation_run_execute(run_id=run.pk)


def test_good_replies_make_an_active_suite_with_provenance(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    fake_llm.reply(validator_reply(style="heading"), inputs_reply())
    run = run_from_scratch(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    suite = run.suite
    assert suite.status == TestSuite.Status.ACTIVE and suite.origin == TestSuite.Origin.GENERATED
    assert suite.kit == run.kit and suite.validator == run.kit.validator
    tests = list(suite.tests.all())
    assert {t.kind for t in tests} == {TestCase.Kind.DIRECT, TestCase.Kind.REGULAR, TestCase.Kind.HACKING}
    oracle1 = problem.solutions.get(reliability=1)
    for test in tests:
        assert test.validator_version == run.kit.validator.version
        assert test.oracle_id == oracle1.pk
        assert test.generator and test.call_number >= 1
    hacking = {t.generator for t in tests if t.kind == TestCase.Kind.HACKING}
    assert hacking == {"gen_hacking_input_big"}  # the zeros input duplicates a direct input
    big = next(t for t in tests if t.generator == "gen_hacking_input_big")
    assert big.output_preview.startswith("19999999")
    # the kit and its code are new versions written by the LLM
    assert run.kit.origin == "llm" and run.kit.model_name == "fake-model"
    assert run.kit.validator.code == VALIDATOR and run.kit.hacking_generator == HACKING
    # every call recorded, the second prompt carries the validator
    calls = list(run.llm_calls.order_by("id"))
    assert [c.purpose for c in calls] == ["validator", "inputs"]
    assert all(c.prompt_tokens and c.completion_tokens and c.latency_ms is not None for c in calls)
    assert calls[0].prompt_version == "validator_v2" and calls[1].prompt_version == "inputs_v2"
    assert "validate_input" in fake_llm.requests[1]["messages"][-1]["content"]
    assert "Print $a+b$" in fake_llm.requests[0]["messages"][-1]["content"]
    assert set(run.stage_seconds) >= {"llm_validator", "llm_inputs", "generating", "validating", "oracles", "saving"}
    assert "suite v1 active" in run.log


def test_invalid_direct_inputs_are_filtered_and_duplicates_dropped(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    fake_llm.reply(validator_reply(), inputs_reply())
    run = run_from_scratch(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    direct = run.counts["direct"]
    # 7 direct inputs: "1 2" twice (one duplicate), "-1 5" and "3 4 5" invalid
    assert direct == {"generated": 7, "failed": 0, "invalid": 2, "duplicate": 1, "validator_error": 0,
                      "disagreement": 0, "kept": 4}
    hacking = run.counts["hacking"]
    assert hacking["generated"] == 6 and hacking["duplicate"] >= 3  # "0 0" again and again
    inputs = [t.input_preview for t in run.suite.tests.all()]
    assert len(inputs) == len(set(inputs)) and "-1 5\n" not in inputs
    assert run.counts["total"]["kept"] == run.suite.test_count


def test_a_generator_that_raises_costs_only_its_own_calls(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    hacking = HACKING + "\n\ndef gen_hacking_input_broken():\n    raise ValueError('oops')\n"
    fake_llm.reply(validator_reply(), inputs_reply(hacking=hacking))
    run = run_from_scratch(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.counts["hacking"]["failed"] == 3
    assert "gen_hacking_input_broken: 0/3 calls gave an input; first failure: ValueError: oops" in run.log
    assert run.suite.tests.filter(generator="gen_hacking_input_big").count() >= 1


def test_a_generator_that_never_returns_costs_only_its_own_calls(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_GENERATOR_TIME_S = 0.5
    settings.HARDTESTS_HACKING_CALLS = 5
    problem = make_problem()
    hacking = HACKING + "\n\ndef gen_hacking_input_forever():\n    while True:\n        pass\n"
    fake_llm.reply(validator_reply(), inputs_reply(hacking=hacking))
    run = run_from_scratch(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.counts["hacking"]["failed"] == 5
    assert "gen_hacking_input_forever: 0/5 calls gave an input" in run.log
    assert run.stage_seconds["generating"] < 30


def test_a_failed_run_leaves_the_previous_active_suite_alone(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    fake_llm.reply(validator_reply(), inputs_reply())
    first = run_from_scratch(problem)
    assert first.status == GenerationRun.Status.SUCCEEDED, first.error
    # the second attempt's generators all raise and its direct inputs are all invalid
    broken = "def gen_range_based_input():\n    raise RuntimeError('broken')\n"
    fake_llm.reply(validator_reply(), inputs_reply(direct=["x\n"], regular=broken, hacking=None))
    second = run_from_scratch(problem)
    assert second.status == GenerationRun.Status.FAILED
    assert second.failure_reason == FailureReason.INPUT_GENERATION_FAILED
    active = TestSuite.objects.get(problem=problem, origin=TestSuite.Origin.GENERATED, status=TestSuite.Status.ACTIVE)
    assert active == first.suite
    assert not TestSuite.objects.filter(problem=problem, status=TestSuite.Status.BUILDING).exists()


def test_llm_calls_are_recorded_even_when_they_fail(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    fake_llm.error(500, times=3)
    run = run_from_scratch(problem)
    assert run.status == GenerationRun.Status.FAILED
    assert run.failure_reason == FailureReason.LLM_UNAVAILABLE
    calls = list(LLMCall.objects.filter(run=run).order_by("id"))
    assert [c.attempt for c in calls] == [1, 2, 3]
    assert all("500" in c.error for c in calls)
    assert not problem.kits.exists()


def test_a_run_declared_dead_while_saving_never_activates_its_half_suite(fake_llm: FakeLLM, monkeypatch) -> None:
    from generation import pipeline
    from generation.services import run_fail

    problem = make_problem()
    fake_llm.reply(validator_reply(), inputs_reply(), validator_reply(), inputs_reply())
    first = run_from_scratch(problem)
    real_add = pipeline.suite_add_tests

    def add_then_sweep(*, suite, tests):
        count = real_add(suite=suite, tests=tests)
        # a sweeper decides the worker is dead while the suite is being written
        run_fail(run_id=suite.generation_run.pk, reason=FailureReason.WORKER_DIED, error="worker died: test",
                 from_status=(GenerationRun.Status.RUNNING,))
        return count

    monkeypatch.setattr(pipeline, "suite_add_tests", add_then_sweep)
    second = run_from_scratch(problem)
    assert second.status == GenerationRun.Status.FAILED and second.failure_reason == FailureReason.WORKER_DIED
    assert second.suite.status == TestSuite.Status.FAILED and second.suite.test_count > 0
    active = TestSuite.objects.get(problem=problem, status=TestSuite.Status.ACTIVE)
    assert active == first.suite
