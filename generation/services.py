"""Writes of the generation app: starting, cancelling and executing generation runs."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from generation.models import FailureReason, GenerationRun
from generation.profiles import profile_get
from generation.runs import MAX_LOG_CHARS, run_fail, stale_runs_sweep
from generation.selectors import kit_to_materialise
from problems.models import Problem

log = logging.getLogger(__name__)

__all__ = ["generation_run_cancel", "generation_run_execute", "generation_run_open", "generation_run_start",
           "stale_runs_sweep"]

QUEUE = "generation"


def _job_id(run: GenerationRun) -> str:
    return f"generation-run-{run.pk}"


def _enqueue(run_id: int, job_id: str) -> None:
    try:
        from core.embedded import ensure_redis
        from generation.queues import generation_queue

        ensure_redis()
        generation_queue().enqueue(
            "generation.jobs.generation_run_job", run_id, job_id=job_id,
            job_timeout=settings.RQ_QUEUES[QUEUE].get("DEFAULT_TIMEOUT", 3600),
            result_ttl=24 * 3600, failure_ttl=7 * 24 * 3600,
        )
    except Exception as exc:  # noqa: BLE001 - record it: a run must never wait for a job that does not exist
        log.exception("could not enqueue generation run %s", run_id)
        run_fail(run_id=run_id, reason=FailureReason.INTERNAL_ERROR, error=f"could not enqueue the job: {exc}",
                 from_status=(GenerationRun.Status.QUEUED,))


def enqueue_run(run_id: int, job_id: str) -> None:
    """Put a QUEUED run's job on the `generation` queue (a run that cannot be queued fails)."""
    _enqueue(run_id, job_id)


def generation_run_start(
    *,
    problem: Problem,
    mode: str,
    model_name: str | None = None,
    user: Any = None,
    enqueue: bool = True,
    judge_candidates: bool = False,
    profile: str = "hardtestgen",
) -> GenerationRun:
    """Create a QUEUED run and enqueue its job on the `generation` queue after commit.

    mode is GenerationRun.Mode.FROM_SCRATCH (both LLM calls, a new kit), FROM_KIT (the kit of
    the problem's active generated suite, else its latest kit; no LLM), or ORACLE_FREE / ACECODER
    (no oracle: generation/oracle_free; FROM_SCRATCH becomes ORACLE_FREE for a problem without a
    usable oracle, see oracle_free_mode_for). `enqueue=False` leaves it for generation_run_execute
    (the `--sync` command). `judge_candidates=True` queues judging of the problem's
    candidates against the new suite once it is active.

    A problem has at most one open (queued or running) run, enforced by a unique index:
    when one is open already, nothing is created and that run comes back with
    `run.created = False` (callers say so); a new run has `run.created = True`.
    """
    if mode not in GenerationRun.Mode.values:
        raise ValueError(f"unknown generation mode {mode!r}; choose one of {', '.join(GenerationRun.Mode.values)}")
    mode = oracle_free_mode_for(problem=problem, mode=mode)
    asks_llm = mode != GenerationRun.Mode.FROM_KIT
    model = (model_name or "").strip() if asks_llm else ""
    kit = kit_to_materialise(problem) if mode == GenerationRun.Mode.FROM_KIT else None
    try:
        with transaction.atomic():
            run = GenerationRun.objects.create(
                problem=problem, mode=mode, model_name=model or (settings.HARDTESTS_LLM_MODEL if asks_llm else ""),
                created_by=user if getattr(user, "is_authenticated", False) else None, kit=kit,
                judge_candidates=judge_candidates, heartbeat_at=timezone.now(), profile=profile_get(profile).name,
                log=f"{timezone.now():%H:%M:%S} queued by {getattr(user, 'username', None) or 'system'}\n",
            )
            if enqueue:
                run.job_id = _job_id(run)
                run.save(update_fields=["job_id"])
                run_id, job_id = run.pk, run.job_id
                transaction.on_commit(lambda: _enqueue(run_id, job_id))
    except IntegrityError:
        existing = generation_run_open(problem=problem)
        if existing is None:  # the open run ended meanwhile: a genuine error, not a duplicate
            raise
        existing.created = False
        return existing
    run.created = True
    return run


def oracle_free_mode_for(*, problem: Problem, mode: str) -> str:
    """The mode a run really takes: from scratch becomes oracle-free (HardTests A.7) for a problem
    with no oracle the sandbox can run, when HARDTESTS_ORACLE_FREE_AUTO is on (it would otherwise
    fail as no_valid_oracle). The run's mode and the suite's origin say so."""
    from generation.oracle_free import has_usable_oracle

    if (mode == GenerationRun.Mode.FROM_SCRATCH and settings.HARDTESTS_ORACLE_FREE_AUTO
            and not has_usable_oracle(problem)):
        return GenerationRun.Mode.ORACLE_FREE
    return mode


def generation_run_open(*, problem: Problem) -> GenerationRun | None:
    """The problem's open (queued or running) run, if any."""
    return GenerationRun.objects.filter(
        problem=problem, status__in=(GenerationRun.Status.QUEUED, GenerationRun.Status.RUNNING)
    ).first()


def generation_run_cancel(*, run: GenerationRun, user: Any = None) -> bool:
    """Cancel a queued run at once, or ask a running one to stop at its next check.

    Returns False when the run had already finished.
    """
    who = getattr(user, "username", None) or "system"
    stamp = f"{timezone.now():%H:%M:%S}"
    if run_fail(run_id=run.pk, reason=FailureReason.CANCELLED, error=f"cancelled by {who} before it started",
                from_status=(GenerationRun.Status.QUEUED,), status=GenerationRun.Status.CANCELLED,
                note=f"cancelled by {who}"):
        if run.job_id:
            _cancel_job(run.job_id)
        run.refresh_from_db()
        return True
    with transaction.atomic():
        requested = GenerationRun.objects.filter(pk=run.pk, status=GenerationRun.Status.RUNNING).update(
            cancel_requested=True
        )
        if requested:
            current = GenerationRun.objects.get(pk=run.pk)
            GenerationRun.objects.filter(pk=run.pk).update(
                log=(current.log + f"{stamp} cancel requested by {who}\n")[-MAX_LOG_CHARS:]
            )
    run.refresh_from_db()
    return bool(requested)


def _cancel_job(job_id: str) -> None:
    # The job would find the run cancelled and do nothing; removing it just keeps the queue tidy.
    try:
        from rq.job import Job

        from generation.queues import redis_connection

        Job.fetch(job_id, connection=redis_connection()).cancel()
    except Exception:  # noqa: BLE001 - best effort
        pass


def generation_run_execute(*, run_id: int) -> GenerationRun:
    """The whole pipeline for one run, synchronously (used by the job and by `--sync`)."""
    from generation.pipeline import execute

    return execute(run_id)
