"""The API's Redis client and the queue of its verifications: both from core.queues, the one
Redis helper of the project (kept here under their earlier names for the API's modules)."""

from __future__ import annotations

from redis import Redis
from rq import Queue

from core.queues import VERIFICATION_QUEUE, verification_queue
from core.queues import redis_connection as _redis_connection

API_QUEUE = VERIFICATION_QUEUE


def redis_connection() -> Redis:
    # Without a read timeout: result waits block on XREAD for up to the API's sync timeout.
    return _redis_connection(blocking=True)


def sandbox_queue() -> Queue:
    """The verification queue (an earlier name: it is served by the sandbox workers, first)."""
    return verification_queue()
