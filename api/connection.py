"""The Redis client and the `api` queue the API uses, one client per process.

Verifications go to their own queue, which every sandbox worker takes before the `sandbox`
queue, so a bulk evaluation or a "judge all" never delays a training loop.

Not django_rq.get_connection(): that builds a new client and pool on every call (a
connect per API request) and reads RQ_QUEUES once at import, so it would miss a Redis
URL set later (tests point RQ_QUEUES at a private server). Not core.queues
either: its client has a 30 s socket read timeout, and the API blocks on XREAD for up
to HARDTESTS_API_SYNC_TIMEOUT_S (60 s by default).
"""

from __future__ import annotations

import threading

from django.conf import settings
from redis import Redis
from rq import Queue

from core.embedded import EmbeddedRedisError, ensure_redis

API_QUEUE = "api"
_clients: dict[str, Redis] = {}
_lock = threading.Lock()


def redis_connection() -> Redis:
    url = settings.RQ_QUEUES[API_QUEUE]["URL"]
    client = _clients.get(url)
    if client is None:
        with _lock:
            client = _clients.get(url)
            if client is None:
                # Short connect timeout: a dead Redis must turn into a quick 503, not a hung
                # request. No socket read timeout, because result waits block on XREAD.
                try:
                    ensure_redis()  # the embedded server, when REDIS_URL is unset (no-op otherwise)
                except EmbeddedRedisError:
                    pass  # the first command then fails with a RedisError, which the API turns into 503
                client = Redis.from_url(url, socket_connect_timeout=2, health_check_interval=30)
                _clients[url] = client
    return client


def sandbox_queue() -> Queue:
    """The queue verification jobs go to (served by the sandbox workers, first)."""
    return Queue(API_QUEUE, connection=redis_connection())
