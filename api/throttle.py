"""Per-token rate limiting in the configured Redis, with the `limits` library's sliding-window
counter: the previous minute's count is weighted by how much of it still lies inside the last
60 seconds, which smooths the burst a plain fixed window allows at a minute boundary, in one
Lua round trip. Redis (not the database or a per-process cache) because many web processes
on many machines share one limit. A refused request does not count, so a client retrying in a
loop still gets through once the window slides.
"""

from __future__ import annotations

import math
import time

from limits import RateLimitItemPerMinute
from limits.errors import StorageError
from limits.storage import RedisStorage
from limits.strategies import SlidingWindowCounterRateLimiter
from redis.exceptions import RedisError

from api.errors import RateLimited, Unavailable
from core.queues import redis_connection

NAMESPACE = "hardtests:api:rate"
_limiters: dict[int, SlidingWindowCounterRateLimiter] = {}


def _limiter() -> SlidingWindowCounterRateLimiter:
    connection = redis_connection()
    limiter = _limiters.get(id(connection))
    if limiter is None:
        # The API's own client and pool: the limiter follows REDIS_URL wherever it points.
        storage = RedisStorage("redis://", connection_pool=connection.connection_pool, key_prefix=NAMESPACE)
        limiter = _limiters[id(connection)] = SlidingWindowCounterRateLimiter(storage)
    return limiter


def rate_limit_hit(token_key: str, limit: int) -> float | None:
    """Count one request of a token; None when allowed, else the seconds to wait before retrying."""
    limiter = _limiter()
    item = RateLimitItemPerMinute(limit)
    if limiter.hit(item, token_key):
        return None
    reset_at, _remaining = limiter.get_window_stats(item, token_key)
    return max(1.0, reset_at - time.time())


def rate_limit_check(token_key: str, limit: int) -> None:
    """Count one request of a token or raise RateLimited (429) / Unavailable (503, no Redis)."""
    try:
        wait = rate_limit_hit(token_key, limit)
    except (RedisError, StorageError) as exc:
        raise Unavailable("the rate limiter (Redis) is unavailable", code="redis_unavailable") from exc
    if wait is not None:
        raise RateLimited(
            f"rate limit of {limit} requests per minute exceeded for this token",
            headers={"Retry-After": str(math.ceil(wait))},
        )
