"""Verifying programs on the `sandbox` RQ workers: check capacity, enqueue, wait for results.

The web process never runs a program. It enqueues the judging job of the verification
contract (problems/verify_contract.py: the job, the suite snapshot in its meta, the result
streams), the same judging the rest of the app uses (kill order, compile cache, cached suite
bodies), and blocks on the jobs' result streams with one XREAD, so a result is returned the
moment a worker writes it, without polling. A single verification hands the same job to an idle
worker as one item instead of an RQ job (the contract's "hand-off"; HARDTESTS_API_HANDOFF).

The verdict cache (HARDTESTS_API_VERDICT_CACHE_S): a question asked again (the same token
owner, suite, limits, subset, language, mode and program: an RL group's repeated samples sent
one call each) within that time is answered with the kept result, marked `cached`, read in
the round trip that checks capacity; the program does not run again.
"""

from __future__ import annotations

import functools
import json
import time
import uuid
from dataclasses import dataclass, replace
from typing import Any, Literal, NotRequired, TypedDict, cast

from django.conf import settings
from redis.exceptions import RedisError
from rq.job import Job, JobStatus
from rq.results import Result

from api.after_response import after_response
from api.conf import api_setting
from api.errors import NotFound, PayloadTooLarge, Unavailable
from api.selectors import verification_target
from core.queues import (
    WORKER_HEALTH_HASH,
    queue_workers_parse,
    queue_workers_read,
    redis_connection,
    redis_now,
    verification_queue,
    worker_health_parse,
    workers_alive,
)
from problems.models import Problem, TestSuite
from problems.verify_contract import (
    HANDOFF_HEALTH_KEY,
    HANDOFF_KEY,
    RESULT_KEY,
    AnyResult,
    HandoffItem,
    handoff_item,
    judge_job_data,
    results_read,
    results_wait,
    suite_snapshot,
    verdict_cache_key,
    verdict_cache_parse,
)
from problems.verify_types import Mode, Subset, VerifyRequest, VerifyResult, WireError

BATCH_KEY = "hardtests:api:batch:{id}"
# A finished single verification is read once, at once, from the job's early result (deleted
# when read): RQ keeps no result and deletes the job as it succeeds (result_ttl 0). A failed
# job's record (an exception, read from RQ's result stream) stays this long.
SYNC_RESULT_TTL_S = 60


class SuiteInfo(TypedDict):
    """What a batch remembers of each item's suite (its answers name the suite judged)."""

    version: int
    origin: str
    total: int


class BatchRecord(TypedDict):
    """A batch as kept in Redis (JSON) for GET /api/v1/jobs/{id}."""

    owner: int  # the user id of its token (api.headerless.NETWORK_OWNER for an allow-listed network)
    created: float  # epoch seconds
    jobs: list[str]  # RQ job ids, one per item, in order (items asking the same thing share one)
    suites: list[SuiteInfo]
    # results the verdict cache answered, by the id in `jobs` that stands for them ("cached:N")
    cached: NotRequired[dict[str, dict[str, Any]]]


def suite_info(suite: TestSuite) -> SuiteInfo:
    return {"version": suite.version, "origin": suite.origin, "total": suite.test_count}


@dataclass(frozen=True)
class Verification:
    """One verification as the API resolved it: the request the job is asked, and the problem
    and suite it names (the suite's snapshot is taken when it is enqueued, once per question)."""

    problem: Problem
    suite: TestSuite
    request: VerifyRequest


@dataclass(frozen=True)
class Outcome:
    """What became of one enqueued verification, as the API reports it."""

    # queued, running, finished, or error: the worker could not judge (an infrastructure
    # failure: storage or database unreadable, a crash), which is never a verdict on the program.
    status: Literal["queued", "running", "finished", "error"]
    result: VerifyResult | None = None
    error: str | None = None
    finished_at: float | None = None  # when the worker stored the result (epoch seconds)
    # the web side's steps (ms) of a single verification, for Server-Timing
    steps: dict[str, float] | None = None
    cached: bool = False  # the verdict cache answered: the program did not run for this call


def verification_prepare(*, problem: str, language: str, code: str, mode: Mode,
                         suite: int | Subset | None) -> Verification:
    """Check one request's limits and resolve its problem and suite (400 / 404 / 413): `suite` is
    a version, None or "full" for the active suite, "fast" for the active suite's fast subset."""
    limit_kb = api_setting("HARDTESTS_API_MAX_CODE_KB")
    size = len(code.encode("utf-8"))
    if size > limit_kb * 1024:
        raise PayloadTooLarge(f"code is {size} bytes; the limit is {limit_kb} KiB", code="code_too_large")
    found, target = verification_target(problem, suite if isinstance(suite, int) else None)
    return Verification(found, target, VerifyRequest(problem_id=found.pk, suite_id=target.pk, language=language,
                                                     code=code, mode=mode,
                                                     subset=suite if isinstance(suite, str) else "full"))


def _enqueue(items: list[Verification], *, owner_id: int, queued_ttl: int, result_ttl: int,
             failure_ttl: int | None = None, handoff: bool = False) -> list[Job | HandoffItem | VerifyResult]:
    """Refuse with 503 when no worker listens or the queue is full; else, per item, the result the
    verdict cache kept for it or its job, every job enqueued in one round trip. `handoff`: a
    caller that waits for its answer (`queued_ttl` seconds) has its jobs handed off when a live
    worker takes handed-off items (HARDTESTS_API_HANDOFF)."""
    queue = verification_queue()
    keep_s = api_setting("HARDTESTS_API_VERDICT_CACHE_S")
    snapshots = [suite_snapshot(v.suite) for v in items]
    cache_keys = [verdict_cache_key(v.request, snapshot, owner_id=owner_id)
                  for v, snapshot in zip(items, snapshots, strict=True)] if keep_s > 0 else []
    try:
        # the queue's workers (RQ's registration set, as Worker.all_keys reads it), its
        # backlog, the workers' health and the verdict cache's answers in one round trip
        with queue.connection.pipeline(transaction=False) as pipe:
            queue_workers_read(pipe, queue.name)
            pipe.llen(queue.key)
            pipe.llen(HANDOFF_KEY)
            pipe.hgetall(WORKER_HEALTH_HASH)
            pipe.time()
            if cache_keys:
                pipe.mget(cache_keys)
            listed, backlog, handed, health, now, *found = pipe.execute()
        backlog += handed
        # counted by its own fresh beat, not by RQ's list (a killed worker stays listed for
        # minutes, a Redis restart can leave a name listed that nothing answers to)
        names, registered = queue_workers_parse(listed)
        alive = workers_alive(health, names, redis_now(now), registered=registered)
        if not alive:
            raise Unavailable("no sandbox worker is running; try again later", code="no_workers", retry_after_s=30)
        # A question the cache can answer still needs a service that could judge it: the same
        # refusals as any other, so an answer never depends on what was asked before.
        records = worker_health_parse(health, alive, redis_now(now))
        _refuse_if_no_worker_can_judge(alive, records)
        kept: list[VerifyResult | None] = [verdict_cache_parse(v) for v in found[0]] if found else [None] * len(items)
        to_run = [index for index, hit in enumerate(kept) if hit is None]
        limit = api_setting("HARDTESTS_API_QUEUE_MAX")
        if to_run and backlog + len(to_run) > limit:
            raise Unavailable(
                f"the sandbox queue is full ({backlog} jobs waiting); try again later", code="queue_full"
            )
        job_timeout = api_setting("HARDTESTS_API_JOB_TIMEOUT_S")
        if to_run and handoff and settings.HARDTESTS_API_HANDOFF and _takes_handoff(records):
            handed_off = [handoff_item(request=v.request, snapshot=snapshots[index], timeout_s=job_timeout,
                                       wait_s=queued_ttl, description=_description(v),
                                       keep_as=(cache_keys[index], keep_s) if cache_keys else None)
                          for index in to_run for v in (items[index],)]
            queue.connection.rpush(HANDOFF_KEY, *(item.raw for item in handed_off))
            handed_of = dict(zip(to_run, handed_off, strict=True))
            return [handed_of[index] if hit is None else hit for index, hit in enumerate(kept)]
        jobs = queue.enqueue_many(
            [
                judge_job_data(
                    request=v.request, snapshot=snapshots[index], timeout_s=job_timeout, queued_ttl_s=queued_ttl,
                    result_ttl_s=result_ttl, failure_ttl_s=failure_ttl,
                    keep_as=(cache_keys[index], keep_s) if cache_keys else None, description=_description(v),
                )
                for index in to_run
                for v in (items[index],)
            ]
        ) if to_run else []
    except RedisError as exc:
        raise Unavailable("the job queue (Redis) is unavailable", code="redis_unavailable") from exc
    job_of = dict(zip(to_run, jobs, strict=True))
    return [job_of[index] if hit is None else hit for index, hit in enumerate(kept)]


def _description(v: Verification) -> str:
    return (f"api verify {v.request.language} on {v.problem.source}:{v.problem.pid} "
            f"v{v.suite.version}{' fast' if v.request.subset == 'fast' else ''}")


def _takes_handoff(health: dict[str, dict[str, Any]]) -> bool:
    """Whether a live worker of the queue that can judge says it takes handed-off items (one of
    an earlier release, or with HARDTESTS_API_HANDOFF off, does not: its items go through RQ).
    `health`: the live workers' records (worker_health_parse)."""
    return any(record.get(HANDOFF_HEALTH_KEY) is True and record.get("ok", True) for record in health.values())


def _refuse_if_no_worker_can_judge(names: list[str], health: dict[str, dict[str, Any]]) -> None:
    """503 naming the cause when every worker of the queue (by name) reports it cannot reach
    the database or the test storage (workers that publish no health count as able). `health`:
    their records (worker_health_parse)."""
    if names and all(name in health and not health[name].get("ok", True) for name in names):
        reasons = sorted({p for name in names for p in health[name].get("problems", [])})
        raise Unavailable(f"no sandbox worker can judge now: {'; '.join(reasons)[:1000]}",
                          code="workers_unhealthy", retry_after_s=30)


def _outcome(result: AnyResult | None, job: Job | None) -> Outcome:
    if result is not None:
        finished_at = result.created_at.timestamp() if result.created_at else None
        if result.type == Result.Type.SUCCESSFUL and isinstance(result.return_value, dict):
            try:
                value = VerifyResult.from_wire(result.return_value)
            except WireError as exc:
                return Outcome("error", error=f"the worker answered no result: {exc}"[:500], finished_at=finished_at)
            if value.verdict == "SE":
                # The sandbox could not run the program as it must (an internal error): no verdict.
                reason = (value.message or "no reason given").strip()[-500:]
                return Outcome("error", error=f"sandbox error on the worker: {reason}", finished_at=finished_at)
            return Outcome("finished", result=value, finished_at=finished_at)
        last_line = (result.exc_string or "").strip().splitlines()[-1:] or [result.type.name.lower()]
        return Outcome("error", error=f"judging failed on the worker: {last_line[0][:500]}", finished_at=finished_at)
    if job is None:
        return Outcome("error", error="the job expired before a worker took it")
    status = job.get_status(refresh=False)
    if status in (JobStatus.STARTED,):
        return Outcome("running")
    if status in (JobStatus.QUEUED, JobStatus.DEFERRED, JobStatus.SCHEDULED, None):
        return Outcome("queued")
    return Outcome("error", error=f"the job ended as {status}")


def verify_one(item: Verification, *, owner_id: int) -> Outcome:
    """Run one verification and wait for it (503 when no worker answers within the timeout,
    or when the worker could not judge it); or answer it from the verdict cache."""
    timeout_s = api_setting("HARDTESTS_API_SYNC_TIMEOUT_S")
    started = time.perf_counter()
    [job] = _enqueue([item], owner_id=owner_id, queued_ttl=max(1, timeout_s), result_ttl=0,
                     failure_ttl=SYNC_RESULT_TTL_S, handoff=True)
    enqueued = time.perf_counter()
    if isinstance(job, VerifyResult):
        return Outcome("finished", result=job, finished_at=time.time(), cached=True,
                       steps={"enqueue": (enqueued - started) * 1000, "wait": 0.0, "answered_at": time.time()})
    connection = verification_queue().connection
    try:
        results = results_wait(connection, [job.id], timeout_s)
        answered = time.perf_counter()
    except RedisError as exc:
        raise Unavailable("the job queue (Redis) is unavailable", code="redis_unavailable") from exc
    if job.id in results:
        # read once: nobody reads it again; deleted once the answer has left (a round trip
        # less before it), and it expires on its own if that fails
        after_response(functools.partial(connection.delete, RESULT_KEY.format(job_id=job.id)))
    if job.id not in results:
        try:
            # Nobody will read a late answer: take the job off the queue if no worker has
            # taken it yet (a no-op once a worker has; that run is bounded by the job timeout).
            if isinstance(job, HandoffItem):
                connection.lrem(HANDOFF_KEY, 1, job.raw)  # type: ignore[arg-type]  # redis-py takes bytes
            else:
                verification_queue().remove(job.id)
        except RedisError:
            pass
        raise Unavailable(
            f"no sandbox worker finished the verification within {timeout_s} s", code="timeout", retry_after_s=10
        )
    outcome = _outcome(results[job.id], job if isinstance(job, Job) else None)
    if outcome.status == "error":
        # Reward 0 here would teach a training loop that a correct program is wrong.
        raise Unavailable(outcome.error or "the worker could not judge the program", code="judging_error")
    return replace(outcome, steps={"enqueue": (enqueued - started) * 1000, "wait": (answered - enqueued) * 1000,
                                   "answered_at": time.time()})


def server_timing(outcome: Outcome, *, prepare_ms: float) -> str:
    """A Server-Timing header (the standard one browsers and clients read) with where one
    verification's time went: on the web side (resolve the problem and suite, enqueue, wait),
    on the worker (queue: enqueued to picked up; load, compile, tests; job: picked up to
    returned) and the result's way back (returned to read by the web side)."""
    steps = outcome.steps or {}
    # A cached answer's phases are those of the job that judged it first: not this call's.
    result = outcome.result if outcome.result is not None and not outcome.cached else None
    phases = result.phases if result is not None else {}
    timings = (result.timings if result is not None else None) or {}
    parts = {"prepare": prepare_ms, "enqueue": steps.get("enqueue"), "wait": steps.get("wait")}
    enqueued, picked_up, returned = timings.get("enqueued"), timings.get("picked_up"), timings.get("returned")
    if enqueued and picked_up:
        parts["queue"] = (picked_up - enqueued) * 1000
    for name in ("load", "compile", "tests"):
        parts[name] = phases.get(name)
    if picked_up and returned:
        parts["job"] = (returned - picked_up) * 1000
        if steps.get("answered_at"):
            parts["back"] = (steps["answered_at"] - returned) * 1000
    return ", ".join(f"{name};dur={value:.2f}" for name, value in parts.items() if value is not None)


# -- batches ------------------------------------------------------------------


def batch_start(items: list[Verification], *, owner_id: int) -> tuple[str, list[Outcome], list[SuiteInfo]]:
    """Enqueue every item, record the batch for GET /jobs/{id}, wait up to the sync timeout."""
    keep_s = api_setting("HARDTESTS_API_RESULT_TTL_S")
    # Items asking the same thing (an RL group's repeated samples) share one job: the program runs
    # once and every one of them gets its result.
    first: dict[VerifyRequest, int] = {}
    keys = [v.request for v in items]
    for index, key in enumerate(keys):
        first.setdefault(key, index)
    jobs = _enqueue([items[index] for index in first.values()], owner_id=owner_id, queued_ttl=keep_s,
                    result_ttl=keep_s)
    cached: dict[str, dict[str, Any]] = {}
    job_of: dict[VerifyRequest, str] = {}
    for key, job in zip(first, jobs, strict=True):
        if isinstance(job, VerifyResult):
            job_of[key] = f"cached:{len(cached)}"
            cached[job_of[key]] = job.to_wire()
        else:
            job_of[key] = job.id
    batch_id = uuid.uuid4().hex
    record: BatchRecord = {
        "owner": owner_id,
        "created": time.time(),
        "jobs": [job_of[key] for key in keys],
        "suites": [suite_info(v.suite) for v in items],
    }
    if cached:
        record["cached"] = cached
    try:
        connection = redis_connection(blocking=True)
        connection.set(BATCH_KEY.format(id=batch_id), json.dumps(record), ex=keep_s)
    except RedisError as exc:
        raise Unavailable("the job queue (Redis) is unavailable", code="redis_unavailable") from exc
    return batch_id, batch_poll(record, wait_s=api_setting("HARDTESTS_API_SYNC_TIMEOUT_S")), record["suites"]


def batch_load(batch_id: str, *, owner_id: int) -> BatchRecord:
    """The batch record, or 404 when it is unknown, expired, or someone else's."""
    if not batch_id.isalnum() or len(batch_id) != 32:
        raise NotFound(f"no job {batch_id[:64]!r}")
    try:
        # redis-py types a sync client's answer as "Awaitable | Any" (shared with its asyncio client)
        raw = cast(bytes | None, redis_connection(blocking=True).get(BATCH_KEY.format(id=batch_id)))
    except RedisError as exc:
        raise Unavailable("the job queue (Redis) is unavailable", code="redis_unavailable") from exc
    record: BatchRecord | None = json.loads(raw) if raw else None  # written by batch_start
    # Someone else's batch answers exactly like a missing one, so ids cannot be probed.
    if record is None or record.get("owner") != owner_id:
        raise NotFound(f"no job {batch_id!r} (unknown, expired, or not yours)")
    return record


def batch_poll(record: BatchRecord, *, wait_s: float = 0) -> list[Outcome]:
    connection = redis_connection(blocking=True)
    cached = record.get("cached") or {}
    # items that asked the same thing share a job; the cache's answers are in the record
    job_ids = [job_id for job_id in dict.fromkeys(record["jobs"]) if job_id not in cached]
    try:
        results = results_wait(connection, job_ids, wait_s) if wait_s > 0 else results_read(connection, job_ids)
        missing = [job_id for job_id in job_ids if job_id not in results]
        jobs = dict(zip(missing, Job.fetch_many(missing, connection=connection), strict=True)) if missing else {}
        # a job may finish between the read of the results and that of its status: its result is
        # there by now, so read again rather than call a finished job an error
        ended = [job_id for job_id, job in jobs.items()
                 if job is not None and job.get_status(refresh=False) in (JobStatus.FINISHED, JobStatus.FAILED)]
        if ended:
            results.update(results_read(connection, ended))
    except RedisError as exc:
        raise Unavailable("the job queue (Redis) is unavailable", code="redis_unavailable") from exc
    return [_cached(cached[job_id], record["created"]) if job_id in cached
            else _outcome(results.get(job_id), jobs.get(job_id)) for job_id in record["jobs"]]


def _cached(wire: dict[str, Any], created: float) -> Outcome:
    try:
        return Outcome("finished", result=VerifyResult.from_wire(wire), finished_at=created, cached=True)
    except WireError as exc:  # a record written by another release
        return Outcome("error", error=f"the batch's kept result is unreadable: {exc}"[:500])
