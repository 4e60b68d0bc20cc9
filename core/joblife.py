"""The lifecycle of a long job's row: claim, heartbeat, progress, finish, fail with a reason,
cancel, and the sweep that finds the rows whose worker died. One set of functions for every
kind (generation runs, curation jobs, evaluation reports, judging tasks, the studies' trials
and suite additions), each described by a `JobKind`.

    queued ──claim──> running ──finish──> done
      │                  │ └──fail (a reason)──> failed
      └──cancel──> cancelled / failed    (a running row: asked to stop, or failed at once)
    open rows whose RQ job is dead, or whose own beat stopped ──sweep──> failed (or queued again)

Every move is a conditional update (`filter(pk=..., status__in=...).update(...)`) whose count
says who won: the worker, the page and the janitor race on the same rows, and a row that one of
them has moved on is never moved back by another. A row's status is written here, or in its
kind's own lifecycle module for moves no other kind has (tests/core/test_joblife.py holds it).

Death is read from two places, never guessed from age alone:
- the row's RQ job (one Redis round trip for a whole batch): gone, failed, stopped, cancelled
  or finished while the row is still open means nothing will ever record an outcome. A worker
  that stops beating is dealt with by the reaper (hardtests_web/ops/reaper.py) first: its job is
  queued again once (the row stays claimed, and the re-run claims it again by its job id), and
  failed with the reason if its worker dies a second time; the sweep then fails the row.
- the row's own heartbeat, for kinds whose worker beats per row (`stale_after_s`): silent that
  long, it is dead whatever RQ says (an LLM-stage worker holds runs with no RQ job at all).

core imports no app: the kinds are declared by their apps and handed in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import models
from django.utils import timezone

from core.queues import redis_connection

__all__ = ["ALIVE_JOB_STATES", "DeadRow", "JobKind", "claim", "cancel", "current_worker", "dead_rows", "fail", "finish",
           "heartbeat", "job_states", "kind_register", "kinds", "move", "progress", "record_done", "requeue", "requeue_many",
           "sweep", "sweep_dead"]

# What RQ says of a job that will still run (or is running).
ALIVE_JOB_STATES = frozenset({b"queued", b"started", b"deferred", b"scheduled", b"created"})
# A row queued this recently may not have its job id yet (it is written after commit).
ENQUEUE_GRACE_S = 120.0
SWEEP_BATCH = 500


@dataclass(frozen=True)
class JobKind:
    """How one model's rows move: its status values and the names of its lifecycle fields
    (None: the model has no such field)."""

    name: str
    model: type[models.Model]
    queued: str
    running: tuple[str, ...]  # a claim moves to the first; the others are later running stages
    done: str
    failed: str
    cancelled: str  # where a cancel ends (a kind with no status of its own for it: `failed`)
    error_field: str = "error"
    error_max: int = 4000
    worker_field: str | None = "worker"
    heartbeat_field: str | None = "heartbeat_at"
    started_field: str | None = "started_at"
    finished_field: str = "finished_at"
    job_id_field: str | None = "job_id"
    # Rows whose worker beats per row: the seconds of silence after which it is dead.
    stale_after_s: Callable[[], float] | None = None
    # A running row is asked to stop through this flag instead of being failed under its worker.
    cancel_flag: str | None = None
    # Where a dead row goes: "fail" (with the reason) or "requeue" (queued again, unclaimed).
    on_dead: str = "fail"
    # Extra fields written when a row is queued again (e.g. a chunk claim's reset).
    requeue_fields: dict[str, Any] = field(default_factory=dict)
    # The dotted path of the kind's own sweep, built on `dead_rows` / `sweep_dead`, where a dead
    # row takes more than a status (generation: a campaign run goes back to its queue and a
    # building suite fails with it; curation: the job's stale claims go back and its chains are
    # queued again); None: `sweep_dead(kind)`. By name, as RQ names jobs: core imports no app.
    sweep: str | None = None

    @property
    def open(self) -> tuple[str, ...]:
        return (self.queued, *self.running)

    @property
    def finished(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.done, self.failed, self.cancelled)))


_KINDS: dict[str, JobKind] = {}


def kind_register(kind: JobKind) -> JobKind:
    """Declare a kind (at its model's import): the janitor sweeps every declared kind, and the
    lifecycle tests run against each."""
    if _KINDS.setdefault(kind.name, kind) is not kind:
        raise ValueError(f"two job kinds named {kind.name!r}")
    return kind


def kinds() -> list[JobKind]:
    return list(_KINDS.values())


def _rows(kind: JobKind, pk: int, statuses: Iterable[str], **still: Any) -> models.QuerySet[Any]:
    return kind.model._default_manager.filter(pk=pk, status__in=list(statuses), **still)


def _now_fields(kind: JobKind, *names: str | None) -> dict[str, Any]:
    now = timezone.now()
    return {name: now for name in names if name}


def move(kind: JobKind, *, pk: int, from_status: Iterable[str], to: str, still: dict[str, Any] | None = None,
         **fields: Any) -> bool:
    """from_status -> `to` with `fields`, if the row is still in one of from_status (and still has
    the values `still`); whether it moved. For a kind's own stages (an evaluation's judging ->
    computing); the named moves below use it."""
    if to not in (kind.queued, *kind.running, *kind.finished):
        raise ValueError(f"{kind.name}: {to!r} is not one of its statuses")
    return _rows(kind, pk, from_status, **(still or {})).update(status=to, **fields) == 1


def claim(kind: JobKind, *, pk: int, worker: str = "", job_id: str | None = None, **fields: Any) -> bool:
    """queued -> running for the worker that wins the row; False when it is not (or no longer) queued.

    With `job_id`, a row still running under that same job is claimed again: the reaper queued
    the job again because its worker died under it (once), and this is its second run."""
    values = {**_now_fields(kind, kind.heartbeat_field, kind.started_field), **fields}
    if kind.worker_field:
        values[kind.worker_field] = worker[:200]
    if move(kind, pk=pk, from_status=(kind.queued,), to=kind.running[0], **values):
        return True
    if job_id and kind.job_id_field:
        still: dict[str, Any] = {kind.job_id_field: job_id}
        if kind.cancel_flag:
            still[kind.cancel_flag] = False
        values.pop(kind.started_field or "", None)
        return _rows(kind, pk, (kind.running[0],), **still).update(**values) == 1
    return False


def heartbeat(kind: JobKind, *, pk: int, **fields: Any) -> bool:
    """The worker holding a running row says it lives (with any `fields`); False once the row has
    left running (cancelled, swept): the worker should stop."""
    if not kind.heartbeat_field:
        raise ValueError(f"{kind.name} has no heartbeat")
    return _rows(kind, pk, kind.running).update(**_now_fields(kind, kind.heartbeat_field), **fields) == 1


def progress(kind: JobKind, *, pk: int, **fields: Any) -> bool:
    """Record progress fields on a running row (a beat too, where the kind beats)."""
    if kind.heartbeat_field:
        return heartbeat(kind, pk=pk, **fields)
    return _rows(kind, pk, kind.running).update(**fields) == 1


def finish(kind: JobKind, *, pk: int, from_status: Iterable[str] | None = None, still: dict[str, Any] | None = None,
           **fields: Any) -> bool:
    """running -> done with `fields`, if the row is still running (not cancelled or swept meanwhile)."""
    return move(kind, pk=pk, from_status=from_status or kind.running, to=kind.done, still=still,
                **_now_fields(kind, kind.finished_field), **fields)


def record_done(kind: JobKind, **fields: Any) -> models.Model:
    """A new row already done: the record of work done outside a job (a command's computation)."""
    return kind.model._default_manager.create(status=kind.done, **_now_fields(kind, kind.finished_field), **fields)


def fail(kind: JobKind, *, pk: int, reason: str, from_status: Iterable[str] | None = None,
         status: str | None = None, still: dict[str, Any] | None = None, **fields: Any) -> bool:
    """An open row (or one in from_status) -> failed (or `status`, e.g. cancelled) with its reason."""
    return move(kind, pk=pk, from_status=from_status or kind.open, to=status or kind.failed, still=still,
                **{kind.error_field: reason[:kind.error_max]}, **_now_fields(kind, kind.finished_field), **fields)


def requeue(kind: JobKind, *, pk: int, from_status: Iterable[str] | None = None,
            still: dict[str, Any] | None = None, **fields: Any) -> bool:
    """A running row back to queued, unclaimed (a dead worker's row, where the kind runs it again)."""
    values: dict[str, Any] = {**kind.requeue_fields, **_now_fields(kind, kind.heartbeat_field), **fields}
    if kind.worker_field:
        values[kind.worker_field] = ""
    return move(kind, pk=pk, from_status=from_status or kind.running, to=kind.queued, still=still, **values)


def requeue_many(kind: JobKind, *, pks: Iterable[int], from_status: Iterable[str] | None = None) -> int:
    """Many open rows back to queued, unclaimed (their queue was lost: a Redis that started empty)."""
    values: dict[str, Any] = dict(kind.requeue_fields)
    if kind.worker_field:
        values[kind.worker_field] = ""
    return kind.model._default_manager.filter(pk__in=list(pks), status__in=list(from_status or kind.open)).update(
        status=kind.queued, **values)


def current_worker() -> tuple[str, str | None]:
    """(the RQ worker's name, the job's id) of the job running in this process; ("", None) outside one."""
    from rq import get_current_job

    job = get_current_job()
    if job is None:
        return "", None
    return str(getattr(job, "worker_name", "") or ""), job.id


def cancel(kind: JobKind, *, pk: int, who: str) -> str:
    """"cancelled" (a queued row, or a running one of a kind with no stop flag), "requested" (a
    running row asked to stop at its next check) or "finished" (nothing to cancel).

    A running row of a kind without a flag is failed at once: its worker's own finishing move is
    conditional on running, so whatever it does next records nothing."""
    if fail(kind, pk=pk, reason=f"cancelled by {who} before it started", from_status=(kind.queued,),
            status=kind.cancelled):
        return "cancelled"
    if kind.cancel_flag:
        asked = _rows(kind, pk, kind.running).update(**{kind.cancel_flag: True}) == 1
        return "requested" if asked else "finished"
    if fail(kind, pk=pk, reason=f"cancelled by {who} while it ran", from_status=kind.running,
            status=kind.cancelled):
        return "cancelled"
    return "finished"


# -- the dead-worker sweep ------------------------------------------------------------------


def job_states(job_ids: Iterable[str], *, held: Callable[[str], str | None] | None = None) -> dict[str, str]:
    """'alive', 'dead' or 'unknown' (Redis unreachable) for many RQ job ids, in one round trip.

    `held(job_id)` names a Redis key whose existence says the job lives, for ids that are not RQ
    jobs (an LLM-stage worker's claim); None: an RQ job."""
    ids = list(dict.fromkeys(job_ids))
    if not ids:
        return {}
    try:
        from rq.job import Job

        pipe = redis_connection().pipeline(transaction=False)
        keys = [held(job_id) if held else None for job_id in ids]
        for job_id, key in zip(ids, keys, strict=True):
            if key is not None:
                pipe.exists(key)
            else:
                pipe.hget(Job.key_for(job_id), "status")
        answers = pipe.execute()
    except Exception:  # noqa: BLE001 - Redis down: nothing is declared dead on its silence
        return dict.fromkeys(ids, "unknown")
    states = {}
    for job_id, key, answer in zip(ids, keys, answers, strict=True):
        alive = bool(answer) if key is not None else answer in ALIVE_JOB_STATES
        states[job_id] = "alive" if alive else "dead"
    return states


@dataclass(frozen=True)
class DeadRow:
    pk: int
    status: str
    reason: str
    # The fields as read, to move the row only if nobody touched them since (a beat, a re-claim).
    still: dict[str, Any]


def dead_rows(kind: JobKind, *, batch: int = SWEEP_BATCH, grace_s: float = ENQUEUE_GRACE_S,
              held: Callable[[str], str | None] | None = None) -> list[DeadRow]:
    """Open rows of `kind` whose worker is gone: their RQ job is dead, or (kinds that beat) their
    running row has been silent past `stale_after_s`. Bounded by `batch` per status group, oldest
    beat first; all job states of a batch in one Redis round trip."""
    now = timezone.now()
    manager = kind.model._default_manager
    order = kind.heartbeat_field or "pk"
    beat = kind.heartbeat_field
    columns = ["pk", "status", *(f for f in (kind.job_id_field, beat, kind.started_field, kind.worker_field) if f)]
    open_rows = manager.filter(status__in=list(kind.open))
    if kind.job_id_field is None and beat is None:
        return []
    rows: list[dict[str, Any]] = []
    if beat is not None and kind.stale_after_s is not None:
        rows += list(open_rows.filter(status__in=list(kind.running)).order_by(order).values(*columns)[:batch])
    if kind.job_id_field:
        # (a row with no job id has not been queued yet, or is held by a worker of its own, above)
        with_job = open_rows.exclude(**{kind.job_id_field: ""}).exclude(pk__in=[r["pk"] for r in rows])
        created = "created_at" if any(f.name == "created_at" for f in kind.model._meta.get_fields()) else None
        if created:
            with_job = with_job.filter(**{f"{created}__lt": now - timedelta(seconds=grace_s)})
        rows += list(with_job.order_by(order).values(*columns)[:batch])
    ids = [r[kind.job_id_field] for r in rows if kind.job_id_field and r[kind.job_id_field]]
    states = job_states(ids, held=held)
    stale_before = now - timedelta(seconds=kind.stale_after_s()) if kind.stale_after_s else None
    dead = []
    for row in rows:
        job_id = row.get(kind.job_id_field) if kind.job_id_field else ""
        still = {k: row[k] for k in (kind.job_id_field, beat) if k}
        last = (row.get(beat) if beat else None) or (row.get(kind.started_field) if kind.started_field else None)
        worker = f" (worker {row[kind.worker_field]})" if kind.worker_field and row.get(kind.worker_field) else ""
        if job_id and states.get(job_id) == "dead":
            what = "was lost from Redis" if row["status"] == kind.queued else "ended or vanished while it ran"
            dead.append(DeadRow(row["pk"], row["status"], f"worker died: its job {what}{worker}", still))
        elif (stale_before is not None and row["status"] in kind.running and last is not None
              and last < stale_before):
            dead.append(DeadRow(row["pk"], row["status"],
                                f"worker died: no heartbeat since {last:%Y-%m-%d %H:%M:%S} UTC{worker}", still))
    return dead


def sweep(kind: JobKind) -> int:
    """The kind's dead-worker sweep (its own, or `sweep_dead`); how many rows it moved."""
    if kind.sweep is None:
        return sweep_dead(kind)
    from django.utils.module_loading import import_string

    return int(import_string(kind.sweep)())


def sweep_dead(kind: JobKind, *, batch: int = SWEEP_BATCH, grace_s: float = ENQUEUE_GRACE_S,
               held: Callable[[str], str | None] | None = None,
               on_dead: Callable[[DeadRow], bool] | None = None) -> int:
    """Fail (or queue again, per `kind.on_dead`, or hand to `on_dead`) every row `dead_rows`
    finds; how many moved. Called by the janitor (hardtests_web/ops/janitor.py) for every kind."""
    swept = 0
    for row in dead_rows(kind, batch=batch, grace_s=grace_s, held=held):
        if on_dead is not None:
            moved = on_dead(row)
        elif kind.on_dead == "requeue" and row.status in kind.running:
            moved = requeue(kind, pk=row.pk, from_status=(row.status,), still=row.still)
        else:
            moved = fail(kind, pk=row.pk, reason=row.reason, from_status=(row.status,), still=row.still)
        swept += bool(moved)
    return swept
