"""The generation queue, built through the shared helper that reads settings at call time."""

from __future__ import annotations

from rq import Queue

from core.queues import get_queue, redis_connection

GENERATION_QUEUE = "generation"

__all__ = ["GENERATION_QUEUE", "generation_queue", "redis_connection"]


def generation_queue() -> Queue:
    return get_queue(GENERATION_QUEUE)
