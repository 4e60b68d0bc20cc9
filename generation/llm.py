"""The one way this project talks to an LLM: `chat()` over the official `openai` SDK.

Any OpenAI-compatible endpoint works (OpenAI, vLLM, Ollama, llama.cpp server); an LLMConfig
names it and says how to ask (model, temperature, token limit, timeouts). Callers pass one
(`llm=`); an entry point that has none takes LLMConfig.from_settings(), so a stand-in endpoint
(the Table 8 demo's) is a value handed down, never a process-wide change of settings.
Retries are the SDK's own (rate limits, 5xx, timeouts, dropped connections, with its backoff
and its reading of `retry-after-ms` and of `Retry-After` in seconds or as a date). A thin
HTTP transport under the SDK notes every attempt, so each one, failed or not, becomes an
LLMCall row and an audit shows exactly what was sent and received. A Redis-based semaphore
bounds concurrent calls across all workers (the endpoint's rate limit is shared by every
machine).
"""

from __future__ import annotations

import contextvars
import functools
import logging
import random
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx
from django.conf import settings

from generation.models import GenerationRun, LLMCall
from generation.ratelimit import llm_rate_wait
from hardtests_client.client import tls_context

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

_SEMAPHORE_KEY = "hardtests:llm:semaphore"
# A slot is a lease: its holder's process renews it at least every _LEASE_S / 3 while the call runs,
# so a killed worker (which never releases) frees its slots within _LEASE_S, not after the
# longest possible call. Acquiring atomically drops expired leases, then takes a free slot.
_LEASE_S = 30.0
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
_held: dict[str, Any] = {}  # token -> Redis connection, for the renewing thread
_held_lock = threading.Lock()
_renewer: threading.Thread | None = None
# The LLM stage runs more threads than calls in flight (the rest parse, review and write); this
# bounds the calls of this process on the network, set by llm_in_flight_limit().
_in_flight_gate: threading.BoundedSemaphore | None = None


class LLMUnavailable(RuntimeError):
    """The endpoint could not give a reply (after retries), or none is configured."""


@dataclass(frozen=True)
class LLMConfig:
    """Which endpoint answers and how it is asked: everything chat() reads. Frozen (a value
    shared by threads; the client cache is keyed by its endpoint fields)."""

    base_url: str = ""  # "": the SDK's default (OpenAI)
    api_key: str = field(default="", repr=False)  # never in a log line or a traceback
    model: str = "gpt-4o"  # for a run without a model of its own
    temperature: float = 0.2
    timeout_s: float = 300.0
    max_retries: int = 4  # the SDK's retries of one call
    max_tokens: int = 16384  # 0: no limit sent
    reasoning: bool = False  # a reasoning model: no temperature, max_completion_tokens
    concurrency: int = 32  # calls in flight across every worker
    solution_model: str = ""  # AceCoder's filtering solution; "": the run's model

    @classmethod
    def from_settings(cls) -> LLMConfig:
        return cls(
            base_url=settings.OPENAI_BASE_URL or "", api_key=settings.OPENAI_API_KEY or "",
            model=settings.HARDTESTS_LLM_MODEL, temperature=float(settings.HARDTESTS_LLM_TEMPERATURE),
            timeout_s=float(settings.HARDTESTS_LLM_TIMEOUT_S), max_retries=max(0, settings.HARDTESTS_LLM_MAX_RETRIES),
            max_tokens=settings.HARDTESTS_LLM_MAX_TOKENS or 0, reasoning=bool(settings.HARDTESTS_LLM_REASONING),
            concurrency=max(1, settings.HARDTESTS_LLM_CONCURRENCY),
            solution_model=(settings.HARDTESTS_ACECODER_SOLUTION_MODEL or "").strip(),
        )

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.api_key)


def llm_configured(llm: LLMConfig | None = None) -> bool:
    return (llm or LLMConfig.from_settings()).configured


def llm_model_default(llm: LLMConfig | None = None) -> str:
    return (llm or LLMConfig.from_settings()).model


@dataclass
class Attempt:
    """One HTTP request the SDK made: how long it took and, when it failed, why."""

    latency_ms: int
    error: str = ""


# The SDK's exception class for an HTTP status, so a recorded attempt reads like the error the SDK raises.
_STATUS_ERRORS = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                  404: "NotFoundError", 409: "ConflictError", 422: "UnprocessableEntityError",
                  429: "RateLimitError"}


@dataclass
class _Call:
    """What the transport needs to know about the chat() call its requests belong to."""

    model: str
    messages: list[dict[str, Any]]
    attempts: list[Attempt]


# Set by chat() for the duration of one call; each thread (a campaign's LLM stage runs many) has its own.
_current_call: contextvars.ContextVar[_Call] = contextvars.ContextVar("hardtests_llm_call")


class _RecordingTransport(httpx.HTTPTransport):
    """Under the SDK, so it sees every attempt the SDK's retries make: each passes the shared
    rate-limit buckets first (generation.ratelimit) and is noted for the audit."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        call = _current_call.get(None)
        attempts = call.attempts if call is not None else []
        if call is not None:
            llm_rate_wait(model=call.model, messages=call.messages)
        started = time.monotonic()
        try:
            response = super().handle_request(request)
        except httpx.TimeoutException as exc:
            attempts.append(Attempt(_ms_since(started), f"APITimeoutError: Request timed out ({exc!r})"))
            raise
        except httpx.HTTPError as exc:
            attempts.append(Attempt(_ms_since(started), f"APIConnectionError: {exc!r}"))
            raise
        if response.status_code >= 400:
            body = response.read()[:1000].decode("utf-8", "replace")
            name = _STATUS_ERRORS.get(response.status_code,
                                      "InternalServerError" if response.status_code >= 500 else "APIStatusError")
            attempts.append(Attempt(_ms_since(started), f"{name}: HTTP {response.status_code}: {body}"))
        else:
            attempts.append(Attempt(_ms_since(started)))
        return response


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _client(llm: LLMConfig) -> openai.OpenAI:
    # Local servers (vLLM, Ollama) accept any key, but the SDK insists on one.
    return _cached_client(llm.base_url or None, llm.api_key or "not-needed", llm.timeout_s, max(0, llm.max_retries))


@functools.lru_cache(maxsize=8)
def _cached_client(base_url: str | None, api_key: str, timeout: float, retries: int) -> openai.OpenAI:
    # One client per process and endpoint, and one TLS context per process (building one costs
    # 21 ms of CPU): the client is thread-safe and reuses connections.
    # The SDK is imported here, not with the module: it is 0.3-0.6 s of CPU, and every Django
    # process (the web, each worker, each command) imports this module through its URLs.
    import openai

    return openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=retries,
                         http_client=httpx.Client(transport=_RecordingTransport(verify=tls_context()), timeout=timeout))


@contextmanager
def _concurrency_slot(limit: int) -> Iterator[None]:
    limit = max(1, limit)
    try:
        from core.queues import redis_connection

        conn = redis_connection()
        conn.ping()
    except Exception:  # noqa: BLE001 - no Redis (e.g. --sync without a server): bound this process only
        with _local_semaphore(limit):
            yield
        return
    token = uuid.uuid4().hex
    acquire = conn.register_script(_ACQUIRE_LUA)
    while True:
        now = time.time()
        if acquire(keys=[_SEMAPHORE_KEY], args=[now, now - _LEASE_S, limit, token]):
            break
        time.sleep(0.1 + random.random() * 0.2)
    _hold(token, conn)
    try:
        yield
    finally:
        with _held_lock:
            _held.pop(token, None)
        try:
            conn.zrem(_SEMAPHORE_KEY, token)
        except Exception:  # noqa: BLE001 - the lease expires by itself after _LEASE_S
            log.warning("could not release the LLM concurrency slot %s", token)


def _hold(token: str, conn: Any) -> None:
    global _renewer
    with _held_lock:
        _held[token] = conn
        if _renewer is None or not _renewer.is_alive():
            _renewer = threading.Thread(target=_renew_leases, name="llm-lease-renewer", daemon=True)
            _renewer.start()


def _renew_leases() -> None:
    """Renew the leases this process holds (ZADD XX: a released slot is not re-created),
    every second or third of a lease, whichever is shorter."""
    while True:
        time.sleep(min(1.0, _LEASE_S / 3))
        with _held_lock:
            held = list(_held.items())
        for token, conn in held:
            try:
                conn.zadd(_SEMAPHORE_KEY, {token: time.time()}, xx=True)
            except Exception:  # noqa: BLE001 - Redis away: the next round tries again
                log.warning("could not renew the LLM concurrency slot %s", token)


def llm_in_flight_limit(limit: int | None) -> None:
    """Allow at most `limit` calls of this process in flight at once (None: no bound of its own)."""
    global _in_flight_gate
    _in_flight_gate = threading.BoundedSemaphore(limit) if limit else None


@contextmanager
def _in_flight() -> Iterator[None]:
    gate = _in_flight_gate
    if gate is None:
        yield
        return
    with gate:
        yield


@contextmanager
def _local_semaphore(limit: int) -> Iterator[None]:
    with _local_lock:
        sem = _local_semaphores.setdefault(limit, threading.BoundedSemaphore(limit))
    with sem:
        yield


def _usage(response: Any) -> tuple[int | None, int | None, int | None]:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None, None, None
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = getattr(details, "reasoning_tokens", None) if details is not None else None
    return getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None), reasoning


def _request_options(llm: LLMConfig, model: str, messages: list[dict[str, str]],
                     temperature: float | None) -> dict[str, Any]:
    options: dict[str, Any] = {"model": model, "messages": messages}
    max_tokens = llm.max_tokens
    if llm.reasoning:
        # Reasoning models refuse a temperature and count their hidden reasoning in this limit.
        if max_tokens:
            options["max_completion_tokens"] = max_tokens
    else:
        options["temperature"] = temperature
        if max_tokens:
            options["max_tokens"] = max_tokens
    return options


def chat(
    *,
    run: GenerationRun,
    purpose: str,
    messages: list[dict[str, str]],
    prompt_version: str = "",
    model: str | None = None,
    temperature: float | None = None,
    llm: LLMConfig | None = None,
) -> tuple[str, LLMCall]:
    """Send one chat completion to `llm`'s endpoint (None: the settings'); return the reply
    text and the LLMCall that recorded it.

    The call's `finish_reason` says whether the reply is complete ("length": cut off at
    `llm.max_tokens`). Raises LLMUnavailable when no endpoint is configured or every
    attempt failed.
    """
    llm = llm or LLMConfig.from_settings()
    model = model or run.model_name or llm.model
    temperature = llm.temperature if temperature is None else temperature
    if llm.reasoning:
        temperature = None
    record = {"run": run, "purpose": purpose, "prompt_version": prompt_version, "messages": messages,
              "temperature": temperature}
    if not llm.configured:
        LLMCall.objects.create(**record, model_name=model,
                               error="no LLM endpoint configured (set OPENAI_BASE_URL or OPENAI_API_KEY)")
        raise LLMUnavailable("no LLM endpoint configured (set OPENAI_BASE_URL or OPENAI_API_KEY)")
    import openai  # loaded by _client() below; the name is needed for the except clause

    attempts: list[Attempt] = []
    client = _client(llm)
    error: Exception | None = None
    response: Any = None
    token = _current_call.set(_Call(model=model, messages=messages, attempts=attempts))
    try:
        with _in_flight(), _concurrency_slot(llm.concurrency):
            response = client.chat.completions.create(**_request_options(llm, model, messages, temperature))
    except openai.OpenAIError as exc:
        error = exc
    finally:
        _current_call.reset(token)
    failed = [a for a in attempts if a.error]
    if error is not None and not failed:
        # Failed before any request went out (or after the last one, reading its body).
        failed.append(Attempt(0, f"{type(error).__name__}: {error}"[:2000]))
    for number, attempt in enumerate(failed, 1):
        LLMCall.objects.create(**record, model_name=model, latency_ms=attempt.latency_ms, error=attempt.error[:2000],
                               attempt=number)
    if error is not None:
        raise LLMUnavailable(f"the LLM endpoint failed after {len(failed)} attempt(s): {failed[-1].error[:2000]}")
    choices = getattr(response, "choices", None) or []
    choice = choices[0] if choices else None
    content = choice.message.content if choice is not None and choice.message else None
    prompt_tokens, completion_tokens, reasoning_tokens = _usage(response)
    call = LLMCall.objects.create(
        **record, reply=content or "", model_name=getattr(response, "model", None) or model,
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, reasoning_tokens=reasoning_tokens,
        finish_reason=(getattr(choice, "finish_reason", None) or "")[:20],
        latency_ms=attempts[-1].latency_ms if attempts else None, attempt=len(failed) + 1,
    )
    return content or "", call
