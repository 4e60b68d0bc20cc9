"""A curation job's lifecycle: import, start, resume, finish, fail, and the dead-job sweep. Every
change of a job's status is here, through core.joblife (CURATION_JOB in curation/models.py).

    imported ──start──> verifying ──(nothing pending or running)──> verified
                           │  └──fail / cancel──> failed
                           └──no chunk beat for HARDTESTS_CURATION_STALE_S──> resumed (the janitor)

A job has no RQ job of its own: chains of chunk jobs (curation.jobs.curation_verify_job) share it,
each chunk beating the job when it claims and when it writes (curation.verification).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core import joblife
from core.queues import get_queue
from curation.importing import CurationImportError, read_rows, rows_check
from curation.models import CURATION_JOB, Completion, CurationJob
from problems.judging import suite_for_judging
from problems.models import TestSuite

__all__ = ["VERIFY_JOB", "curation_enqueue", "curation_job_fail", "curation_job_finish_if_done", "curation_job_import",
           "curation_job_resume", "curation_job_start", "curation_jobs_sweep"]

VERIFY_JOB = "curation.jobs.curation_verify_job"


def curation_job_import(*, path: Path, name: str = "", suite_origin: str = "", extra_origins: list[str] | None = None,
                        created_by: Any = None, demo: bool = False) -> CurationJob:
    """A new job holding every row of `path`, or CurationImportError naming the bad rows (nothing written)."""
    extra = [o for o in (extra_origins or []) if o and o != suite_origin]
    for origin in [suite_origin, *extra]:
        if origin and origin not in TestSuite.Origin.values:
            raise CurationImportError(f"unknown suite origin {origin!r}")
    rows = rows_check(read_rows(path), origin=suite_origin)
    pinned: dict[str, dict[str, int]] = {}
    for problem in {row.problem.pk: row.problem for row in rows}.values():
        primary = suite_for_judging(problem, suite_origin or None)
        if primary is None:  # activated elsewhere since the check: refuse rather than guess
            raise CurationImportError(f"problem {problem.pid!r} has no active suite")
        suites = {"primary": primary.pk, primary.origin: primary.pk}
        for origin in extra:
            other = suite_for_judging(problem, origin)
            if other is not None:
                suites[origin] = other.pk
        pinned[str(problem.pk)] = suites
    with transaction.atomic():
        job = CurationJob.objects.create(
            name=name or path.name, source_name=path.name, suite_origin=suite_origin, extra_origins=extra,
            suites=pinned, demo=demo, total=len(rows), created_by=created_by,
        )
        Completion.objects.bulk_create(
            [Completion(job=job, problem=row.problem, model_name=row.model, sample_index=row.sample_index,
                        language=row.language, completion=row.completion, code=row.code,
                        extract_kind=row.extract_kind, gold=row.gold,
                        suite_id=pinned[str(row.problem.pk)]["primary"]) for row in rows],
            batch_size=500,
        )
    return job


def curation_enqueue(job_id: int, chains: int | None = None) -> int:
    """Queue up to `chains` chunk chains (default: one per sandbox worker); returns how many."""
    pending = Completion.objects.filter(job_id=job_id, status=Completion.Status.PENDING).count()
    wanted = chains or max(1, settings.HARDTESTS_CURATION_CHAINS)
    # Chunks shrink to keep every chain busy (_chunk_size), so a chain per completion at most.
    count = max(1, min(wanted, pending))
    queue = get_queue(settings.HARDTESTS_CURATION_QUEUE)
    for _ in range(count):
        queue.enqueue(VERIFY_JOB, job_id, job_timeout=3600, failure_ttl=7 * 86400)
    return count


def curation_job_start(*, job: CurationJob, enqueue: bool = True) -> CurationJob:
    """Mark the job verifying (from imported; again from any state on a resume) and (after commit)
    queue its chunk chains."""
    started = job.started_at or timezone.now()
    if not joblife.claim(CURATION_JOB, pk=job.pk, started_at=started, error=""):
        joblife.move(CURATION_JOB, pk=job.pk, from_status=CurationJob.Status.values, to=CurationJob.Status.VERIFYING,
                     started_at=started, heartbeat_at=timezone.now(), error="")
    if enqueue:
        transaction.on_commit(lambda: curation_enqueue(job.pk))
    job.refresh_from_db()
    return job


def curation_job_resume(*, job: CurationJob, reclaim_all: bool = False, enqueue: bool = True) -> int:
    """Put back what a crash left: claims older than the stale limit (all claims with
    `reclaim_all`, when no worker runs) and completions that ended in a sandbox error.
    Returns how many went back to pending; then starts the job again."""
    stale = Completion.objects.filter(job=job, status=Completion.Status.RUNNING)
    if not reclaim_all:
        stale = stale.filter(claimed_at__lt=timezone.now() - timedelta(seconds=settings.HARDTESTS_CURATION_STALE_S))
    back = stale.update(status=Completion.Status.PENDING, claimed_at=None, claim="")
    back += Completion.objects.filter(job=job, status=Completion.Status.ERROR).update(
        status=Completion.Status.PENDING, claimed_at=None, claim="", message="")
    curation_job_start(job=job, enqueue=enqueue)
    return back


def curation_job_finish_if_done(job: CurationJob) -> None:
    """Verifying -> verified once nothing is pending or running any more."""
    open_rows = Completion.objects.filter(job=job, status__in=[Completion.Status.PENDING, Completion.Status.RUNNING])
    if not open_rows.exists():
        joblife.finish(CURATION_JOB, pk=job.pk)


def curation_job_fail(*, job_id: int, error: str) -> None:
    joblife.fail(CURATION_JOB, pk=job_id, reason=error, from_status=CurationJob.Status.values)


def curation_jobs_sweep() -> int:
    """Verifying jobs none of whose chunks has beaten for HARDTESTS_CURATION_STALE_S (every chain's
    worker died, or Redis lost the chains): their stale claims go back to pending and their chains
    are queued again, as the page's Resume does; how many. The janitor's, through core.joblife.sweep."""
    resumed = 0
    for row in joblife.dead_rows(CURATION_JOB):
        job = CurationJob.objects.filter(pk=row.pk, status=row.status, **row.still).first()
        if job is not None:
            curation_job_resume(job=job)
            resumed += 1
    return resumed
