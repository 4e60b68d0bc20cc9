"""RQ queues built from settings at call time.

django_rq.get_queue() resolves RQ_QUEUES once, at import; building the connection from
settings.REDIS_URL when it is needed sees a changed URL (tests run a private Redis) and is
the same connection in production. Every app enqueues through here.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import redis
from django.conf import settings
from rq import Queue

from core.embedded import ensure_redis

_connections: dict[str, redis.Redis] = {}
_lock = threading.Lock()


def redis_connection() -> redis.Redis:
    url = settings.REDIS_URL
    with _lock:
        if url not in _connections:
            ensure_redis()
            _connections[url] = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=30)
        return _connections[url]


def get_queue(name: str) -> Queue:
    timeout = settings.RQ_QUEUES.get(name, {}).get("DEFAULT_TIMEOUT", 3600)
    return Queue(name, connection=redis_connection(), default_timeout=timeout)


# What each checked worker last found about itself (hardtests_web/ops/worker.py): one hash,
# a field per worker name, so that the API reads every worker's health in the same round trip
# as the queue's workers and backlog. A record names its own expiry (a hash field has no TTL)
# on Redis's clock, not a host's, so machines whose clocks differ agree on it: a worker that
# died without a word stops counting once it has passed.
WORKER_HEALTH_HASH = "hardtests:worker-health"


def redis_now(answer: tuple[int, int]) -> float:
    """Redis's TIME answer (seconds, microseconds) as epoch seconds."""
    seconds, micros = answer
    return seconds + micros / 1e6


def worker_health_publish(connection: redis.Redis, name: str, record: dict[str, Any], ttl_s: float) -> None:
    """Store `name`'s health, valid for `ttl_s`, and drop the records that have expired: under
    WATCH (redis-py's `transaction` tries again when another worker wrote meanwhile), so a
    worker's fresh record is never dropped as another's stale one."""

    def publish(pipe: redis.client.Pipeline) -> None:
        now = redis_now(pipe.time())
        stale = [field for field, value in pipe.hgetall(WORKER_HEALTH_HASH).items()
                 if _health_valid(value, now) is None]
        pipe.multi()
        if stale:
            pipe.hdel(WORKER_HEALTH_HASH, *stale)
        pipe.hset(WORKER_HEALTH_HASH, name, json.dumps({**record, "expires_at": now + ttl_s}))

    connection.transaction(publish, WORKER_HEALTH_HASH)


def worker_health_forget(connection: redis.Redis, name: str) -> None:
    connection.hdel(WORKER_HEALTH_HASH, name)


def _health_valid(raw: bytes | str | None, now: float) -> dict[str, Any] | None:
    """The record, unless it is malformed or has expired at `now` (Redis's clock)."""
    try:
        record = json.loads(raw) if raw else None
        if not isinstance(record, dict) or float(record.get("expires_at", 0)) <= now:
            return None
    except (ValueError, TypeError):
        return None
    return record


def worker_health_parse(raw: dict[bytes, bytes], names: list[str], now: float) -> dict[str, dict[str, Any]]:
    """From the whole hash (HGETALL), the unexpired health of each named worker that has one;
    `now` is Redis's time (read in the same round trip: `redis_now(pipe.time())`)."""
    found = {}
    for name in names:
        record = _health_valid(raw.get(name.encode()), now)
        if record is not None:
            found[name] = record
    return found


def worker_health_read(connection: redis.Redis, names: list[str]) -> dict[str, dict[str, Any]]:
    """The last published, unexpired health of each named worker that publishes one."""
    if not names:
        return {}
    with connection.pipeline(transaction=False) as pipe:
        pipe.hmget(WORKER_HEALTH_HASH, names)
        pipe.time()
        raw, now = pipe.execute()
    published = {name.encode(): value for name, value in zip(names, raw, strict=True) if value}
    return worker_health_parse(published, names, redis_now(now))
