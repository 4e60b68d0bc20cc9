"""Malformed replies, timeouts and server errors from the (loopback) LLM."""

from __future__ import annotations

import json

import pytest

from generation.models import FailureReason, GenerationRun
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from tests.generation.conftest import VALIDATOR, FakeLLM, inputs_reply, make_problem, validator_reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]

MISSING_JSON = "I think the validator should check two integers. Here it is:\n\ndef validate_input(s): return True\n"
WRONG_KEYS = "```json\n" + json.dumps({"validator": VALIDATOR, "judge": None}) + "\n```"
UNPARSABLE = validator_reply("def validate_input(input_str)\n    return True\n")
MISSING_FUNCTION = validator_reply("def check(input_str):\n    return True\n")
WRONG_TYPE = "```json\n" + json.dumps({"input_validator": VALIDATOR, "needs_custom_output_judging_function": "no",
                                       "output_judging_function": None}) + "\n```"


def start(problem) -> GenerationRun:
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False)
    return generation_run_execute(run_id=run.pk)


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (MISSING_JSON, "no JSON object found"),
        (WRONG_KEYS, "lacks the key(s) 'input_validator'"),
        (UNPARSABLE, "not valid Python"),
        (MISSING_FUNCTION, "does not define a top-level function `validate_input`"),
        (WRONG_TYPE, "must be true or false"),
    ],
    ids=["missing-json", "wrong-keys", "unparsable-code", "missing-function", "wrong-type"],
)
def test_a_malformed_reply_is_retried_with_the_error_fed_back(fake_llm: FakeLLM, bad: str, error: str) -> None:
    problem = make_problem()
    fake_llm.reply(bad, bad)
    run = start(problem)
    assert run.status == GenerationRun.Status.FAILED
    assert run.failure_reason == FailureReason.LLM_REPLY_INVALID
    calls = list(run.llm_calls.order_by("id"))
    assert [c.purpose for c in calls] == ["validator", "validator_retry1"]
    # the reply is kept for inspection, with the reason it was rejected
    assert all(c.reply == bad and error in c.parse_error for c in calls)
    retry = fake_llm.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": bad}
    assert error in retry[-1]["content"]
    assert not problem.kits.exists() and not problem.inputvalidators.exists()


def test_a_retry_that_fixes_the_reply_carries_on(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    bad_inputs = "```json\n" + json.dumps({"LLMGen_input": [1, 2], "RPGen_SPGen_input_generator": None,
                                           "HackGen_input_generator": None}) + "\n```"
    fake_llm.reply(MISSING_FUNCTION, validator_reply(), bad_inputs, inputs_reply())
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    purposes = list(run.llm_calls.order_by("id").values_list("purpose", "parse_error"))
    assert [p for p, _ in purposes] == ["validator", "validator_retry1", "inputs", "inputs_retry1"]
    assert "'LLMGen_input'[0] must be a string" in purposes[2][1]
    assert purposes[1][1] == "" and purposes[3][1] == ""


def test_server_errors_are_retried_with_backoff(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    fake_llm.error(500).error(429).reply(validator_reply()).error(503).reply(inputs_reply())
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    calls = list(run.llm_calls.order_by("id").values_list("purpose", "attempt", "error"))
    assert [(p, a) for p, a, _ in calls] == [("validator", 1), ("validator", 2), ("validator", 3),
                                            ("inputs", 1), ("inputs", 2)]
    assert "InternalServerError" in calls[0][2] and "RateLimitError" in calls[1][2]


def test_server_errors_until_the_retries_run_out_fail_with_llm_unavailable(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    fake_llm.reply(validator_reply()).error(502, times=3)
    run = start(problem)
    assert run.failure_reason == FailureReason.LLM_UNAVAILABLE
    assert "3 attempt(s)" in run.error
    assert run.llm_calls.filter(purpose="inputs").count() == 3


def test_timeouts_are_retried_then_fail_with_llm_unavailable(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_LLM_TIMEOUT_S = 0.3
    settings.HARDTESTS_LLM_MAX_RETRIES = 1
    problem = make_problem()
    fake_llm.slow(1.5, validator_reply(), times=2)
    run = start(problem)
    assert run.failure_reason == FailureReason.LLM_UNAVAILABLE
    errors = list(run.llm_calls.values_list("error", flat=True))
    assert len(errors) == 2 and all("Timeout" in e for e in errors)


def test_a_timeout_then_a_reply_succeeds(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_LLM_TIMEOUT_S = 0.5
    problem = make_problem()
    fake_llm.slow(2.0, validator_reply()).reply(validator_reply(), inputs_reply())
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error


def test_no_llm_configured_fails_with_llm_unavailable(settings) -> None:
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    run = start(make_problem())
    assert run.failure_reason == FailureReason.LLM_UNAVAILABLE
    assert "no LLM endpoint configured" in run.error


def test_a_problem_without_a_usable_oracle_fails_before_calling_the_llm(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_ORACLE_FREE_AUTO = False  # on, the run becomes oracle-free (tests/generation/test_oracle_free.py)
    problem = make_problem(oracles=[("python2", "print 1\n")])
    run = start(problem)
    assert run.failure_reason == FailureReason.NO_VALID_ORACLE
    assert fake_llm.requests == []


def test_a_problem_with_no_oracle_at_all_is_pointed_at_the_oracle_free_modes(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_ORACLE_FREE_AUTO = False
    problem = make_problem(oracles=[])
    run = start(problem)
    assert run.failure_reason == FailureReason.NO_VALID_ORACLE
    assert "--mode oracle_free" in run.error and "0 of 0" not in run.error
    assert fake_llm.requests == []


def test_a_validator_rejecting_a_sample_is_sent_back_once(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    too_strict = VALIDATOR.replace("int(p) > 10**9", "int(p) > 1")  # rejects the sample "1 2"
    fake_llm.reply(validator_reply(too_strict), validator_reply(), inputs_reply())
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    first = run.llm_calls.order_by("id").first()
    assert "rejects sample input #1" in first.parse_error
    assert "rejects sample input #1" in fake_llm.requests[1]["messages"][-1]["content"]
    assert run.kit.validator.code == VALIDATOR


def test_a_validator_accepting_a_regression_input_is_sent_back(fake_llm: FakeLLM) -> None:
    from problems.models import CodeOrigin
    from problems.services import validator_create

    problem = make_problem()
    old = validator_create(problem=problem, code=VALIDATOR, origin=CodeOrigin.LLM)
    old.regression_inputs = ["0 1000000000\n"]  # say a reviewer found b must stay below 1e9
    old.save()
    stricter = VALIDATOR.replace("int(p) > 10**9", "int(p) >= 10**9")
    fake_llm.reply(validator_reply(), validator_reply(stricter), inputs_reply())
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert "a reviewer showed to be invalid" in run.llm_calls.order_by("id").first().parse_error
    assert run.kit.validator.code == stricter and run.kit.validator.regression_inputs == ["0 1000000000\n"]
