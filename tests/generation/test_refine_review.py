"""Checker review (second stage of call 1): a revised judge or validator replaces the original only
after passing the self-checks. Loopback fake LLM, real sandbox."""

from __future__ import annotations

import json

import pytest

from generation.models import GenerationRun, LLMCall
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.models import TestKit
from tests.generation.conftest import VALIDATOR, FakeLLM, inputs_reply, make_problem, validator_reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]

TOKENS_JUDGE = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
                "    return candidate_output.split() == reference_output.split()\n")
REVIEWED_JUDGE = ("# reviewed: compare as integers\n"
                  "def output_judging_function(input_str, candidate_output, reference_output):\n"
                  "    try:\n        return [int(t) for t in candidate_output.split()] == "
                  "[int(t) for t in reference_output.split()]\n"
                  "    except ValueError:\n        return False\n")
REJECT_ALL = "def output_judging_function(input_str, candidate_output, reference_output):\n    return False\n"


def review_reply(judge: str | None, *, judge_ok: bool = False, validator: str | None = None) -> str:
    obj = {"validator_ok": validator is None, "judge_ok": judge_ok, "problems": ["the judge compares text"],
           "input_validator": validator, "output_judging_function": judge}
    return "Reviewing the cases.\n```json\n" + json.dumps(obj) + "\n```"


def start(fake_llm: FakeLLM, settings, *reviews: str) -> GenerationRun:
    settings.HARDTESTS_CHECKER_REVIEW = True
    problem = make_problem()
    fake_llm.reply(validator_reply(needs=True, judge=TOKENS_JUDGE), inputs_reply(), *reviews)
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False)
    return generation_run_execute(run_id=run.pk)


def test_a_revised_judge_that_passes_the_self_checks_is_used(fake_llm: FakeLLM, settings) -> None:
    run = start(fake_llm, settings, review_reply(REJECT_ALL), review_reply(REVIEWED_JUDGE))
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    calls = list(LLMCall.objects.filter(run=run, purpose__startswith="review").order_by("pk"))
    assert [c.purpose for c in calls] == ["review", "review_retry1"]
    assert all(c.prompt_version == "review_v1" for c in calls)
    assert "your revision fails a check" in calls[0].parse_error and calls[1].parse_error == ""
    assert "Sample 1 (valid by definition)" in calls[0].messages[-1]["content"]
    assert "validate_input returned False" in calls[0].messages[-1]["content"]  # e.g. "-1 5"
    assert run.suite.output_judge.code == REVIEWED_JUDGE
    assert run.kit.extra["stage"] == "review" and run.kit.extra["changed"] == ["output_judging_function"]


def test_a_revised_judge_that_fails_the_self_checks_is_never_used(fake_llm: FakeLLM, settings) -> None:
    run = start(fake_llm, settings, review_reply(REJECT_ALL), review_reply(REJECT_ALL))
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.suite.output_judge.code == TOKENS_JUDGE
    assert not TestKit.objects.filter(problem=run.problem, extra__stage="review").exists()
    assert "checker review not applied" in run.log


def test_a_review_that_finds_nothing_keeps_the_checkers(fake_llm: FakeLLM, settings) -> None:
    run = start(fake_llm, settings, review_reply(None, judge_ok=True))
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.suite.output_judge.code == TOKENS_JUDGE and run.suite.validator.code == VALIDATOR
    assert TestKit.objects.filter(problem=run.problem).count() == 1
