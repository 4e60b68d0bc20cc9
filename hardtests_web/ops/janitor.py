"""The janitor: periodic sweeps that keep the record true when processes die.

Each sweep is independent: one that fails (Redis or the database briefly away) is reported
and the others still run. The last pass is written to Redis so /healthz/deep can show when
the janitor last ran and what it found.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, cast

from django.conf import settings

from core import joblife
from core.queues import redis_connection
from hardtests_web.ops.checks import database_check
from hardtests_web.ops.reaper import dead_workers_sweep

log = logging.getLogger(__name__)
LAST_RUN_KEY = "hardtests:janitor:last"


def _finished_campaigns() -> int:
    """Campaigns none of whose runs is open any more (a run that failed in the LLM stage ends none)."""
    from generation.campaigns.services import campaigns_refresh

    return campaigns_refresh()


def dead_jobs() -> int:
    """Rows of every long job kind (core.joblife) whose worker died or whose job was lost: failed
    with the reason, or queued again where the kind runs them again (a campaign run, a curation
    job's chains). The project's one dead-job sweeper: generation runs too (stale_runs_sweep,
    named by its kind)."""
    return sum(joblife.sweep(kind) for kind in joblife.kinds())


def _expired_jobs() -> int:
    """Drop expired entries from every queue's RQ registries (finished, failed, started)."""
    from rq.registry import clean_registries

    from core.queues import get_queue

    for name in settings.RQ_QUEUE_NAMES:
        clean_registries(get_queue(name))
    return 0


def _compile_cache() -> int:
    """Bytes freed from this machine's compile cache (workers also evict when they publish;
    this keeps an idle machine's cache under HARDTESTS_COMPILE_CACHE_MAX_MB too)."""
    from sandbox.cache import evict

    return evict()


# name -> sweep returning how many things it fixed. New sweeps join this list.
SWEEPS: list[tuple[str, Callable[[], int]]] = [
    ("expired_jobs", _expired_jobs),
    ("compile_cache_bytes_freed", _compile_cache),
]


def _dead_workers() -> int:
    return dead_workers_sweep(redis_connection())


# Run every HARDTESTS_JANITOR_FAST_S: a dead worker's job must be queued again within a minute,
# and a dead run (any long job's row) found within seconds of its worker's liveness key
# expiring. The dead workers go first: a job they held is queued again before the rows are read.
# Each is bounded in cost (one Redis round trip, at most SWEEP_BATCH rows a kind), whatever the
# queue length.
FAST_SWEEPS: list[tuple[str, Callable[[], int]]] = [
    ("dead_workers", _dead_workers),
    ("dead_jobs", dead_jobs),
    ("finished_campaigns", _finished_campaigns),
]


def _database() -> str | None:
    """The janitor's own probe: a pass whose sweeps all failed on the database says why once,
    and /healthz/deep reports it as "janitor cannot reach the database"."""
    return database_check()


def janitor_pass(*, kind: str = "full") -> dict[str, Any]:
    """Run the fast sweeps (kind="fast") or every sweep once, and record the pass in Redis;
    {"at": epoch, "kind": ..., "counts": {...}, "errors": {...}}.

    Connections are made fresh around each pass (Django's close_old_connections, as around a
    request): one broken by a database outage is dropped, not reused, so the janitor heals
    when the database returns instead of failing every pass with "the connection is closed"
    until it is restarted. redis-py reconnects on its own."""
    from django.db import close_old_connections, connections

    close_old_connections()
    counts: dict[str, int] = {}
    errors: dict[str, str] = {}
    try:
        problem = _database()
        if problem:
            errors["database"] = problem
        for name, sweep in FAST_SWEEPS if kind == "fast" else [*FAST_SWEEPS, *SWEEPS]:
            try:
                counts[name] = sweep()
            except Exception as exc:  # the janitor must outlive a database or Redis hiccup
                log.warning("janitor: %s failed: %s", name, exc)
                errors[name] = f"{type(exc).__name__}: {exc}"[:500]
    finally:
        if errors:
            connections.close_all()  # whatever failed, the next pass connects afresh
        else:
            close_old_connections()
    record = {"at": time.time(), "kind": kind, "counts": counts, "errors": errors}
    try:
        period = settings.HARDTESTS_JANITOR_PERIOD_S
        redis_connection().set(LAST_RUN_KEY, json.dumps(record), ex=max(600, int(period * 10)))
    except Exception as exc:
        log.warning("janitor: could not record its last run: %s", exc)
    return record


def janitor_fast_pass() -> dict[str, Any]:
    return janitor_pass(kind="fast")


class JanitorSchedule:
    """When each pass is due: the fast pass every `fast_s` and the full pass (which includes the
    fast sweeps) every `period_s`, each on its own clock. (The fast clock was once reset to a
    full period by every full pass, so the fast pass never ran: dead workers waited 60 s.)"""

    def __init__(self, *, period_s: float, fast_s: float, now: float) -> None:
        self.period_s = period_s
        self.fast_s = min(period_s, fast_s)
        self.next_full = self.next_fast = now

    def due(self, now: float) -> str | None:
        """"full", "fast" or None at `now` (monotonic seconds); moves the clocks on."""
        if now >= self.next_full:
            self.next_full = now + self.period_s
            self.next_fast = now + self.fast_s
            return "full"
        if now >= self.next_fast:
            self.next_fast = now + self.fast_s
            return "fast"
        return None

    def wait_s(self, now: float) -> float:
        return max(0.0, min(self.next_full, self.next_fast) - now)


def janitor_last_run() -> dict[str, Any] | None:
    raw = cast(bytes | None, redis_connection().get(LAST_RUN_KEY))
    return json.loads(raw) if raw else None
