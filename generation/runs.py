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
    """Log lines, stage timings, counts and cancellation checks for one executing run."""

    def __init__(self, run: GenerationRun) -> None:
        self.run_id = run.pk
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
        GenerationRun.objects.filter(pk=self.run_id).update(heartbeat_at=timezone.now(), **fields)

    def log(self, message: str) -> None:
        stamp = timezone.now().strftime("%H:%M:%S")
        self.text += "".join(f"{stamp} {line}\n" for line in str(message).splitlines() or [""])
        if len(self.text) > MAX_LOG_CHARS:
            # Keep the start (what was asked) and the end (what is happening now).
            head = self.text[: MAX_LOG_CHARS // 4]
            tail = self.text[-MAX_LOG_CHARS // 2:]
            self.text = head.rsplit("\n", 1)[0] + "\n[… earlier lines dropped …]\n" + tail.split("\n", 1)[-1]
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


def _job_state(job_id: str) -> str:
    """'alive', 'dead' or 'unknown' (Redis unreachable) for an RQ job id."""
    try:
        from rq.exceptions import NoSuchJobError
        from rq.job import Job, JobStatus

        from generation.queues import redis_connection

        conn = redis_connection()
        try:
            job = Job.fetch(job_id, connection=conn)
        except NoSuchJobError:
            return "dead"
        status = job.get_status(refresh=True)
    except Exception:  # noqa: BLE001 - Redis down: decide from the heartbeat alone
        return "unknown"
    if status in (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED, JobStatus.FINISHED, None):
        return "dead"
    return "alive"


def sweep_stale_runs() -> int:
    """Fail RUNNING runs whose worker died (RQ job failed or gone, or heartbeat stale).

    Cheap enough to call when a worker starts, before a job runs and when a run page is
    shown. The previous active suite is untouched: only a BUILDING suite is failed.
    """
    now = timezone.now()
    stale_before = now - timezone.timedelta(seconds=stale_after_s())
    swept = 0
    for run in GenerationRun.objects.filter(status=GenerationRun.Status.RUNNING).only("pk", "job_id", "heartbeat_at",
                                                                                       "started_at"):
        beat = run.heartbeat_at or run.started_at
        reason = None
        if run.job_id and _job_state(run.job_id) == "dead":
            reason = "its RQ job ended or vanished while the run was running (work horse killed?)"
        elif beat is not None and beat < stale_before:
            reason = f"no heartbeat since {beat:%Y-%m-%d %H:%M:%S} UTC"
        if reason and run_fail(run_id=run.pk, reason=FailureReason.WORKER_DIED, error=f"worker died: {reason}",
                               from_status=(GenerationRun.Status.RUNNING,), note=f"worker died: {reason}"):
            swept += 1
    # A queued run whose job vanished (Redis flushed or restarted) would wait forever.
    lost_before = now - timezone.timedelta(seconds=60)
    for run in GenerationRun.objects.filter(status=GenerationRun.Status.QUEUED, created_at__lt=lost_before).exclude(
        job_id=""
    ).only("pk", "job_id"):
        if _job_state(run.job_id) == "dead" and run_fail(
            run_id=run.pk, reason=FailureReason.WORKER_DIED, error="the queued job was lost from Redis",
            from_status=(GenerationRun.Status.QUEUED,), note="the queued job was lost from Redis",
        ):
            swept += 1
    return swept


def close_connections() -> None:
    close_old_connections()
