"""The shared LLM token buckets in Redis: requests and tokens per minute per model."""

from __future__ import annotations

import time
from typing import Any

import pytest

from core.queues import redis_connection
from generation.ratelimit import llm_rate_settle, llm_rate_take, llm_rate_wait, rate_limits


@pytest.fixture(autouse=True)
def _fresh_buckets() -> None:
    conn = redis_connection()
    for key in conn.scan_iter("hardtests:llm:bucket:*"):
        conn.delete(key)


def test_requests_per_minute_are_shared_and_refill(settings: Any) -> None:
    settings.HARDTESTS_LLM_RATE_LIMITS = ["rpm-model=120:0"]
    assert rate_limits("rpm-model") == (120, 0)
    assert [llm_rate_take(model="rpm-model", tokens=1) for _ in range(120)] == [0.0] * 120
    wait = llm_rate_take(model="rpm-model", tokens=1)
    assert 0.2 < wait <= 0.5  # one request refills every 0.5 s at 120 per minute
    # Another model has its own bucket; a model without limits is never held.
    settings.HARDTESTS_LLM_RATE_LIMITS = ["rpm-model=120:0", "other=120:0"]
    assert llm_rate_take(model="other", tokens=1) == 0.0
    assert llm_rate_take(model="unlimited", tokens=10**9) == 0.0
    start = time.monotonic()
    llm_rate_wait(model="rpm-model", messages=[{"role": "user", "content": "hi"}])
    assert time.monotonic() - start >= 0.2


def test_tokens_per_minute_and_settling_the_real_usage(settings: Any) -> None:
    settings.HARDTESTS_LLM_RATE_LIMITS = ["tpm-model=0:6000"]
    assert llm_rate_take(model="tpm-model", tokens=4000) == 0.0
    wait = llm_rate_take(model="tpm-model", tokens=4000)
    assert 15 < wait <= 20  # 2,000 tokens short at 100 per second
    # The reply used 3,000 more than estimated: the bucket goes into debt.
    llm_rate_settle(model="tpm-model", estimated=1000, actual=4000)
    assert 10 < llm_rate_take(model="tpm-model", tokens=100) <= 11.5  # 1,000 in debt + 100 wanted
    # A refused call gives its estimate back.
    llm_rate_settle(model="tpm-model", estimated=6000, actual=0)
    assert llm_rate_take(model="tpm-model", tokens=100) == 0.0
