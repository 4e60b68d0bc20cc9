"""Workers that refuse to work with what they cannot read.

`manage.py rqworker --worker-class hardtests_web.ops.worker.CheckedWorker api sandbox`
(and `CheckedGenerationWorker` for the `generation` queue, whose materialising writes and
reads the same storage):
at start the worker checks it can reach the database and read the test-body storage and
exits non-zero with the reason when it cannot (a process manager restarts it); while it
runs it checks again every HARDTESTS_WORKER_CHECK_S seconds and, while a check fails,
takes no job (it stays registered and publishes why, so the API and /healthz/deep can say
it). A job it cannot judge would otherwise come back as a wrong verdict.

SimpleWorker: no fork per job, so the imported judging code and its cache of suite bodies
stay warm (the programs themselves always run in the sandbox).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.db import connections
from rq.worker import SimpleWorker

from core.queues import worker_health_forget, worker_health_publish
from generation.worker import GenerationWorker
from hardtests_web.ops.checks import worker_checks
from sandbox import SandboxUnavailable, get_sandbox

log = logging.getLogger(__name__)


class WorkerRefused(SystemExit):
    pass


class InfrastructureChecks:
    """Mixed into an RQ worker class: the checks at start and between jobs."""

    _checked_at = 0.0
    _problems: list[str] = []

    @property
    def check_period(self) -> float:
        return max(0.5, float(settings.HARDTESTS_WORKER_CHECK_S))

    def _check(self) -> list[str]:
        self._problems = worker_checks()
        self._checked_at = time.monotonic()
        if not isinstance(self, SimpleWorker):
            # A forking worker's job runs in a child: it must not inherit this connection.
            connections.close_all()
        record = {"ok": not self._problems, "problems": self._problems, "checked_at": time.time()}
        try:
            worker_health_publish(self.connection, self.name, record, self.check_period * 3 + 30)
        except Exception:  # Redis trouble is RQ's own to report
            log.warning("could not publish the worker's health", exc_info=True)
        return self._problems

    def work(self, *args: Any, **kwargs: Any) -> bool:
        problems = self._check()
        if problems:
            log.error("worker %s refuses to start: %s", self.name, "; ".join(problems))
            raise WorkerRefused(f"refusing to start: {'; '.join(problems)}")
        try:
            return super().work(*args, **kwargs)
        finally:
            try:
                worker_health_forget(self.connection, self.name)
            except Exception:
                pass

    def _wait_until_healthy(self) -> None:
        """Take no job while a check fails; keep heartbeating so the worker stays visible."""
        while True:
            if time.monotonic() - self._checked_at >= self.check_period:
                was_ok = not self._problems
                problems = self._check()
                if problems and was_ok:
                    log.error("worker %s stops taking jobs: %s", self.name, "; ".join(problems))
                elif not problems and not was_ok:
                    log.warning("worker %s takes jobs again: checks pass", self.name)
            if not self._problems:
                return
            self.heartbeat()
            time.sleep(min(1.0, self.check_period))

    def dequeue_job_and_maintain_ttl(self, timeout: int | None, max_idle_time: int | None = None) -> Any:
        if timeout is None:  # burst mode: one non-blocking look at the queues
            self._wait_until_healthy()
            return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
        started = time.monotonic()
        while True:
            self._wait_until_healthy()
            # Block on the queues no longer than one check period, then check again.
            slice_s = max(1, int(self.check_period))
            result = super().dequeue_job_and_maintain_ttl(min(timeout, slice_s), max_idle_time=slice_s)
            if result is not None:
                return result
            if max_idle_time is not None and time.monotonic() - started >= max_idle_time:
                return None


class CheckedWorker(InfrastructureChecks, SimpleWorker):
    """The sandbox worker: no fork per job (a warm suite cache), checked, and sandboxes
    started before its batches need them (HARDTESTS_SANDBOX_WARM)."""

    def work(self, *args: Any, **kwargs: Any) -> bool:
        try:
            get_sandbox().keep_warm()
        except SandboxUnavailable:
            pass  # the checks say why, and each job gets its SE
        return super().work(*args, **kwargs)


class CheckedGenerationWorker(InfrastructureChecks, GenerationWorker):
    """The generation worker (records a killed work horse on its run), checked."""
