"""Requests- and tokens-per-minute limits per model, shared by every worker on every machine.

Two token buckets per model live in Redis (one for requests, one for tokens) and are
refilled continuously at RPM/60 and TPM/60 per second, up to one minute's worth. A call
takes one request and its estimated prompt tokens before it is sent (`llm_rate_wait`, the
one hook in generation.llm); what the reply really cost is settled afterwards
(`llm_rate_settle`), so the token bucket may go into debt and later callers wait it out.
The clock is Redis' own (TIME), so machines with skewed clocks share one bucket fairly.
"""

from __future__ import annotations

import logging
import random
import time
from typing import Any

from django.conf import settings

log = logging.getLogger(__name__)

_KEY = "hardtests:llm:bucket:{model}"
# KEYS[1]: the model's bucket hash. ARGV: rpm, tpm, tokens wanted.
# Returns 0 when taken, else the seconds to wait (as a string: Lua numbers become integers).
_TAKE_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local rpm, tpm, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 'req', 'tok', 'ts')
local req = tonumber(b[1]) or rpm
local tok = tonumber(b[2]) or tpm
local ts = tonumber(b[3]) or now
local dt = math.max(0, now - ts)
if rpm > 0 then req = math.min(rpm, req + dt * rpm / 60) end
if tpm > 0 then tok = math.min(tpm, tok + dt * tpm / 60) end
-- a call larger than a whole minute's tokens may go once the bucket is full
if tpm > 0 then want = math.min(want, tpm) end
local wait = 0
if rpm > 0 and req < 1 then wait = math.max(wait, (1 - req) * 60 / rpm) end
if tpm > 0 and tok < want then wait = math.max(wait, (want - tok) * 60 / tpm) end
if wait == 0 then
  if rpm > 0 then req = req - 1 end
  if tpm > 0 then tok = tok - want end
end
redis.call('HSET', KEYS[1], 'req', req, 'tok', tok, 'ts', now)
redis.call('EXPIRE', KEYS[1], 3600)
return tostring(wait)
"""
_SETTLE_LUA = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBYFLOAT', KEYS[1], 'tok', -tonumber(ARGV[1]))
end
return 1
"""


def rate_limits(model: str) -> tuple[int, int]:
    """(requests per minute, tokens per minute) for a model; 0 means no limit."""
    for item in settings.HARDTESTS_LLM_RATE_LIMITS:
        name, _, limits = item.rpartition("=")
        if name.strip() == model:
            rpm, _, tpm = limits.partition(":")
            return int(rpm or 0), int(tpm or 0)
    return settings.HARDTESTS_LLM_RPM, settings.HARDTESTS_LLM_TPM


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    # About four characters a token for English and code; the real count is settled later.
    return max(1, sum(len(str(m.get("content") or "")) for m in messages) // 4)


def _redis() -> Any:
    from core.queues import redis_connection

    return redis_connection()


def llm_rate_wait(*, model: str, messages: list[dict[str, Any]], max_wait_s: float | None = None) -> float:
    """Block until the model's buckets allow one more call; return the seconds waited.

    Without Redis (a `--sync` run on a laptop) there is nothing to share and no limit.
    """
    rpm, tpm = rate_limits(model)
    if rpm <= 0 and tpm <= 0:
        return 0.0
    want = estimate_tokens(messages)
    waited = 0.0
    try:
        while True:
            wait = llm_rate_take(model=model, tokens=want, limits=(rpm, tpm))
            if wait <= 0:
                return waited
            if max_wait_s is not None and waited >= max_wait_s:
                return waited
            # Jitter so that workers released together do not collide again.
            pause = min(wait, 5.0) * (1 + random.random() * 0.2)
            time.sleep(pause)
            waited += pause
    except Exception:  # noqa: BLE001 - a limiter outage must not stop generation
        log.warning("LLM rate limiter unavailable; calling without it", exc_info=True)
        return waited


def llm_rate_take(*, model: str, tokens: int, limits: tuple[int, int] | None = None) -> float:
    """Take one request and `tokens` from the model's buckets if both allow it: 0.0; else the
    seconds to wait before trying again (nothing taken)."""
    rpm, tpm = limits or rate_limits(model)
    if rpm <= 0 and tpm <= 0:
        return 0.0
    return float(_redis().register_script(_TAKE_LUA)(keys=[_KEY.format(model=model)], args=[rpm, tpm, tokens]))


def llm_rate_settle(*, model: str, estimated: int, actual: int) -> None:
    """Charge the token bucket the difference between what a call was estimated and what it used."""
    rpm, tpm = rate_limits(model)
    if tpm <= 0 or actual == estimated:
        return
    try:
        _redis().register_script(_SETTLE_LUA)(keys=[_KEY.format(model=model)], args=[actual - estimated])
    except Exception:  # noqa: BLE001 - the next call is limited by the estimate alone
        log.warning("could not settle LLM tokens", exc_info=True)
