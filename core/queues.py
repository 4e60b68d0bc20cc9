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
from rq import Queue, get_current_job

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


# A job's return value, published by the job itself as it returns, on a stream the API waits on
# beside RQ's result stream: RQ stores its own result only after its bookkeeping (a heartbeat,
# a WATCH on the dependents, the registries: four round trips, about a millisecond), which is then
# off the caller's path. RQ's result still comes, and is what later reads and failures use.
EARLY_RESULT_KEY = "hardtests:early-result:{job_id}"
EARLY_RESULT_TTL_S = 60


def early_result_publish(value: dict[str, Any]) -> None:
    """Inside an RQ job: publish `value` (JSON) for whoever waits on the job (a no-op outside a
    job; a Redis failure is left to RQ's own result)."""
    job = get_current_job()
    if job is None:
        return
    key = EARLY_RESULT_KEY.format(job_id=job.id)
    try:
        with job.connection.pipeline(transaction=False) as pipe:
            pipe.xadd(key, {"value": json.dumps(value)}, maxlen=1)
            pipe.expire(key, EARLY_RESULT_TTL_S)
            pipe.execute()
    except redis.RedisError:
        pass
