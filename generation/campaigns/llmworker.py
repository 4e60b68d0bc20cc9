"""The LLM-stage worker: many campaign runs in flight in one process (`manage.py llm_worker`).

LLM calls mostly wait on the network, so one process keeps HARDTESTS_LLM_IN_FLIGHT of them
going on threads. A run also needs CPU between its calls (the pre-flight and the validator
review in the sandbox, parsing, saving the kit), so the worker runs more threads than calls
(HARDTESTS_LLM_STAGE_THREADS, by default twice as many) and a semaphore in generation.llm
holds only the calls themselves to the limit: while some runs compute, others wait on the
network. Its queue is the table: it claims QUEUED runs (two queries, whatever the
queue length), beats one heartbeat for all of them every few seconds, keeps a liveness key
in Redis (the janitor's dead-run sweep sees a killed worker within seconds).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from core.queues import redis_connection
from generation.campaigns.stages import llm_stage_execute
from generation.llm import llm_in_flight_limit
from generation.models import Campaign, GenerationRun
from generation.recorder import HEARTBEAT_S
from generation.services import LLM_WORKER_KEY, llm_stage_claim

log = logging.getLogger(__name__)

ALIVE_TTL_S = 20


def _tidy_connection() -> None:
    """After a run: drop a broken connection. On SQLite a thread keeps its connection between
    runs (reconnecting after each, as CONN_MAX_AGE=0 would, was a visible share of the stage's
    CPU); other databases follow CONN_MAX_AGE, so that idle threads hold no server connections."""
    if connection.vendor != "sqlite":
        close_old_connections()
    elif connection.errors_occurred:
        if connection.connection is not None and connection.is_usable():
            connection.errors_occurred = False
        else:
            connection.close()


class LLMStageWorker:
    def __init__(self, *, in_flight: int, threads: int = 0, poll_s: float = 0.5) -> None:
        self.in_flight = max(1, in_flight)
        self.threads = max(self.in_flight, threads or 2 * self.in_flight)
        self.poll_s = poll_s
        self.token = uuid.uuid4().hex[:16]
        self.claim = f"llm:{self.token}"
        self.stop = threading.Event()
        self.done: dict[str, int] = {}
        self._lock = threading.Lock()

    def _alive(self) -> None:
        try:
            redis_connection().set(LLM_WORKER_KEY.format(token=self.token), "1", ex=ALIVE_TTL_S)
        except Exception:  # noqa: BLE001 - the database heartbeat still tells the sweep we live
            log.warning("could not refresh the LLM worker's liveness key", exc_info=True)

    def _one(self, run_id: int) -> None:
        try:
            outcome = llm_stage_execute(run_id=run_id, claim=self.claim)
        except Exception:  # noqa: BLE001 - the sweep puts the run back; the worker goes on
            log.exception("run %s: LLM stage failed outside the run's own handling", run_id)
            outcome = "error"
        finally:
            _tidy_connection()
        with self._lock:
            self.done[outcome] = self.done.get(outcome, 0) + 1

    def _beat(self, running: list[int]) -> None:
        self._alive()
        if running:
            GenerationRun.objects.filter(pk__in=running, status=GenerationRun.Status.RUNNING, job_id=self.claim).update(
                heartbeat_at=timezone.now())

    @staticmethod
    def _work_left() -> bool:
        return GenerationRun.objects.filter(
            status=GenerationRun.Status.QUEUED, job_id="", kit__isnull=True, mode=GenerationRun.Mode.FROM_SCRATCH,
            campaign__status=Campaign.Status.RUNNING).exists()

    def run(self, *, burst: bool = False) -> dict[str, int]:
        """Work until stop is set (or, with burst, until no campaign run waits for the LLM)."""
        self._alive()
        llm_in_flight_limit(self.in_flight)
        pool = ThreadPoolExecutor(self.threads, thread_name_prefix="llm-stage")
        futures: dict[Future[None], int] = {}
        last_beat = outage_wait = 0.0
        try:
            while not self.stop.is_set():
                for future in [f for f in futures if f.done()]:
                    futures.pop(future)
                try:
                    claimed = llm_stage_claim(claim=self.claim, limit=self.threads - len(futures))
                    now = time.monotonic()
                    if now - last_beat >= HEARTBEAT_S:
                        self._beat(list(futures.values()))
                        last_beat = now
                    outage_wait = 0.0
                except DatabaseError as exc:
                    # An outage (a restart, a failover) is waited out with backoff, not fatal.
                    outage_wait = min(30.0, max(1.0, outage_wait * 2))
                    log.warning("database unavailable (%s); trying again in %.0f s", exc, outage_wait)
                    connection.close()
                    self.stop.wait(outage_wait)
                    continue
                for run_id in claimed:
                    futures[pool.submit(self._one, run_id)] = run_id
                if burst and not futures and not claimed and not self._work_left():
                    break
                if not claimed:
                    if futures:
                        wait(list(futures), timeout=self.poll_s, return_when=FIRST_COMPLETED)
                    else:
                        self.stop.wait(self.poll_s)
                _tidy_connection()
        finally:
            # Warm stop: the calls in flight finish and hand their runs on; a SIGKILL instead
            # leaves them to the sweep, which queues them again.
            while futures:
                self._beat(list(futures.values()))
                done, _ = wait(list(futures), timeout=HEARTBEAT_S)
                for future in done:
                    futures.pop(future)
            pool.shutdown(wait=True)
            llm_in_flight_limit(None)
            try:
                redis_connection().delete(LLM_WORKER_KEY.format(token=self.token))
            except Exception:  # noqa: BLE001 - it expires by itself
                pass
        return dict(self.done)
