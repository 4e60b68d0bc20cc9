"""Recording a GenerationRun while it executes: log lines, stage timings, counts, heartbeats and
cancellation checks. The run's status changes live in generation.services (its lifecycle)."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from generation.llm import LLMConfig
from generation.materialise.types import Cancelled
from generation.models import GenerationRun

log = logging.getLogger(__name__)

MAX_LOG_CHARS = 64_000
HEARTBEAT_S = 5.0


def stale_after_s() -> float:
    return settings.HARDTESTS_RUN_STALE_S


class RunLost(Exception):
    """The run is no longer the claim's: the sweep took it back (its worker looked dead) while the
    claim's holder still worked on it. The holder stops and writes nothing more to the run."""


class RunRecorder:
    """Log lines, stage timings, counts and cancellation checks for one executing run.

    `buffered` (the LLM stage of campaigns, many runs per process) keeps log lines in memory
    until the run's next write (a stage change, a move to another queue, a failure) instead of
    one UPDATE a line: those writes were a large share of the stage's CPU.

    `llm` is the endpoint every LLM call of the run goes to (generation.asking.ask reads it
    here, the one object each step of a run is handed); None: the settings' at the start.
    """

    def __init__(self, run: GenerationRun, *, buffered: bool = False, llm: LLMConfig | None = None,
                 claim: str | None = None) -> None:
        self.run_id = run.pk
        # With a claim (an LLM-stage worker's "llm:<token>"), every write is conditional on the run
        # still being RUNNING under it, and raises RunLost when it is not.
        self.claim = claim
        self.llm = llm or LLMConfig.from_settings()
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

    def owned(self) -> Any:
        """The run's row as a queryset, narrowed to the claim's hold when there is a claim."""
        runs = GenerationRun.objects.filter(pk=self.run_id)
        if self.claim is not None:
            runs = runs.filter(status=GenerationRun.Status.RUNNING, job_id=self.claim)
        return runs

    def _update(self, **fields: Any) -> None:
        if not self.owned().update(heartbeat_at=timezone.now(), **fields, **self.pending()) and self.claim is not None:
            raise RunLost(f"run {self.run_id} is no longer held by {self.claim}")

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
