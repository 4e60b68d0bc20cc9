"""The Redis client and sandbox queue the API uses, one client per process.

Not django_rq.get_connection(): that builds a new client and pool on every call (a
connect per API request) and reads RQ_QUEUES once at import, so it would miss a Redis
URL set later (tests point RQ_QUEUES at a private server).
"""

from __future__ import annotations

import threading

from django.conf import settings
from redis import Redis
from rq import Queue

SANDBOX_QUEUE = "sandbox"  # the queue problems.jobs uses for judging
_clients: dict[str, Redis] = {}
_lock = threading.Lock()


def redis_connection() -> Redis:
    url = settings.RQ_QUEUES[SANDBOX_QUEUE]["URL"]
    client = _clients.get(url)
    if client is None:
        with _lock:
            client = _clients.get(url)
            if client is None:
                # Short connect timeout: a dead Redis must turn into a quick 503, not a hung
                # request. No socket read timeout, because result waits block on XREAD.
                client = Redis.from_url(url, socket_connect_timeout=2, health_check_interval=30)
                _clients[url] = client
    return client


def sandbox_queue() -> Queue:
    return Queue(SANDBOX_QUEUE, connection=redis_connection())
