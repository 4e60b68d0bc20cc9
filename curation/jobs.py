"""RQ jobs of curation. Take ids only, call one service, record failure on the row.

They are queued by dotted path (curation.lifecycle.curation_enqueue), so the services never
import this module and the package has no import cycle.

A job's completions are verified by chains of bounded chunks: each RQ job verifies one chunk
(HARDTESTS_CURATION_CHUNK completions) and queues the next at the back of the queue, so a
worker returns to other work (the verification API's jobs) between chunks, and a long job
never holds a worker for hours.
"""

from __future__ import annotations

from django.conf import settings

from core.queues import get_queue
from curation.models import Completion, CurationJob
from curation.services import curation_chunk_verify, curation_judge_run


def curation_verify_job(job_id: int) -> int:
    try:
        claimed = curation_chunk_verify(job_id=job_id)
    except Exception as exc:
        # Recorded for the page; the claimed rows go back to pending after the stale limit (the
        # janitor's curation_jobs_sweep once no chunk of the job beats, or the page's Resume).
        CurationJob.objects.filter(pk=job_id).update(error=f"{type(exc).__name__}: {exc}"[:4000])
        raise
    if claimed and Completion.objects.filter(job_id=job_id, status=Completion.Status.PENDING).exists():
        get_queue(settings.HARDTESTS_CURATION_QUEUE).enqueue(curation_verify_job, job_id, job_timeout=3600,
                                                             failure_ttl=7 * 86400)
    return claimed


def curation_judge_job(job_id: int, judge: str) -> dict[str, int]:
    job = CurationJob.objects.get(pk=job_id)
    try:
        return curation_judge_run(job=job, judge=judge)
    except Exception as exc:
        CurationJob.objects.filter(pk=job_id).update(error=f"judge {judge}: {type(exc).__name__}: {exc}"[:4000])
        raise


def curation_demo_job(user_id: int | None = None) -> int:
    """The page's demo: demo suites built where missing, the demo completions imported and verified."""
    from pathlib import Path

    from django.conf import settings as conf
    from django.contrib.auth import get_user_model

    from curation.demo import demo_file
    from curation.services import curation_job_import, curation_job_start, demo_suites_ensure
    from problems.demo import demo_load, demo_problems

    demo_load()
    problems = demo_suites_ensure(problems=demo_problems())
    path = demo_file(problems, Path(conf.MEDIA_ROOT) / "curation" / "demo" / "completions.jsonl")
    # (no user: filter(pk=None) would match no row either)
    created_by = None if user_id is None else get_user_model().objects.filter(pk=user_id).first()
    job = curation_job_import(path=path, name="demo (our programs as pretend model answers)", suite_origin="generated",
                              extra_origins=["public"], demo=True, created_by=created_by)
    curation_job_start(job=job)
    return job.pk
