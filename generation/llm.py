"""The one way this project talks to an LLM: `chat()` over the official `openai` SDK.

Any OpenAI-compatible endpoint works (OpenAI, vLLM, Ollama, llama.cpp server); settings
name it. Every attempt, failed or not, becomes an LLMCall row, so an audit shows exactly
what was sent and received. The SDK's own retries are turned off so that each attempt is
recorded; we retry here with exponential backoff on rate limits, 5xx, timeouts and
dropped connections. A Redis-based semaphore bounds concurrent calls across all workers
(the endpoint's rate limit is shared by every machine).
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import openai
from django.conf import settings

from generation.models import GenerationRun, LLMCall
from generation.ratelimit import llm_rate_wait

log = logging.getLogger(__name__)

_SEMAPHORE_KEY = "hardtests:llm:semaphore"
# Atomically drop holders that outlived any possible call (a killed worker never
# releases), then take a slot if one is free.
_ACQUIRE_LUA = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
  return 1
end
return 0
"""
_local_semaphores: dict[int, threading.BoundedSemaphore] = {}
_local_lock = threading.Lock()


class LLMUnavailable(RuntimeError):
    """The endpoint could not give a reply (after retries), or none is configured."""


def llm_configured() -> bool:
    return bool(settings.OPENAI_BASE_URL or settings.OPENAI_API_KEY)


def llm_model_default() -> str:
    return settings.HARDTESTS_LLM_MODEL


def _client() -> openai.OpenAI:
    # Local servers (vLLM, Ollama) accept any key, but the SDK insists on one.
    return _cached_client(settings.OPENAI_BASE_URL or None, settings.OPENAI_API_KEY or "not-needed",
                          settings.HARDTESTS_LLM_TIMEOUT_S)


@functools.lru_cache(maxsize=8)
def _cached_client(base_url: str | None, api_key: str, timeout: float) -> openai.OpenAI:
    # One client per process and settings: building one costs ~0.1 s of CPU (an SSL context),
    # which capped a campaign's LLM stage; the client is thread-safe and reuses connections.
    return openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)


def _backoff_s(attempt: int, error: Exception | None) -> float:
    base = float(getattr(settings, "HARDTESTS_LLM_BACKOFF_S", 1.0))
    retry_after = None
    response = getattr(error, "response", None)
    if response is not None:
        try:
            retry_after = float(response.headers.get("retry-after", ""))
        except (TypeError, ValueError):
            retry_after = None
    if retry_after is not None and retry_after >= 0:
        return min(retry_after, 60.0)
    # Full jitter: many workers retrying in lockstep would hit the limit again together.
    return random.uniform(0, min(base * 2 ** (attempt - 1), 30.0))


def _retryable(error: Exception) -> bool:
    if isinstance(error, openai.APITimeoutError | openai.APIConnectionError | openai.RateLimitError):
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code >= 500 or error.status_code in (408, 409, 429)
    return False


@contextmanager
def _concurrency_slot() -> Iterator[None]:
    limit = max(1, settings.HARDTESTS_LLM_CONCURRENCY)
    try:
        from generation.queues import redis_connection

        conn = redis_connection()
        conn.ping()
    except Exception:  # noqa: BLE001 - no Redis (e.g. --sync without a server): bound this process only
        with _local_semaphore(limit):
            yield
        return
    token = uuid.uuid4().hex
    stale_s = settings.HARDTESTS_LLM_TIMEOUT_S + 60
    acquire = conn.register_script(_ACQUIRE_LUA)
    while True:
        now = time.time()
        if acquire(keys=[_SEMAPHORE_KEY], args=[now, now - stale_s, limit, token]):
            break
        time.sleep(0.1 + random.random() * 0.2)
    try:
        yield
    finally:
        try:
            conn.zrem(_SEMAPHORE_KEY, token)
        except Exception:  # noqa: BLE001 - the slot expires by itself after stale_s
            log.warning("could not release the LLM concurrency slot %s", token)


@contextmanager
def _local_semaphore(limit: int) -> Iterator[None]:
    with _local_lock:
        sem = _local_semaphores.setdefault(limit, threading.BoundedSemaphore(limit))
    with sem:
        yield


def _usage(response: Any) -> tuple[int | None, int | None]:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None, None
    return getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)


def chat(
    *,
    run: GenerationRun,
    purpose: str,
    messages: list[dict[str, str]],
    prompt_version: str = "",
    model: str | None = None,
    temperature: float | None = None,
) -> tuple[str, LLMCall]:
    """Send one chat completion; return the reply text and the LLMCall that recorded it.

    Raises LLMUnavailable when no endpoint is configured or every attempt failed.
    """
    model = model or run.model_name or llm_model_default()
    temperature = settings.HARDTESTS_LLM_TEMPERATURE if temperature is None else temperature
    if not llm_configured():
        LLMCall.objects.create(
            run=run, purpose=purpose, prompt_version=prompt_version, messages=messages, model_name=model,
            temperature=temperature, error="no LLM endpoint configured (set OPENAI_BASE_URL or OPENAI_API_KEY)",
        )
        raise LLMUnavailable("no LLM endpoint configured (set OPENAI_BASE_URL or OPENAI_API_KEY)")
    client = _client()
    attempts = 1 + max(0, settings.HARDTESTS_LLM_MAX_RETRIES)
    last_error = ""
    for attempt in range(1, attempts + 1):
        started = time.monotonic()
        error: Exception | None = None
        llm_rate_wait(model=model, messages=messages)  # shared RPM/TPM buckets (generation.ratelimit)
        try:
            with _concurrency_slot():
                started = time.monotonic()
                response = client.chat.completions.create(model=model, messages=messages, temperature=temperature)
        except openai.OpenAIError as exc:
            error = exc
        latency_ms = int((time.monotonic() - started) * 1000)
        if error is None:
            choices = getattr(response, "choices", None) or []
            content = choices[0].message.content if choices and choices[0].message else None
            prompt_tokens, completion_tokens = _usage(response)
            call = LLMCall.objects.create(
                run=run, purpose=purpose, prompt_version=prompt_version, messages=messages,
                reply=content or "", model_name=getattr(response, "model", None) or model,
                temperature=temperature, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                latency_ms=latency_ms, attempt=attempt,
            )
            return content or "", call
        last_error = f"{type(error).__name__}: {error}"[:2000]
        LLMCall.objects.create(
            run=run, purpose=purpose, prompt_version=prompt_version, messages=messages, model_name=model,
            temperature=temperature, latency_ms=latency_ms, error=last_error, attempt=attempt,
        )
        if not _retryable(error) or attempt == attempts:
            break
        time.sleep(_backoff_s(attempt, error))
    raise LLMUnavailable(f"the LLM endpoint failed after {attempt} attempt(s): {last_error}")
