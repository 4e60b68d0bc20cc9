"""Recording a GenerationRun while it executes, and noticing runs whose worker died.

State changes that the worker, the web and the sweeper race on are conditional updates
(`filter(pk=..., status=RUNNING).update(...)`) whose count says who won.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from generation.materialise.types import Cancelled
from generation.models import FailureReason, GenerationRun
from problems.models import TestSuite
from problems.services import suite_fail

log = logging.getLogger(__name__)

MAX_LOG_CHARS = 64_000
HEARTBEAT_S = 5.0


def stale_after_s() -> float:
    return float(getattr(settings, "HARDTESTS_RUN_STALE_S", 120.0))


class RunRecorder:
    """Log lines, stage timings, counts and cancellation checks for one executing run.

    `buffered` (the LLM stage of campaigns, many runs per process) keeps log lines in memory
    until the run's next write (a stage change, a move to another queue, a failure) instead of
    one UPDATE a line: those writes were a large share of the stage's CPU.
    """

    def __init__(self, run: GenerationRun, *, buffered: bool = False) -> None:
        self.run_id = run.pk
        self.buffered = buffered
        self._dirty = False
        self.text = run.log or ""
        self.stage_name = run.stage
        self.stage_started = time.monotonic()
        if run.stage == GenerationRun.Stage.QUEUED and run.created_at is not None:
            # The queued stage began when the run was created, not when a worker picked it up.
            self.stage_started -= max(0.0, (timezone.now() - run.created_at).total_seconds())
        self.stage_seconds: dict[str, float] = dict(run.stage_seconds or {})
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _update(self, **fields: Any) -> None:
        GenerationRun.objects.filter(pk=self.run_id).update(heartbeat_at=timezone.now(), **fields, **self.pending())

    def pending(self) -> dict[str, str]:
        """The buffered log as fields for the caller's own update of the run (then no longer pending)."""
        if not self._dirty:
            return {}
        self._dirty = False
        return {"log": self.text}

    def flush(self) -> None:
        if self._dirty:
            self._update()

    def log(self, message: str) -> None:
        stamp = timezone.now().strftime("%H:%M:%S")
        self.text += "".join(f"{stamp} {line}\n" for line in str(message).splitlines() or [""])
        if len(self.text) > MAX_LOG_CHARS:
            # Keep the start (what was asked) and the end (what is happening now).
            head = self.text[: MAX_LOG_CHARS // 4]
            tail = self.text[-MAX_LOG_CHARS // 2:]
            self.text = head.rsplit("\n", 1)[0] + "\n[… earlier lines dropped …]\n" + tail.split("\n", 1)[-1]
        if self.buffered:
            self._dirty = True
        else:
            self._update(log=self.text)
        log.info("run %s: %s", self.run_id, message)

    def _close_stage(self) -> None:
        elapsed = time.monotonic() - self.stage_started
        self.stage_seconds[self.stage_name] = round(self.stage_seconds.get(self.stage_name, 0.0) + elapsed, 3)
        self.stage_started = time.monotonic()

    def stage(self, name: str) -> None:
        self.check_cancel()
        self._close_stage()
        self.stage_name = name
        if self.buffered:
            self.log(f"stage: {GenerationRun.Stage(name).label}")  # written by the update below
            self._update(stage=name, stage_seconds=self.stage_seconds)
            return
        self._update(stage=name, stage_seconds=self.stage_seconds)
        self.log(f"stage: {GenerationRun.Stage(name).label}")

    def finish_stages(self) -> dict[str, float]:
        self._close_stage()
        return self.stage_seconds

    def counts(self, counts: dict[str, dict[str, int]]) -> None:
        self._update(counts=counts)

    def check_cancel(self) -> None:
        if GenerationRun.objects.filter(pk=self.run_id, cancel_requested=True).exists():
            raise Cancelled()

    # -- heartbeat ---------------------------------------------------------

    def start_heartbeat(self) -> None:
        # Inside an outer transaction (a test, a caller's atomic block) another connection
        # could not see the row, and on SQLite would wait on the caller's write lock.
        if connection.in_atomic_block:
            return
        self._thread = threading.Thread(target=self._beat, name=f"run-{self.run_id}-heartbeat", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        try:
            while not self._stop.wait(HEARTBEAT_S):
                try:
                    GenerationRun.objects.filter(pk=self.run_id, status=GenerationRun.Status.RUNNING).update(
                        heartbeat_at=timezone.now()
                    )
                except Exception:  # noqa: BLE001 - a missed beat is harmless; the next one retries
                    log.warning("run %s: heartbeat failed", self.run_id, exc_info=True)
        finally:
            connection.close()

    def stop_heartbeat(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)


def run_fail(*, run_id: int, reason: str, error: str, from_status: tuple[str, ...] | None = None,
             status: str = GenerationRun.Status.FAILED, note: str = "") -> bool:
    """Finish a run as failed (or cancelled) if it is still in one of from_status; fail its building suite."""
    from_status = from_status or (GenerationRun.Status.QUEUED, GenerationRun.Status.RUNNING)
    with transaction.atomic():
        updated = GenerationRun.objects.filter(pk=run_id, status__in=from_status).update(
            status=status, failure_reason=reason, error=error[:20000], finished_at=timezone.now()
        )
        if updated:
            suite = TestSuite.objects.filter(generation_run__pk=run_id, status=TestSuite.Status.BUILDING).first()
            if suite is not None:
                suite_fail(suite=suite, note=note or f"generation run #{run_id} {status}: {reason}")
            if note:
                run = GenerationRun.objects.get(pk=run_id)
                stamp = timezone.now().strftime("%H:%M:%S")
                GenerationRun.objects.filter(pk=run_id).update(log=(run.log + f"{stamp} {note}\n")[-MAX_LOG_CHARS:])
    return bool(updated)


SWEEP_BATCH = 500
LOST_QUEUED_S = 60.0
# An LLM-stage worker (generation.campaigns.llmworker) refreshes this key while it lives.
LLM_WORKER_KEY = "hardtests:llm-worker:{token}"
_ALIVE_STATUSES = {b"queued", b"started", b"deferred", b"scheduled", b"created"}


def _job_states(job_ids: list[str]) -> dict[str, str]:
    """'alive', 'dead' or 'unknown' (Redis unreachable) for many job ids, in one Redis round trip.

    RQ job ids are looked up in their hash; "llm:<token>" ids (runs held by an LLM-stage
    worker) by the worker's liveness key.
    """
    if not job_ids:
        return {}
    try:
        from rq.job import Job

        from generation.queues import redis_connection

        pipe = redis_connection().pipeline(transaction=False)
        for job_id in job_ids:
            if job_id.startswith("llm:"):
                pipe.exists(LLM_WORKER_KEY.format(token=job_id[4:]))
            else:
                pipe.hget(Job.key_for(job_id), "status")
        answers = pipe.execute()
    except Exception:  # noqa: BLE001 - Redis down: decide from the heartbeat alone
        return dict.fromkeys(job_ids, "unknown")
    states = {}
    for job_id, answer in zip(job_ids, answers, strict=True):
        if job_id.startswith("llm:"):
            states[job_id] = "alive" if answer else "dead"
        else:
            states[job_id] = "alive" if answer in _ALIVE_STATUSES else "dead"
    return states


def _job_state(job_id: str) -> str:
    return _job_states([job_id])[job_id]


def _dead(run_id: int, campaign_id: int | None, reason: str, from_status: str, **still: Any) -> bool:
    """A run whose worker or job is gone: a campaign run goes back to its queue, any other fails."""
    if campaign_id is not None:
        from generation.campaigns.stages import run_requeue_dead

        return run_requeue_dead(run_id=run_id, reason=reason, from_status=from_status, **still)
    with transaction.atomic():
        if not GenerationRun.objects.filter(pk=run_id, status=from_status, **still).exists():
            return False
        return run_fail(run_id=run_id, reason=FailureReason.WORKER_DIED, error=f"worker died: {reason}",
                        from_status=(from_status,), note=f"worker died: {reason}")


def stale_runs_sweep(*, batch: int = SWEEP_BATCH) -> int:
    """Deal with runs whose worker died or whose queued job was lost; returns how many.

    Cost is bounded by `batch`, never by the queue length: RUNNING runs are as many as the
    workers can hold; QUEUED runs are checked oldest-check-first, `batch` at a time, each
    check moving its heartbeat_at forward so that the next sweep looks at the next ones;
    all job states of a batch come from one Redis round trip. Meant for a periodic caller
    (the LLM-stage worker, the janitor, a worker starting), not for every job.
    A campaign run goes back to its queue (its saved kit kept); any other run fails as
    worker_died. The previous active suite is untouched: only a BUILDING suite is failed.
    """
    now = timezone.now()
    stale_before = now - timezone.timedelta(seconds=stale_after_s())
    swept = 0
    running = list(GenerationRun.objects.filter(status=GenerationRun.Status.RUNNING).order_by("heartbeat_at")
                   .values_list("pk", "job_id", "heartbeat_at", "started_at", "campaign_id")[:batch])
    states = _job_states([job_id for _, job_id, *_ in running if job_id])
    for pk, job_id, heartbeat_at, started_at, campaign_id in running:
        beat = heartbeat_at or started_at
        if job_id and states.get(job_id) == "dead":
            if _dead(pk, campaign_id, "its job or worker ended or vanished while the run was running "
                                      "(killed?)", GenerationRun.Status.RUNNING, job_id=job_id):
                swept += 1
        elif beat is not None and beat < stale_before and _dead(
            pk, campaign_id, f"no heartbeat since {beat:%Y-%m-%d %H:%M:%S} UTC", GenerationRun.Status.RUNNING,
            job_id=job_id, heartbeat_at=heartbeat_at,
        ):
            swept += 1
    # A queued run whose RQ job vanished (Redis flushed or restarted) would wait forever.
    lost_before = now - timezone.timedelta(seconds=LOST_QUEUED_S)
    queued = GenerationRun.objects.filter(status=GenerationRun.Status.QUEUED).exclude(job_id="")
    rows = list(queued.filter(heartbeat_at__lt=lost_before).order_by("heartbeat_at")
                .values_list("pk", "job_id", "campaign_id")[:batch])
    if len(rows) < batch:  # rows queued before heartbeat_at was set on queueing
        rows += list(queued.filter(heartbeat_at__isnull=True, created_at__lt=lost_before)
                     .values_list("pk", "job_id", "campaign_id")[: batch - len(rows)])
    states = _job_states([job_id for _, job_id, _ in rows])
    alive = [pk for pk, job_id, _ in rows if states.get(job_id) != "dead"]
    if alive:
        GenerationRun.objects.filter(pk__in=alive, status=GenerationRun.Status.QUEUED).update(heartbeat_at=now)
    for pk, job_id, campaign_id in rows:
        if states.get(job_id) == "dead" and _dead(pk, campaign_id, "the queued job was lost from Redis",
                                                  GenerationRun.Status.QUEUED, job_id=job_id):
            swept += 1
    return swept


def close_connections() -> None:
    close_old_connections()
