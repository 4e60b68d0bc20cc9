"""Per-token rate limiting in the configured Redis: a sliding-window counter.

Two fixed one-minute counters per token; the previous minute's count is weighted by how
much of it still lies inside the last 60 seconds. That smooths the burst a plain fixed
window allows at a minute boundary, for two small keys per token and one round trip.
Redis (not the database or a per-process cache) because many web processes on many
machines share one limit.
"""

from __future__ import annotations

import math
import time

from redis.exceptions import RedisError

from hardtests_web.api.connection import redis_connection
from hardtests_web.api.errors import RateLimited, Unavailable

WINDOW_S = 60
KEY = "hardtests:api:rate:{token}:{window}"  # token: its random prefix, never reused


def rate_limit_hit(token_key: str, limit: int, *, now: float | None = None) -> float | None:
    """Count one request; None when allowed, else the seconds to wait before retrying."""
    now = time.time() if now is None else now
    window = int(now // WINDOW_S)
    current_key = KEY.format(token=token_key, window=window)
    previous_key = KEY.format(token=token_key, window=window - 1)
    connection = redis_connection()
    pipe = connection.pipeline()
    pipe.incr(current_key)
    pipe.expire(current_key, 2 * WINDOW_S)
    pipe.get(previous_key)
    current, _, previous = pipe.execute()
    elapsed = now - window * WINDOW_S
    weight = 1 - elapsed / WINDOW_S
    estimate = int(previous or 0) * weight + int(current)
    if estimate <= limit:
        return None
    # A refused request must not count, or a client that keeps retrying never gets through.
    connection.decr(current_key)
    return max(1.0, WINDOW_S - elapsed)


def rate_limit_check(token_key: str, limit: int) -> None:
    """Count one request of a token or raise RateLimited (429) / Unavailable (503, no Redis)."""
    try:
        wait = rate_limit_hit(token_key, limit)
    except RedisError as exc:
        raise Unavailable("the rate limiter (Redis) is unavailable", code="redis_unavailable") from exc
    if wait is not None:
        raise RateLimited(
            f"rate limit of {limit} requests per minute exceeded for this token",
            headers={"Retry-After": str(math.ceil(wait))},
        )
