"""RQ jobs of the catalogue: judging on the `sandbox` queue. Jobs take ids only."""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import random
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from redis import Redis

from core import joblife
from core.queues import get_queue
from problems.judging import MIN_TESTS_PER_LANE, judge_code, solution_judge
from problems.kill_order import failing_tests, kill_evidence_add
from problems.models import JUDGING_TASK, JudgingTask, KillEvidence, Solution, TestSuite
from problems.verify_contract import (
    HandoffItem,
    handed_off,
    job_context,
    result_fail_publish,
    result_publish,
    snapshot_of_job,
    suite_from_snapshot,
)
from problems.verify_types import Mode, VerifyRequest, VerifyResult

log = logging.getLogger(__name__)
SANDBOX_QUEUE = "sandbox"
# What the sandbox says of a program it stopped while it waited for a CPU (sandbox/base.py).
STARVED_MARK = "the machine is overloaded"
# A starved verification is judged again by its worker this many times, after backoff and at a
# calmer moment, before it is answered SE: HARDTESTS_STARVED_RERUNS (3).
STARVED_BACKOFF_S = 1.0
# How long one wait for a calmer moment may last, and the share of a CPU a short probe must get
# for the moment to count as calm: a starved program got under a tenth of one.
CALM_WAIT_S = 10.0
CALM_SHARE = 0.5
CALM_PROBE_S = 0.1


# Admission: the verification jobs of one host together run at most one test per CPU this
# process may use (its affinity). A job takes the host's free CPU slots, up to the lanes it
# would use, and judges with that many lanes; with none free it waits up to ADMISSION_WAIT_S,
# then runs one lane anyway (a slot is a promise of a CPU, never a reason to fail).
ADMISSION_WAIT_S = 30.0
ADMISSION_POLL_S = 0.02


def cpu_slots_dir() -> Path:
    # the workers of one deployment on one host share it (they share REDIS_URL); another
    # deployment (a test run beside a dev server) keeps its own
    fleet = hashlib.sha256(settings.REDIS_URL.encode()).hexdigest()[:12]
    folder = Path(tempfile.gettempdir()) / f"hardtests-cpu-slots-{os.getuid()}-{fleet}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


@contextmanager
def cpu_slots(wanted: int, *, wait_s: float = ADMISSION_WAIT_S) -> Iterator[int]:
    """Hold up to ``wanted`` of this host's CPU slots (flock'd files, one per usable CPU, let go
    when the holder ends, even killed); yields how many tests at once the holder may run."""
    count = len(os.sched_getaffinity(0))
    if not settings.HARDTESTS_JUDGE_ADMISSION:
        yield max(1, wanted)
        return
    folder = cpu_slots_dir()
    held: list[int] = []
    deadline = time.monotonic() + wait_s
    try:
        while True:
            for slot in range(count):
                if len(held) >= wanted:
                    break
                fd = os.open(folder / str(slot), os.O_CREAT | os.O_RDWR, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    held.append(fd)
                except BlockingIOError:
                    os.close(fd)
            if held or time.monotonic() > deadline:
                break
            time.sleep(ADMISSION_POLL_S)
        yield max(1, len(held))
    finally:
        for fd in held:
            os.close(fd)


@contextmanager
def judge_lanes(lanes: int) -> Iterator[None]:
    """Judging in this thread runs ``lanes`` lanes (problems.judging reads the setting per call;
    a sandbox worker runs one job at a time, in this thread)."""
    before = settings.HARDTESTS_JUDGE_PARALLEL
    settings.HARDTESTS_JUDGE_PARALLEL = lanes
    try:
        yield
    finally:
        settings.HARDTESTS_JUDGE_PARALLEL = before


def lanes_wanted(tests: int) -> int:
    """The lanes judging would use for ``tests`` tests (problems.judging._lane_count's rule)."""
    parallel = settings.HARDTESTS_JUDGE_PARALLEL or 1
    return max(1, min(parallel, tests // MIN_TESTS_PER_LANE))


def starved(result: dict[str, Any]) -> bool:
    """An SE because the program waited for a CPU it never got: the machine's fault, worth a re-run."""
    return result.get("verdict") == "SE" and STARVED_MARK in str(result.get("message") or "")


def cpu_share(seconds: float = CALM_PROBE_S) -> float:
    """The share of a CPU this process gets now: spin ``seconds`` of wall clock, count the CPU."""
    wall, cpu = time.monotonic(), resource.getrusage(resource.RUSAGE_THREAD).ru_utime
    end = wall + seconds
    while time.monotonic() < end:
        pass
    used = resource.getrusage(resource.RUSAGE_THREAD).ru_utime - cpu
    return used / max(1e-6, time.monotonic() - wall)


def calmer_moment(attempt: int, *, answer_by: float | None = None) -> bool:
    """Back off (exponential, full jitter), then wait until a CPU is mostly free again (a probe
    gets CALM_SHARE of one) or CALM_WAIT_S passes. False when ``answer_by`` (epoch seconds, the
    caller's deadline) leaves no time for it."""
    pause = random.uniform(0.5, 1.0) * STARVED_BACKOFF_S * 2**attempt
    until = time.time() + pause + CALM_WAIT_S
    if answer_by is not None:
        if time.time() + pause >= answer_by:
            return False
        until = min(until, answer_by)
    time.sleep(pause)
    while time.time() < until and cpu_share() < CALM_SHARE:
        time.sleep(min(1.0, max(0.0, until - time.time())))
    return answer_by is None or time.time() < answer_by


def starved_rerun(judge: Callable[[], dict[str, Any]], *, answer_by: float | None = None,
                  is_starved: Callable[[dict[str, Any]], bool] = starved) -> dict[str, Any]:
    """``judge()``'s answer, judged again (bounded) while it is a starved SE: the server absorbs
    an overloaded moment instead of passing an SE on to every caller."""
    result = judge()
    reruns = int(settings.HARDTESTS_STARVED_RERUNS)
    for attempt in range(reruns):
        if not is_starved(result) or not calmer_moment(attempt, answer_by=answer_by):
            break
        log.info("starved verification judged again (%d of %d), pid %d", attempt + 1, reruns, os.getpid())
        result = judge()
    return result


def judge_solution_job(task_id: int) -> str:
    """Judge one stored solution; the outcome (or the failure) is recorded on the task row."""
    worker, job_id = joblife.current_worker()
    if not joblife.claim(JUDGING_TASK, pk=task_id, worker=worker, job_id=job_id):
        return "skipped"  # already taken by another worker, or cancelled
    task = JudgingTask.objects.select_related("solution__problem", "suite__output_judge").get(pk=task_id)
    try:
        # Mode(): a row whose mode is no mode fails its task, it is never judged some other way
        verdict = solution_judge(solution=task.solution, suite=task.suite, mode=Mode(task.mode))
    except Exception as exc:
        log.exception("judging task %s failed", task_id)
        joblife.fail(JUDGING_TASK, pk=task_id, reason=f"{type(exc).__name__}: {exc}"[:2000])
        raise
    joblife.finish(JUDGING_TASK, pk=task_id)
    return verdict.verdict


def judge_code_job(problem_id: int, suite_id: int, language: str, code: str, mode: str,
                   resolved: dict[str, Any] | None = None, subset: str = "full") -> dict[str, Any]:
    """Judge submitted code without storing it (the verification API); returns the result's wire
    (problems.verify_types.VerifyResult). The API enqueues it by name (problems.verify_contract.JUDGE_JOB)
    with a VerifyRequest's wire as its keyword arguments (an earlier release sent them positionally).
    A mode or subset the contract does not know raises: a bug to report, never a mode to guess.

    `resolved` (by default the snapshot in the job's meta) is the suite as the API resolved
    it (a SuiteSnapshot's wire): when this worker has the suite's bodies cached, judging needs
    no query at all (a millisecond less between the request and its answer); else one query
    reads the suite and its problem (the judging function too when the bodies are not cached yet).
    """
    picked_up = time.time()
    request = VerifyRequest.from_wire({"problem_id": problem_id, "suite_id": suite_id, "language": language,
                                       "code": code, "mode": mode, "subset": subset})
    if resolved is None:
        resolved = snapshot_of_job()
    names_this_suite = bool(
        resolved and (resolved.get("suite_id"), resolved.get("problem_id")) == (request.suite_id, request.problem_id))
    hit = suite_from_snapshot(resolved, request.subset) if resolved and names_this_suite else None
    if hit is not None:
        suite, loaded = hit
    else:
        suite = TestSuite.objects.select_related("problem").get(pk=request.suite_id, problem_id=request.problem_id)
        loaded = None
    tests = len(loaded.tests) if loaded is not None else suite.test_count

    def judge() -> dict[str, Any]:
        with cpu_slots(lanes_wanted(tests)) as lanes, judge_lanes(lanes):
            return judge_code(problem=suite.problem, suite=suite, language=request.language, code=request.code,
                              mode=request.mode, loaded=loaded, subset=request.subset).to_dict()

    judged = starved_rerun(judge)
    job = job_context()
    # epoch seconds, one machine's clock for the API's breakdown of a call (bench/verify.py)
    enqueued = job.enqueued_at if job is not None else None
    result = VerifyResult.from_wire({**judged, "timings": {"enqueued": enqueued, "picked_up": picked_up,
                                                           "returned": time.time()}})
    result_publish(result)  # the API's answer leaves before RQ's bookkeeping
    if settings.HARDTESTS_KILL_ORDER_FROM_API and result.verdict not in ("AC", "SE", "CE"):
        # after the answer left: a fail-fast run names its first failing test, a later one
        # than the order's first when the program passed those before it
        kill_evidence_add(suite_id=suite.pk, language=request.language, code=request.code,
                          failing=failing_tests(result.tests), source=KillEvidence.Source.API)
    return result.to_wire()


def judge_handoff(item: HandoffItem, connection: Redis) -> bool:
    """Judge one handed-off verification in this process (a checked sandbox worker's, which holds
    it): judge_code_job with the item as its context, so the result, the verdict cache and the
    kill order are what an RQ job's would be. Its failure is published for its caller (an error,
    never a verdict) and logged; False then. An item whose caller gave up is not judged."""
    if time.time() >= item.deadline:
        log.info("handed-off verification %s dropped: its caller stopped waiting", item.id)
        return True
    try:
        with handed_off(item.context(connection)):
            judge_code_job(**item.kwargs)
    except Exception as exc:
        log.exception("handed-off verification %s failed", item.id)
        try:
            result_fail_publish(connection, item.id, f"{type(exc).__name__}: {exc}")
        except Exception:
            log.warning("could not publish the failure of %s", item.id, exc_info=True)
        return False
    return True


def _enqueue_tasks(task_ids: list[int]) -> None:
    queue = get_queue(SANDBOX_QUEUE)
    for task_id in task_ids:
        job = queue.enqueue(judge_solution_job, task_id, job_timeout=3600, failure_ttl=7 * 86400)
        JudgingTask.objects.filter(pk=task_id).update(job_id=job.id)


def judging_requeue_orphans() -> int:
    """Queue again every unfinished task: for a Redis that just started empty, with no worker
    running yet (the embedded one keeps nothing across restarts), so no job is lost."""
    ids = list(
        JudgingTask.objects.filter(status__in=[JudgingTask.Status.QUEUED, JudgingTask.Status.RUNNING]).values_list(
            "pk", flat=True
        )
    )
    joblife.requeue_many(JUDGING_TASK, pks=ids)
    _enqueue_tasks(ids)
    return len(ids)


def judging_enqueue(*, suite: TestSuite, solutions: list[Solution] | None = None, mode: Mode = Mode.ALL) -> int:
    """Queue one judging job per solution (default: every solution of the suite's problem)."""
    if solutions is None:
        solutions = list(suite.problem.solutions.all())
    tasks = [JudgingTask.objects.create(solution=s, suite=suite, mode=mode.value) for s in solutions]
    transaction.on_commit(lambda: _enqueue_tasks([t.pk for t in tasks]))
    return len(tasks)


def judging_sweep_dead(*, older_than_s: int = 120) -> int:
    """Mark tasks whose RQ job died without recording anything (a killed worker) as failed."""
    return joblife.sweep_dead(JUDGING_TASK, grace_s=older_than_s)
