"""Real LLM replies: code quoted before the answer, raw control characters, truncation, reasoning models."""

from __future__ import annotations

import json
import re

import pytest

from generation.llm import chat
from generation.models import FailureReason, GenerationRun
from generation.parsing import (
    VALIDATOR_KEYS,
    ReplyInvalid,
    extract_json,
    parse_inputs_reply,
    parse_validator_reply,
)
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from tests.generation.conftest import VALIDATOR, FakeLLM, inputs_reply, make_problem, validator_reply

OBJ = {"input_validator": VALIDATOR, "needs_custom_output_judging_function": False, "output_judging_function": None}
PYTHON_FIRST = ("Let me sketch the check first:\n```python\ndef validate_input(s):\n    return True\n```\n"
                "Now the answer:\n```json\n" + json.dumps(OBJ) + "\n```\n")
# A raw newline and a tab inside the JSON strings, as models write them.
RAW_NEWLINES = "```json\n" + re.sub(r"(?<!\\)\\n", "\n", json.dumps(OBJ))+ "\n```"


def test_a_python_block_before_the_json_block_is_skipped() -> None:
    assert parse_validator_reply(PYTHON_FIRST).input_validator == VALIDATOR


def test_raw_newlines_inside_json_strings_are_accepted() -> None:
    assert "\n" in RAW_NEWLINES.split("```json\n", 1)[1].split('"input_validator": "', 1)[1][:30]
    parsed = parse_validator_reply(RAW_NEWLINES)
    assert "def validate_input(input_str):\n" in parsed.input_validator
    assert extract_json('```json\n{"a": "x\ty\nz"}\n```') == {"a": "x\ty\nz"}


@pytest.mark.parametrize("label", ["", "JSON", "json5", "javascript", "text"])
def test_a_fence_with_any_label_holds_the_answer(label: str) -> None:
    reply = f"reasoning\n```{label}\n" + json.dumps(OBJ) + "\n```\nthat's it"
    assert extract_json(reply, VALIDATOR_KEYS) == OBJ


def test_the_last_block_with_the_expected_keys_wins_over_a_later_unrelated_one() -> None:
    reply = "```json\n" + json.dumps(OBJ) + "\n```\nExample input format:\n```json\n{\"n\": 3}\n```\n"
    assert extract_json(reply, VALIDATOR_KEYS) == OBJ


def test_an_unfenced_object_is_found_by_the_balanced_fallback() -> None:
    reply = "Here is my answer: " + json.dumps(OBJ) + " -- hope it helps {not json}"
    assert extract_json(reply, VALIDATOR_KEYS) == OBJ


def test_an_inputs_reply_with_a_python_block_first_parses() -> None:
    reply = "```python\nimport random\nprint(random.randint(1, 5))\n```\n" + inputs_reply()
    assert parse_inputs_reply(reply).regular_generator


def test_a_missing_key_is_named() -> None:
    with pytest.raises(ReplyInvalid, match="lacks the key"):
        parse_validator_reply("```json\n{\"input_validator\": \"def validate_input(s): return True\"}\n```")


@pytest.mark.django_db
def test_finish_reason_reasoning_tokens_and_max_tokens_are_recorded_and_sent(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_LLM_MAX_TOKENS = 1234
    run = GenerationRun.objects.create(problem=make_problem(), mode=GenerationRun.Mode.FROM_SCRATCH)
    fake_llm.reasoning("thought hard", 777).truncated("cut o")
    _, call = chat(run=run, purpose="validator", messages=[{"role": "user", "content": "hi"}])
    assert (call.reasoning_tokens, call.finish_reason) == (777, "stop")
    assert fake_llm.requests[0]["max_tokens"] == 1234 and "temperature" in fake_llm.requests[0]
    settings.HARDTESTS_LLM_REASONING = True
    _, call = chat(run=run, purpose="validator", messages=[{"role": "user", "content": "hi"}])
    assert call.finish_reason == "length" and call.temperature is None
    sent = fake_llm.requests[1]
    assert "temperature" not in sent and sent["max_completion_tokens"] == 1234 and "max_tokens" not in sent


@pytest.mark.django_db
@pytest.mark.usefixtures("small_counts")
def test_a_truncated_reply_is_named_and_fed_back_and_the_run_error_keeps_the_parse_error(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    cut = validator_reply()[:120]
    fake_llm.truncated(cut).truncated(cut)
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False)
    run = generation_run_execute(run_id=run.pk)
    assert run.failure_reason == FailureReason.LLM_REPLY_INVALID
    calls = list(run.llm_calls.order_by("id"))
    assert [c.finish_reason for c in calls] == ["length", "length"]
    assert all("cut off at the token limit" in c.parse_error for c in calls)
    assert "shorten it" in fake_llm.requests[1]["messages"][-1]["content"]
    assert "cut off at the token limit" in run.error


@pytest.mark.django_db
def test_each_sdk_retry_is_recorded_and_retry_after_ms_is_honoured(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_LLM_MAX_RETRIES = 3
    run = GenerationRun.objects.create(problem=make_problem(), mode=GenerationRun.Mode.FROM_SCRATCH)
    fake_llm.error(429).error(503).reply("fine")
    reply, call = chat(run=run, purpose="validator", messages=[{"role": "user", "content": "hi"}])
    assert reply == "fine" and call.attempt == 3
    rows = list(run.llm_calls.order_by("id").values_list("attempt", "error"))
    assert [a for a, _ in rows] == [1, 2, 3]
    assert "RateLimitError" in rows[0][1] and "InternalServerError" in rows[1][1] and rows[2][1] == ""
