"""Workers that refuse to work with what they cannot read.

`manage.py rqworker --worker-class hardtests_web.ops.worker.CheckedWorker api sandbox`
(and `CheckedGenerationWorker` for the `generation` queue, whose materialising writes and
reads the same storage):
at start the worker checks it can reach the database and read the test-body storage and
exits non-zero with the reason when it cannot (a process manager restarts it); while it
runs it checks again every HARDTESTS_WORKER_CHECK_S seconds and, while a check fails,
takes no job (it stays registered and publishes why, so the API and /healthz/deep can say
it) and checks again after 1, 2, 4, 4 ... s, so it works again within seconds of the fault's end. A job it cannot judge would otherwise come back as a wrong verdict.

SimpleWorker: no fork per job, so the imported judging code and its cache of suite bodies
stay warm (the programs themselves always run in the sandbox).

A CheckedWorker of the verification queue also takes the API's handed-off verifications
(problems/verify_contract.py, "the hand-off"; HARDTESTS_API_HANDOFF): it blocks on their list
beside its RQ queues, handed-off items first, holds the one it judges under its name, and says
in its health record that it takes them, so the API hands off only while one does.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

import redis
from django.conf import settings
from django.db import connections
from rq.exceptions import NoSuchJobError, StopRequested
from rq.queue import Queue
from rq.timeouts import JobTimeoutException
from rq.utils import as_text, backend_class
from rq.worker import SimpleWorker, WorkerStatus
from rq.worker_registration import register as registration_add

from core.embedded import parent_death_kills_me
from core.queues import (
    VERIFICATION_QUEUE,
    WORKER_HEALTH_HASH,
    redis_now,
    worker_health_forget,
    worker_health_publish,
    workers_dead,
)
from hardtests_web.ops.checks import worker_checks
from hardtests_web.ops.process import exit_fast, exit_fast_enabled
from hardtests_web.ops.reaper import worker_reap
from problems.jobs import judge_handoff
from problems.verify_contract import (
    HANDOFF_HEALTH_KEY,
    HANDOFF_HELD_KEY,
    HANDOFF_KEY,
    HandoffItem,
    handoff_parse,
    result_fail_publish,
)
from sandbox import SandboxUnavailable, get_sandbox

if TYPE_CHECKING:
    from rq.job import Job
    from rq.worker import BaseWorker as _WorkerBase
else:
    _WorkerBase = object  # a mixin: the RQ worker class comes second in the bases

log = logging.getLogger(__name__)

# While a check fails, the next comes after 1, 2, 4, 4 ... s (see next_check_s).
RECHECK_FIRST_S = 1.0
RECHECK_MAX_S = 4.0


class WorkerRefused(SystemExit):
    pass


class InfrastructureChecks(_WorkerBase):
    """Mixed into an RQ worker class: the checks at start and between jobs."""

    _checked_at = 0.0
    _problems: list[str] = []
    _failed_checks = 0
    _worker_pid = 0
    _beat_stop: threading.Event | None = None
    _takes_handoff = False

    @property
    def check_period(self) -> float:
        return max(0.5, float(settings.HARDTESTS_WORKER_CHECK_S))

    @property
    def next_check_s(self) -> float:
        """How long until the next check: HARDTESTS_WORKER_CHECK_S while checks pass; while one
        fails, RECHECK_FIRST_S doubling up to RECHECK_MAX_S, so a worker takes jobs again within
        seconds of the database or the storage coming back (not a whole period later: 46
        refusals in the 18 s after PostgreSQL returned, with the 30 s period)."""
        if not self._problems:
            return self.check_period
        backoff = RECHECK_FIRST_S * 2.0 ** max(0, self._failed_checks - 1)
        return min(backoff, RECHECK_MAX_S, self.check_period)

    def _publish(self) -> None:
        record = {"ok": not self._problems, "problems": self._problems, "checked_at": time.time(),
                  "hostname": self.hostname, "pid": os.getpid(), HANDOFF_HEALTH_KEY: self._takes_handoff}
        worker_health_publish(self.connection, self.name, record, float(settings.HARDTESTS_WORKER_DEAD_S))

    def request_stop(self, signum: int, frame: Any) -> None:
        """RQ's SIGTERM handler, with the stop remembered even when the worker is idle. RQ then
        only raises StopRequested in whatever the main thread runs; code there that catches
        Exception (a database check in its query, the take-over of a name) swallowed it, and the
        worker took jobs again past its stop, to be killed at shutdown. RQ's loop and the wait for
        healthy checks read the flag at their next turn, whatever swallowed the exception."""
        self._stop_requested = True
        super().request_stop(signum, frame)  # type: ignore[no-untyped-call]  # RQ leaves it unannotated

    def _check(self) -> list[str]:
        problems = worker_checks()
        if getattr(self, "_stop_requested", False):
            raise StopRequested()  # the stop came during a check: not a problem of the database
        self._problems = problems
        self._checked_at = time.monotonic()
        self._failed_checks = self._failed_checks + 1 if self._problems else 0
        if not isinstance(self, SimpleWorker):
            # A forking worker's job runs in a child: it must not inherit this connection.
            connections.close_all()
        try:
            self._publish()
        except StopRequested:
            # RQ's SIGTERM handler raises this in whatever the idle worker runs: not Redis
            # trouble. Swallowed, it left a worker waiting out a failing check (a full disk)
            # running past its stop, to be killed.
            raise
        except Exception:  # Redis trouble is RQ's own to report
            log.warning("could not publish the worker's health", exc_info=True)
        return self._problems

    def _beat(self, stop: threading.Event) -> None:
        """The worker's pulse, independent of the job it runs (a SimpleWorker runs it in this
        process's main thread for as long as it takes): its record is renewed every
        HARDTESTS_WORKER_BEAT_S, so it expires HARDTESTS_WORKER_DEAD_S after the process dies.
        Its registration is renewed too, in case a janitor took a live but starved worker for dead."""
        period = max(0.2, float(settings.HARDTESTS_WORKER_BEAT_S))
        while not stop.wait(period):
            try:
                self._publish()
                registration_add(self)
                if not self.connection.hexists(self.key, "queues"):
                    # A restarted Redis forgot RQ's hash of this worker, which names its queues
                    # for a reaper (RQ's own heartbeat writes back only its time): write it
                    # again, as RQ does at birth.
                    with self.connection.pipeline() as pipe:
                        pipe.hset(self.key, mapping=self.serialize())
                        pipe.expire(self.key, self.worker_ttl + 60)
                        pipe.execute()
            except Exception:
                pass  # Redis away: RQ's loop reports it and reconnects

    def _take_over_name(self) -> None:
        """Take over the name from a dead holder instead of being refused by RQ until its key
        expires (a systemd unit restarts a killed worker under the same --name). Before this
        worker publishes anything under the name, so the dead holder's record is still there."""
        key = self.key
        host, pid, death = cast(list[bytes | None], self.connection.hmget(key, ["hostname", "pid", "death"]))
        if host is not None and death is None:
            # (a restarted container may give the new process the dead one's pid)
            same_host_gone = host.decode() == self.hostname and pid and (
                int(pid) == os.getpid() or not _pid_alive(int(pid)))
            with self.connection.pipeline(transaction=False) as pipe:
                pipe.hgetall(WORKER_HEALTH_HASH)
                pipe.time()
                health, now = pipe.execute()
            if same_host_gone or workers_dead(health, [self.name], redis_now(now)):
                worker_reap(self.connection, self.name, reason="a new worker starts under its name")

    def work(self, *args: Any, **kwargs: Any) -> bool:
        try:
            self._take_over_name()
        except Exception:
            log.warning("could not check for a dead worker under this name", exc_info=True)
        problems = self._check()
        if problems:
            log.error("worker %s refuses to start: %s", self.name, "; ".join(problems))
            raise WorkerRefused(f"refusing to start: {'; '.join(problems)}")
        self._beat_stop = threading.Event()
        self._worker_pid = os.getpid()
        threading.Thread(target=self._beat, args=(self._beat_stop,), name="worker-beat", daemon=True).start()
        try:
            worked = self._work_through_redis_outages(*args, **kwargs)
        finally:
            self._beat_stop.set()
            try:
                worker_health_forget(self.connection, self.name)
            except Exception:
                pass
        if exit_fast_enabled():
            exit_fast(0)  # stopped and unregistered: nothing left for the interpreter's teardown
        return worked

    def main_work_horse(self, job: Job, queue: Queue) -> None:
        # A forking worker's work horse dies with it: a worker killed with SIGKILL leaves no
        # job running that nobody will record.
        parent_death_kills_me(self._worker_pid)
        super().main_work_horse(job, queue)

    def _work_through_redis_outages(self, *args: Any, **kwargs: Any) -> bool:
        """RQ's loop, entered again when Redis went away under it. RQ waits out an outage only
        while it waits for a job; one that comes while a job runs ends the worker ("unhandled
        exception, quitting"), and a process manager would start a cold one. This one waits for
        Redis with backoff and registers again (a restarted Redis has forgotten it)."""
        wait_s = 1.0
        while True:
            try:
                return super().work(*args, **kwargs)
            except redis.exceptions.ConnectionError as exc:
                if getattr(self, "_stop_requested", False):
                    raise
                log.warning("worker %s lost Redis (%s); working again once it answers", self.name, exc)
            while True:
                time.sleep(wait_s)
                try:
                    self.connection.ping()
                    break
                except redis.exceptions.ConnectionError:
                    wait_s = min(30.0, wait_s * 2)
            wait_s = 1.0
            try:
                self._take_over_name()
            except StopRequested:
                raise
            except Exception:
                log.warning("could not clear this worker's earlier registration", exc_info=True)

    def _wait_until_healthy(self) -> None:
        """Take no job while a check fails; keep heartbeating so the worker stays visible."""
        while True:
            if getattr(self, "_stop_requested", False):
                raise StopRequested()  # asked to stop while it waited: stop, as an idle RQ worker does
            if time.monotonic() - self._checked_at >= self.next_check_s:
                was_ok = not self._problems
                problems = self._check()
                if problems and was_ok:
                    log.error("worker %s stops taking jobs: %s", self.name, "; ".join(problems))
                elif not problems and not was_ok:
                    log.warning("worker %s takes jobs again: checks pass", self.name)
            if not self._problems:
                return
            self.heartbeat()
            time.sleep(max(0.05, min(0.25, self._checked_at + self.next_check_s - time.monotonic())))

    def dequeue_job_and_maintain_ttl(self, timeout: int | None,
                                     max_idle_time: int | None = None) -> tuple[Job, Queue] | None:
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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class HandedOff:
    """A handed-off verification where RQ's loop expects a job (it logs its id and description)."""

    def __init__(self, item: HandoffItem) -> None:
        self.item = item
        self.id = item.id
        self.description = item.description
        self.redis_server_version: Any = None


@functools.cache
def _handoff_queue_class(base: type[Queue]) -> type[Queue]:
    """`base` whose dequeue also pops handed-off items, before any RQ job (their callers wait)."""

    class HandoffQueue(base):  # type: ignore[valid-type,misc]  # a class made from a variable
        @classmethod
        def dequeue_any(cls, queues: Any, timeout: int | None, connection: redis.Redis,
                        job_class: Any = None, serializer: Any = None,
                        death_penalty_class: Any = None) -> tuple[Any, Queue] | None:
            queues = list(queues)
            job_cls: type[Job] = backend_class(cls, "job_class", override=job_class)
            while True:
                # one BLPOP on the hand-off and every queue (RQ's own for a worker of two queues)
                popped = cls.lpop([HANDOFF_KEY, *(q.key for q in queues)], timeout, connection=connection)
                if popped is None:
                    return None
                key, value = as_text(popped[0]), popped[1]
                if key == HANDOFF_KEY:
                    item = handoff_parse(value)
                    if item is None:
                        log.error("dropped a handed-off item of another shape: %r", value[:200])
                        continue
                    return HandedOff(item), next(q for q in queues if q.name == VERIFICATION_QUEUE)
                queue = cls.from_queue_key(key, connection=connection, job_class=job_cls, serializer=serializer,
                                           death_penalty_class=death_penalty_class)
                try:
                    return job_cls.fetch(as_text(value), connection=connection, serializer=serializer), queue
                except NoSuchJobError:
                    continue  # as RQ does: a job deleted while queued

    HandoffQueue.__qualname__ = HandoffQueue.__name__ = f"Handoff{base.__name__}"
    return HandoffQueue


class CheckedWorker(InfrastructureChecks, SimpleWorker):
    """The sandbox worker: no fork per job (a warm suite cache), checked, and sandboxes
    started before its batches need them (HARDTESTS_SANDBOX_WARM); on the verification queue it
    takes handed-off verifications too."""

    def work(self, *args: Any, **kwargs: Any) -> bool:
        try:
            get_sandbox().keep_warm()
        except SandboxUnavailable:
            pass  # the checks say why, and each job gets its SE
        self._takes_handoff = bool(settings.HARDTESTS_API_HANDOFF) and VERIFICATION_QUEUE in self.queue_names()
        if self._takes_handoff:
            self.queue_class = _handoff_queue_class(self.queue_class)
        return super().work(*args, **kwargs)

    def execute_job(self, job: Any, queue: Queue) -> None:
        if isinstance(job, HandedOff):
            self._judge_handed_off(job.item)
        else:
            super().execute_job(job, queue)

    def _judge_handed_off(self, item: HandoffItem) -> None:
        """Judge one handed-off item, held under this worker's name until its answer is out (a
        reaper gives it back if this worker dies meanwhile), busy as RQ's jobs are (a stop asked
        meanwhile waits for it), within its timeout as an RQ job is."""
        held = HANDOFF_HELD_KEY.format(worker=self.name)
        # The hold is sent before judging starts and its reply read after (a round trip off the
        # caller's path): once sent, Redis gets it even if this process dies the next moment.
        self._state = WorkerStatus.BUSY  # RQ's set_state, its HSET sent with the hold
        pool = self.connection.connection_pool
        claim: Any = pool.get_connection()  # redis-py leaves its Connection's methods unannotated
        try:
            claim.send_packed_command(claim.pack_commands(
                [("SET", held, item.raw), ("HSET", self.key, "state", WorkerStatus.BUSY)]))
        except Exception:
            claim.disconnect()
            pool.release(claim)
            raise  # Redis is away: RQ's loop waits for it (the item's caller gets its 503 timeout)
        started, judged = time.monotonic(), False
        try:
            with self.death_penalty_class(item.timeout_s, JobTimeoutException, job_id=item.id):
                judged = judge_handoff(item, self.connection)
        except JobTimeoutException as exc:  # the alarm came between the job's end and the block's
            result_fail_publish(self.connection, item.id, f"JobTimeoutException: {exc}")
        finally:
            try:
                claim.read_response()
                claim.read_response()
            except Exception:
                claim.disconnect()  # an answer half read: the connection is not used again as is
                log.warning("the hold of %s was not confirmed", item.id, exc_info=True)
            finally:
                pool.release(claim)
            # after the answer left: RQ's counts of this worker's jobs, as its own jobs keep them
            with self.connection.pipeline(transaction=False) as pipe:
                pipe.delete(held)
                self.set_state(WorkerStatus.IDLE, pipeline=pipe)
                if judged:
                    self.increment_successful_job_count(pipeline=pipe)
                else:
                    self.increment_failed_job_count(pipeline=pipe)
                self.increment_total_working_time(timedelta(seconds=time.monotonic() - started), pipeline=pipe)
                pipe.execute()


@functools.cache
def _checked_generation_worker() -> type:
    from generation.worker import GenerationWorker

    class CheckedGenerationWorker(InfrastructureChecks, GenerationWorker):
        """The generation worker (records a killed work horse on its run), checked."""

    CheckedGenerationWorker.__module__ = __name__
    CheckedGenerationWorker.__qualname__ = "CheckedGenerationWorker"
    return CheckedGenerationWorker


def __getattr__(name: str) -> Any:
    """`CheckedGenerationWorker`, made on first use (RQ looks the worker class up by this
    module's path): a sandbox worker never imports the generation stage (its reply parsing and
    pydantic) nor the HTTP client it brings (0.2 s of import, 0.4 s of CPU at each start)."""
    if name == "CheckedGenerationWorker":
        return _checked_generation_worker()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
