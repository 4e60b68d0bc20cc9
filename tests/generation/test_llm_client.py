"""generation.llm.chat against the loopback server: records, retries, the concurrency limit."""

from __future__ import annotations

import threading
import time

import pytest

from core.queues import redis_connection
from generation import llm
from generation.llm import LLMUnavailable, chat
from generation.models import GenerationRun
from tests.generation.conftest import FakeLLM, make_problem

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


def _run() -> GenerationRun:
    return GenerationRun.objects.create(problem=make_problem(), mode=GenerationRun.Mode.FROM_SCRATCH,
                                        model_name="run-model")


@pytest.mark.django_db
def test_a_call_is_recorded_with_its_prompt_reply_tokens_and_latency(fake_llm: FakeLLM) -> None:
    run = _run()
    fake_llm.reply("hi there")
    reply, call = chat(run=run, purpose="validator", messages=MESSAGES, prompt_version="validator_v1",
                       temperature=0.5)
    assert reply == "hi there"
    call.refresh_from_db()
    assert (call.purpose, call.prompt_version, call.messages, call.reply) == (
        "validator", "validator_v1", MESSAGES, "hi there")
    assert call.model_name == "run-model" and call.temperature == 0.5
    assert call.prompt_tokens and call.completion_tokens and call.latency_ms is not None and not call.error
    sent = fake_llm.requests[0]
    assert sent["model"] == "run-model" and sent["messages"] == MESSAGES and sent["temperature"] == 0.5


@pytest.mark.django_db
def test_client_errors_are_not_retried(fake_llm: FakeLLM) -> None:
    run = _run()
    fake_llm.error(400).reply("never reached")
    with pytest.raises(LLMUnavailable, match="1 attempt"):
        chat(run=run, purpose="validator", messages=MESSAGES)
    assert run.llm_calls.count() == 1 and "400" in run.llm_calls.get().error


@pytest.mark.django_db(transaction=True)
def test_the_concurrency_limit_holds_across_threads(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_LLM_CONCURRENCY = 1
    redis_connection().delete(llm._SEMAPHORE_KEY)  # slots another test's killed worker left
    run = _run()
    fake_llm.slow(0.4, "a", times=3)
    spans: list[tuple[float, float]] = []

    def one() -> None:
        from django.db import connection

        try:
            start = time.monotonic()
            _, call = chat(run=run, purpose="validator", messages=MESSAGES)
            spans.append((start, time.monotonic()))
        finally:
            connection.close()

    threads = [threading.Thread(target=one) for _ in range(3)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(spans) == 3 and run.llm_calls.count() == 3
    # one at a time: three 0.4 s replies take at least 1.2 s
    assert time.monotonic() - started >= 1.2


@pytest.mark.django_db
def test_a_killed_holders_slot_frees_when_its_lease_ends(fake_llm: FakeLLM, settings) -> None:
    # A worker killed mid-call never releases; its lease (not renewed any more) ends.
    settings.HARDTESTS_LLM_CONCURRENCY = 1
    conn = redis_connection()
    conn.delete(llm._SEMAPHORE_KEY)
    conn.zadd(llm._SEMAPHORE_KEY, {"killed-worker": time.time() - llm._LEASE_S - 1})
    fake_llm.reply("a")
    reply, _ = chat(run=_run(), purpose="validator", messages=MESSAGES)
    assert reply == "a" and conn.zcard(llm._SEMAPHORE_KEY) == 0


def test_a_held_slot_is_renewed_and_a_fresh_one_blocks(monkeypatch, settings) -> None:
    settings.HARDTESTS_LLM_CONCURRENCY = 1
    monkeypatch.setattr(llm, "_LEASE_S", 0.6)
    conn = redis_connection()
    conn.delete(llm._SEMAPHORE_KEY)
    with llm._concurrency_slot(1):
        (token,) = conn.zrange(llm._SEMAPHORE_KEY, 0, -1)
        first = conn.zscore(llm._SEMAPHORE_KEY, token)
        time.sleep(1.5)  # more than the lease: without renewal the slot would be free
        assert conn.zscore(llm._SEMAPHORE_KEY, token) > first
        acquire = conn.register_script(llm._ACQUIRE_LUA)
        now = time.time()
        assert acquire(keys=[llm._SEMAPHORE_KEY], args=[now, now - llm._LEASE_S, 1, "other"]) == 0
    assert conn.zcard(llm._SEMAPHORE_KEY) == 0
