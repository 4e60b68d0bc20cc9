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


# What a checked worker last found about itself (hardtests_web/ops/worker.py), by worker name.
WORKER_HEALTH_KEY = "hardtests:worker-health:{name}"


def worker_health_read(connection: redis.Redis, names: list[str]) -> dict[str, dict[str, Any]]:
    """The last published health of each named worker that publishes one."""
    if not names:
        return {}
    raw = connection.mget([WORKER_HEALTH_KEY.format(name=name) for name in names])
    return {name: json.loads(value) for name, value in zip(names, raw, strict=True) if value}
