"""Redis and RQ queues for the generation app, read from settings at call time.

django_rq.get_queue() resolves RQ_QUEUES once at import, so a changed REDIS_URL (tests
override it per session) would be missed; building the connection from settings.REDIS_URL
when needed avoids that and is the same connection in production.
"""

from __future__ import annotations

import threading

import redis
from django.conf import settings
from rq import Queue

GENERATION_QUEUE = "generation"
_connections: dict[str, redis.Redis] = {}
_lock = threading.Lock()


def redis_connection() -> redis.Redis:
    url = settings.REDIS_URL
    with _lock:
        if url not in _connections:
            _connections[url] = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=30)
        return _connections[url]


def generation_queue() -> Queue:
    timeout = settings.RQ_QUEUES.get(GENERATION_QUEUE, {}).get("DEFAULT_TIMEOUT", 3600)
    return Queue(GENERATION_QUEUE, connection=redis_connection(), default_timeout=timeout)
