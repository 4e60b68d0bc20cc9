"""The verification contract between the API (web side) and the sandbox workers: its plumbing.
Its types (the Mode, the request, the suite snapshot, the result, and their wire dicts) are in
problems/verify_types.py.

- the job: JUDGE_JOB names problems.jobs.judge_code_job by its dotted path (the web process
  enqueues it without importing the worker's code), called with the request's wire as its
  keyword arguments; `judge_job_data` builds it;
- the snapshot: what the API resolved of the suite (`suite_snapshot`), its wire in the job's
  meta under SNAPSHOT_META_KEY, so a worker that has the suite's bodies cached judges with no
  query (`suite_from_snapshot`); a worker of an earlier release ignores the meta;
- the result: the job's return value (a VerifyResult's wire), published by the job itself as it
  returns (`result_publish`) on a stream the API waits on beside RQ's own result stream
  (`results_wait`, `results_read`); with the verdict cache on, the same pipeline keeps the
  result under `verdict_cache_key` (built from the request's and the snapshot's fields) for a
  while, so the same question asked again is answered without a job (VERDICT_META_KEY,
  `verdict_cache_parse`). RQ stores its result only after its bookkeeping (a
  heartbeat, a WATCH on the dependents, the registries: four round trips, about a millisecond),
  which this takes off the caller's path; RQ's result still comes, and is what later reads and
  failures use. RQ's `Job.latest_result(timeout=...)` blocks on one job's stream only, where a
  batch waits on hundreds with one XREAD.
- the hand-off: a single verification the caller waits for skips RQ's records. The API pushes
  the job as one JSON item (`handoff_item`: the request's wire, the same meta, its deadline and
  timeout) on HANDOFF_KEY, a list every checked worker of the verification queue blocks on beside
  its RQ queues; the worker that pops it holds it under HANDOFF_HELD_KEY while it judges (a
  reaper gives a dead worker's item back once, as it does an RQ job) and runs the same job
  function with the item as its context (`job_context`). The result comes on the same stream;
  a failure too (`result_fail_publish`), read like RQ's failed result. RQ's pick-up (the job's
  fetch, two bookkeeping pipelines, a persist: four round trips) is off the path.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, cast

import redis
from django.conf import settings
from redis import Redis
from redis.typing import KeyT, StreamIdT
from rq import Queue, get_current_job
from rq.results import Result
from rq.utils import as_text

from problems.judging import (
    JUDGE_SOURCE_READ,
    SUBSETS,
    LoadedSuite,
    judge_source,
    judging_digest,
    suite_cache,
)
from problems.models import TestSuite
from problems.packages.checking import suite_checker
from problems.services import code_sha256
from problems.verify_types import SuiteSnapshot, VerifyRequest, VerifyResult, WireError

JUDGE_JOB = "problems.jobs.judge_code_job"
# The key of a judging job's meta under which the API leaves its snapshot of the suite.
SNAPSHOT_META_KEY = "resolved"
RESULT_KEY = "hardtests:early-result:{job_id}"
RESULT_TTL_S = 60
# The key of a judging job's meta under which the API asks the job to keep its result:
# [the verdict cache's key, seconds to keep it].
VERDICT_META_KEY = "keep_as"
VERDICT_KEY = "hardtests:api:verdict:{digest}"
# Bumped when what a result holds, or what decides it, changes shape: older entries never match.
VERDICT_FORMAT = 3
_RESULT_PREFIX = RESULT_KEY.split("{", 1)[0]
# The hand-off: the list of items waiting for a worker, and the item a worker holds.
HANDOFF_KEY = "hardtests:api:handoff"
HANDOFF_HELD_KEY = "hardtests:api:handoff-held:{worker}"
# The key of a worker's health record saying it takes handed-off items.
HANDOFF_HEALTH_KEY = "handoff"


# -- the job's context ------------------------------------------------------------------------


@dataclass(frozen=True)
class JobContext:
    """What a judging job knows of itself: its id (its result stream's name), its meta (the
    snapshot, the verdict cache's key), its Redis and when it was enqueued (epoch seconds)."""

    id: str
    meta: Mapping[str, Any]
    connection: Redis
    enqueued_at: float | None


_handed_off: ContextVar[JobContext | None] = ContextVar("hardtests_handed_off", default=None)


def job_context() -> JobContext | None:
    """Inside a judging job: the handed-off item being judged, else RQ's current job; else None."""
    handed = _handed_off.get()
    if handed is not None:
        return handed
    job = get_current_job()
    if job is None:
        return None
    enqueued = job.enqueued_at
    if enqueued is not None and enqueued.tzinfo is None:
        enqueued = enqueued.replace(tzinfo=UTC)  # RQ's times are UTC
    return JobContext(job.id, job.meta, job.connection, enqueued.timestamp() if enqueued else None)


@contextmanager
def handed_off(context: JobContext) -> Iterator[None]:
    """Judge a handed-off item in this block: `job_context()` answers with it."""
    token = _handed_off.set(context)
    try:
        yield
    finally:
        _handed_off.reset(token)


# -- the job ----------------------------------------------------------------------------------


def judge_job_data(*, request: VerifyRequest, snapshot: SuiteSnapshot, timeout_s: int, queued_ttl_s: int,
                   result_ttl_s: int, description: str, failure_ttl_s: int | None = None,
                   keep_as: tuple[str, int] | None = None) -> Any:
    """RQ's enqueue_many item for one verification (problems.jobs.judge_code_job, called with
    the request's wire as its keyword arguments); `failure_ttl_s` (default `result_ttl_s`): how
    long a failed job's record stays; `keep_as`: (the verdict cache's key, seconds) under which
    the job keeps its result, or None."""
    return Queue.prepare_data(
        JUDGE_JOB,
        kwargs=request.to_wire(),
        meta=_job_meta(snapshot, keep_as),
        timeout=timeout_s,
        # A job nobody picked up within this time is dropped by RQ: its caller gave up.
        ttl=queued_ttl_s,
        result_ttl=result_ttl_s,
        failure_ttl=result_ttl_s if failure_ttl_s is None else failure_ttl_s,
        description=description,
    )


def _job_meta(snapshot: SuiteSnapshot, keep_as: tuple[str, int] | None) -> dict[str, Any]:
    """A judging job's meta, an RQ job's or a handed-off item's: the snapshot's wire, and the
    verdict cache's key and seconds when the job is to keep its result."""
    meta: dict[str, Any] = {SNAPSHOT_META_KEY: snapshot.to_wire()}
    if keep_as is not None:
        meta[VERDICT_META_KEY] = list(keep_as)
    return meta


# -- the snapshot -----------------------------------------------------------------------------


def suite_snapshot(suite: TestSuite) -> SuiteSnapshot:
    """The snapshot of a complete suite and its problem as they are now (SuiteSnapshot)."""
    return SuiteSnapshot.of(suite, judging=suite_judging(suite))


_JUDGING_ATTR = "_hardtests_judging"


def suite_judging(suite: TestSuite) -> str:
    """judging_digest of what judges `suite` now, kept on this instance (the API's suite instance
    lives for one request; its snapshot and its verdict cache key share it): the judging
    function's code as the query that built the instance read it (JUDGE_SOURCE_READ), else one
    query of its own."""
    known = suite.__dict__.get(_JUDGING_ATTR)
    if not isinstance(known, str):
        read = suite.__dict__.get(JUDGE_SOURCE_READ)
        source = read[0] if isinstance(read, tuple) else judge_source(suite)
        known = judging_digest(source, suite.problem.comparison, checker=suite_checker(suite))
        suite.__dict__[_JUDGING_ATTR] = known
    return known


def snapshot_of_job() -> dict[str, Any] | None:
    """Inside a judging job: the snapshot's wire the API left in its meta, if any."""
    context = job_context()
    return context.meta.get(SNAPSHOT_META_KEY) if context is not None else None


def suite_from_snapshot(snapshot: Mapping[str, Any] | SuiteSnapshot,
                        subset: str = "full") -> tuple[TestSuite, LoadedSuite] | None:
    """The suite a snapshot names (an unsaved stand-in carrying the snapshot's values) and its
    cached bodies, when this process has them; else None, and the caller reads the database.

    The cache is keyed by what names one suite and its order for good (id, problem, version,
    creation time, comparison, order revision) and by what judges it (the judging digest), so a
    snapshot of another suite, of one whose row was replaced, of an older order, or taken
    before its judging function changed (or after: this worker's copy is the older one), never
    hits; a snapshot without a judging digest (an earlier release's) never hits either.
    """
    if not isinstance(snapshot, SuiteSnapshot):
        try:
            snapshot = SuiteSnapshot.from_wire(snapshot)
        except WireError:
            return None  # a snapshot of another shape (another release's job): read the database
    suite = snapshot.stand_in()
    loaded = suite_cache.peek(suite, subset if subset in SUBSETS else "full", snapshot.judging)
    return (suite, loaded) if loaded is not None else None


# -- the verdict cache ------------------------------------------------------------------------


def verdict_cache_key(request: VerifyRequest, snapshot: SuiteSnapshot, *, owner_id: int) -> str:
    """The verdict cache's key of one question: everything a result depends on. Every field of
    the request (the program, language, mode, subset) and of the snapshot (the suite as named for
    good, the problem's limits of the moment, the judging digest: what judges the outputs, by
    content), each taken from its dataclass's fields, so a field added to either is in the key;
    the limits a judging function runs under; and the asking token's owner, so no one learns
    from an answer's speed what another asked."""
    asked = request.to_wire()
    asked["code"] = code_sha256(request.code)  # by digest: JSON-escaping a 64 KiB program took 0.7 ms
    identity = [VERDICT_FORMAT, owner_id, asked, snapshot.to_wire(),
                float(settings.HARDTESTS_CHECKER_TIME_S), int(settings.HARDTESTS_CHECKER_MEMORY_MB)]
    return VERDICT_KEY.format(digest=hashlib.sha256(json.dumps(identity).encode()).hexdigest())


def verdict_cache_parse(value: bytes | None) -> VerifyResult | None:
    """A kept result as read from the cache (None for a miss or an entry of another shape)."""
    if not value:
        return None
    try:
        wire = json.loads(value)
        return VerifyResult.from_wire(wire) if isinstance(wire, dict) else None
    except ValueError:  # not JSON, or a WireError
        return None


# -- the result -------------------------------------------------------------------------------


def result_publish(result: VerifyResult) -> None:
    """Inside an RQ job: publish `result` (its wire, JSON) for whoever waits on the job (a no-op
    outside a job; a Redis failure is left to RQ's own result); and keep it in the verdict cache
    when the job was asked to, unless the sandbox could not run the program (SE: no verdict to
    repeat)."""
    job = job_context()
    if job is None:
        return
    key = RESULT_KEY.format(job_id=job.id)
    keep = job.meta.get(VERDICT_META_KEY)
    try:
        with job.connection.pipeline(transaction=False) as pipe:
            pipe.xadd(key, {"value": json.dumps(result.to_wire())}, maxlen=1)
            pipe.expire(key, RESULT_TTL_S)
            if isinstance(keep, list) and len(keep) == 2 and result.verdict != "SE" and int(keep[1]) > 0:
                # the timings are this job's, not a later call's
                kept = replace(result, timings=None).to_wire()
                pipe.set(str(keep[0]), json.dumps(kept), ex=int(keep[1]))
            pipe.execute()
    except redis.RedisError:
        pass


def result_fail_publish(connection: Redis, job_id: str, error: str) -> None:
    """A handed-off job's failure (its exception's text), on its result stream: the API reads it
    as it reads RQ's failed result, an error and never a verdict."""
    key = RESULT_KEY.format(job_id=job_id)
    with connection.pipeline(transaction=False) as pipe:
        pipe.xadd(key, {"error": error[-4000:]}, maxlen=1)
        pipe.expire(key, RESULT_TTL_S)
        pipe.execute()


@dataclass(frozen=True)
class EarlyResult:
    """A judging job's return value as the job published it, read like RQ's Result of a
    successful job."""

    return_value: dict[str, Any]
    created_at: datetime
    type: Result.Type = Result.Type.SUCCESSFUL
    exc_string: str | None = None


AnyResult = Result | EarlyResult


def _early(entry_id: bytes, payload: dict[bytes, bytes]) -> EarlyResult:
    millis = int(entry_id.split(b"-", 1)[0])  # a stream entry's id starts with its time
    created = datetime.fromtimestamp(millis / 1000, tz=UTC)
    if b"value" not in payload:  # a handed-off job that failed
        return EarlyResult({}, created, type=Result.Type.FAILED,
                           exc_string=payload.get(b"error", b"no reason given").decode(errors="replace"))
    return EarlyResult(json.loads(payload[b"value"]), created)


def _rq_result_key(job_id: str) -> str:
    """The stream RQ writes a job's results to."""
    key: str = Result.get_key(job_id)  # type: ignore[no-untyped-call]  # rq has no annotations
    return key


def results_wait(connection: Redis, job_ids: list[str], timeout_s: float) -> dict[str, AnyResult]:
    """Block until every job has a result or the timeout passes; the results that arrived."""
    pending = set(job_ids)
    results: dict[str, AnyResult] = {}
    deadline = time.monotonic() + timeout_s
    while pending:
        remaining_ms = int((deadline - time.monotonic()) * 1000)
        if remaining_ms <= 0:
            break
        # One XREAD on every pending job's result streams returns as soon as any is written:
        # the job's own early one (its return value, before RQ's bookkeeping) or RQ's.
        streams: dict[KeyT, StreamIdT] = {}
        for job_id in pending:
            streams[RESULT_KEY.format(job_id=job_id)] = "0-0"
            streams[_rq_result_key(job_id)] = "0-0"
        # a synchronous client: the reply itself, never an awaitable
        response = cast("list[Any] | None", connection.xread(streams, block=remaining_ms))
        for key, entries in response or []:
            name = as_text(key)
            job_id = name.rsplit(":", 1)[-1]
            if job_id not in pending:
                continue  # both streams of one job in one answer: the first is kept
            entry_id, payload = entries[-1]
            if name.startswith(_RESULT_PREFIX):
                results[job_id] = _early(entry_id, payload)
            else:
                results[job_id] = Result.restore(job_id, entry_id.decode(), payload, connection=connection)
            pending.discard(job_id)
    return results


def results_read(connection: Redis, job_ids: list[str]) -> dict[str, AnyResult]:
    """The results that exist now, without blocking, in one round trip: the job's early result
    (RQ's own is written a moment after it) or RQ's."""
    results: dict[str, AnyResult] = {}
    if not job_ids:
        return results
    with connection.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.xrevrange(RESULT_KEY.format(job_id=job_id), "+", "-", count=1)
            pipe.xrevrange(_rq_result_key(job_id), "+", "-", count=1)
        answers = pipe.execute()
    for index, job_id in enumerate(job_ids):
        early, done = answers[2 * index], answers[2 * index + 1]
        if early:
            results[job_id] = _early(*early[0])
        elif done:
            result_id, payload = done[0]
            results[job_id] = Result.restore(job_id, result_id.decode(), payload, connection=connection)
    return results


# -- the hand-off -----------------------------------------------------------------------------


@dataclass(frozen=True)
class HandoffItem:
    """One handed-off verification as it waits on HANDOFF_KEY (its JSON is `raw`): the job's id,
    the job function's keyword arguments (a VerifyRequest's wire), its meta, when it was pushed,
    when its caller stops waiting (epoch seconds: later, nobody reads the answer), its timeout
    and how many times it went back because its worker died."""

    id: str
    kwargs: dict[str, Any]
    meta: dict[str, Any]
    enqueued_at: float
    deadline: float
    timeout_s: int
    description: str
    requeued: int = 0
    raw: bytes = field(default=b"", compare=False, repr=False)

    def to_json(self) -> bytes:
        return json.dumps({"id": self.id, "kwargs": self.kwargs, "meta": self.meta, "enqueued_at": self.enqueued_at,
                           "deadline": self.deadline, "timeout_s": self.timeout_s,
                           "description": self.description, "requeued": self.requeued}).encode()

    def context(self, connection: Redis) -> JobContext:
        return JobContext(self.id, self.meta, connection, self.enqueued_at)


def handoff_item(*, request: VerifyRequest, snapshot: SuiteSnapshot, timeout_s: int, wait_s: float,
                 description: str, keep_as: tuple[str, int] | None = None) -> HandoffItem:
    """The hand-off's item for one verification its caller waits `wait_s` for (judge_job_data's
    twin: the same arguments and meta)."""
    now = time.time()
    item = HandoffItem(id=f"handoff-{uuid.uuid4().hex}", kwargs=request.to_wire(), meta=_job_meta(snapshot, keep_as),
                       enqueued_at=now, deadline=now + wait_s, timeout_s=timeout_s, description=description)
    return replace(item, raw=item.to_json())


def handoff_parse(raw: bytes) -> HandoffItem | None:
    """An item as popped from HANDOFF_KEY; None for one of another shape (another release's)."""
    try:
        wire = json.loads(raw)
        item = HandoffItem(id=str(wire["id"]), kwargs=dict(wire["kwargs"]), meta=dict(wire["meta"]),
                           enqueued_at=float(wire["enqueued_at"]), deadline=float(wire["deadline"]),
                           timeout_s=int(wire["timeout_s"]), description=str(wire["description"]),
                           requeued=int(wire.get("requeued", 0)), raw=raw)
    except (ValueError, KeyError, TypeError):
        return None
    return item if item.id.startswith("handoff-") and item.id[8:].isalnum() else None


def handoff_recover(connection: Redis, worker: str, *, max_requeues: int, reason: str) -> str | None:
    """The item a dead worker held: back at the front of the hand-off list once (its caller still
    waits), else its failure published; None when it held none."""
    raw = cast(bytes | None, connection.getdel(HANDOFF_HELD_KEY.format(worker=worker)))
    if raw is None:
        return None
    item = handoff_parse(raw)
    if item is None:
        return "unreadable"
    if time.time() >= item.deadline:
        return "expired"
    if item.requeued >= max_requeues:
        result_fail_publish(connection, item.id, f"WorkerDied: the worker running it died again ({reason})")
        return "failed"
    again = replace(item, requeued=item.requeued + 1)
    connection.lpush(HANDOFF_KEY, again.to_json())
    return "requeued"
