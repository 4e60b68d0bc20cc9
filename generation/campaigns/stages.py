"""The two stages of a campaign run and the moves between them.

LLM stage: a QUEUED run without a kit is claimed from the table by an `llm_worker` thread
(job_id = "llm:<worker token>"), asks the LLM for the kit and saves it, then goes back to
QUEUED with an RQ job on the `sandbox` queue: the materialisation stage. Every move is a
conditional update on (status, job_id), so a worker declared dead cannot move a run that
has since been given to another. A run whose kit is saved never goes back to the LLM.
"""

from __future__ import annotations

import logging
import random
import re

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from generation.materialise.types import Cancelled
from generation.models import Campaign, FailureReason, GenerationRun, LLMCall
from generation.runs import MAX_LOG_CHARS, RunRecorder, run_fail
from problems.models import TestSuite
from problems.services import suite_fail

log = logging.getLogger(__name__)

MATERIALISE_JOB = "generation.jobs.campaign_materialise_job"
MATERIALISE_QUEUE = "sandbox"
MAX_BACKOFF_S = 300.0
OPEN = (GenerationRun.Status.QUEUED, GenerationRun.Status.RUNNING)


def materialise_job_id(run_id: int, requeues: int) -> str:
    # One id per attempt: a re-queued run never shares a job id with its dead predecessor.
    return f"generation-run-{run_id}-m{requeues}"


def enqueue_materialise(items: list[tuple[int, str]]) -> None:
    """Put (run id, job id) pairs on the sandbox queue in one Redis round trip per 500.

    A failure is only logged: the runs stay QUEUED with their job ids, and the sweep finds
    those jobs missing and queues them again.
    """
    if not items:
        return
    try:
        from rq import Queue

        from core.queues import get_queue

        queue = get_queue(MATERIALISE_QUEUE)
        timeout = settings.RQ_QUEUES.get(MATERIALISE_QUEUE, {}).get("DEFAULT_TIMEOUT", 3600)
        for start in range(0, len(items), 500):
            with queue.connection.pipeline() as pipe:
                queue.enqueue_many([
                    Queue.prepare_data(MATERIALISE_JOB, args=(run_id,), job_id=job_id, timeout=timeout,
                                       result_ttl=3600, failure_ttl=7 * 24 * 3600)
                    for run_id, job_id in items[start:start + 500]
                ], pipeline=pipe)
                pipe.execute()
    except Exception:  # noqa: BLE001 - see the docstring
        log.exception("could not queue %d materialisation job(s); the sweep will retry", len(items))


def _append_log(run_id: int, note: str) -> None:
    run = GenerationRun.objects.filter(pk=run_id).values_list("log", flat=True).first() or ""
    stamp = timezone.now().strftime("%H:%M:%S")
    GenerationRun.objects.filter(pk=run_id).update(log=(run + f"{stamp} {note}\n")[-MAX_LOG_CHARS:])


def run_to_materialise(*, run_id: int, from_status: str = GenerationRun.Status.RUNNING, note: str = "",
                       rec: RunRecorder | None = None, **still: str) -> bool:
    """Move a run whose kit is saved to the sandbox queue (parked, no job, while its campaign is paused).

    With `rec` (the LLM stage), its buffered log and stage timings go in the same update.
    """
    row = GenerationRun.objects.filter(pk=run_id).values("campaign__status", "requeues").first() or {}
    status = row.get("campaign__status")
    if status == Campaign.Status.CANCELLED:
        if rec is not None:
            rec.flush()
        return run_fail(run_id=run_id, reason=FailureReason.CANCELLED, error="the campaign was cancelled",
                        from_status=(from_status,), status=GenerationRun.Status.CANCELLED)
    job_id = materialise_job_id(run_id, row.get("requeues") or 0) if status in (None, Campaign.Status.RUNNING) else ""
    note = note or ("queued for materialisation on the sandbox queue" if job_id
                    else "kit saved; materialisation waits for the campaign to resume")
    extra: dict[str, object] = {}
    if rec is not None:
        rec.log(note)
        extra = {**rec.pending(), "stage_seconds": rec.finish_stages()}
    moved = GenerationRun.objects.filter(pk=run_id, status=from_status, **still).update(
        status=GenerationRun.Status.QUEUED, stage=GenerationRun.Stage.QUEUED, job_id=job_id,
        heartbeat_at=timezone.now(), not_before=None, llm_wait_since=None, **extra)
    if moved and job_id:
        # Inside a caller's transaction (the sweep) the job is queued once the move is committed.
        transaction.on_commit(lambda: enqueue_materialise([(run_id, job_id)]))
    if moved and rec is None:
        _append_log(run_id, note)
    return bool(moved)


def run_requeue_dead(*, run_id: int, reason: str, from_status: str, **still: str) -> bool:
    """A campaign run whose worker died goes back to its queue (the sweep); its saved kit is kept."""
    from generation.campaigns.accounting import run_account_calls

    run_account_calls(run_id=run_id)  # calls made before the crash still count
    row = GenerationRun.objects.filter(pk=run_id, status=from_status, **still).values("kit_id", "requeues").first()
    if row is None:
        return False
    with transaction.atomic():
        for suite in TestSuite.objects.filter(generation_run__pk=run_id, status=TestSuite.Status.BUILDING):
            suite_fail(suite=suite, note=f"generation run #{run_id}: worker died ({reason}); run queued again")
        GenerationRun.objects.filter(pk=run_id).update(requeues=F("requeues") + 1)
        if row["kit_id"] is None:
            moved = GenerationRun.objects.filter(pk=run_id, status=from_status, **still).update(
                status=GenerationRun.Status.QUEUED, stage=GenerationRun.Stage.QUEUED, job_id="",
                heartbeat_at=timezone.now())
            if moved:
                _append_log(run_id, f"worker died ({reason}); back on the LLM queue")
            elif not moved:
                transaction.set_rollback(True)
            return bool(moved)
        moved = run_to_materialise(run_id=run_id, from_status=from_status,
                                   note=f"worker died ({reason}); kit kept, back on the sandbox queue", **still)
        if not moved:
            transaction.set_rollback(True)
        return moved


# -- the LLM stage ---------------------------------------------------------------------


def llm_stage_claim(*, claim: str, limit: int) -> list[int]:
    """Take up to `limit` runs waiting for the LLM stage; two queries whatever the queue length."""
    if limit <= 0:
        return []
    now = timezone.now()
    ids = list(GenerationRun.objects.filter(
        status=GenerationRun.Status.QUEUED, job_id="", kit__isnull=True, mode=GenerationRun.Mode.FROM_SCRATCH,
        campaign__status=Campaign.Status.RUNNING,
    ).exclude(not_before__gt=now).order_by("id").values_list("pk", flat=True)[:limit])
    if not ids:
        return []
    GenerationRun.objects.filter(pk__in=ids, status=GenerationRun.Status.QUEUED, job_id="").update(
        status=GenerationRun.Status.RUNNING, job_id=claim, heartbeat_at=now, started_at=now)
    return list(GenerationRun.objects.filter(pk__in=ids, status=GenerationRun.Status.RUNNING, job_id=claim)
                .values_list("pk", flat=True))


_STATUS_CODE = re.compile(r"Error code: (\d{3})")


def llm_transient(run_id: int) -> bool:
    """Whether the run's last failed call is worth waiting out (429, 5xx, timeouts, dropped connections)."""
    from generation.llm import llm_configured

    if not llm_configured():
        return False
    error = (LLMCall.objects.filter(run_id=run_id).exclude(error="").order_by("-pk")
             .values_list("error", flat=True).first() or "")
    match = _STATUS_CODE.search(error)
    if match:
        code = int(match.group(1))
        return code in (408, 409, 429) or code >= 500
    return True


def _backoff(run: GenerationRun, rec: RunRecorder, message: str, claim: str) -> str:
    """Put the run back on the LLM queue after a delay, or fail it once it has waited long enough."""
    from generation.pipeline import _record_failure

    now = timezone.now()
    since = run.llm_wait_since or now
    waited = (now - since).total_seconds()
    limit = float(settings.HARDTESTS_LLM_UNAVAILABLE_AFTER_S)
    first_line = message.splitlines()[0][:300] if message else ""
    if waited >= limit:
        _record_failure(rec, run.pk, FailureReason.LLM_UNAVAILABLE,
                        f"{message}\n(the endpoint kept failing for {waited:.0f} s in total)")
        return "failed"
    delay = min(MAX_BACKOFF_S, settings.HARDTESTS_CAMPAIGN_BACKOFF_S * 2 ** min(run.requeues, 10))
    delay = min(random.uniform(delay / 2, delay), max(1.0, limit - waited))
    rec.log(f"LLM unavailable ({first_line}); back on the queue in {delay:.0f} s "
            f"(waiting {waited:.0f} s of {limit:.0f} s so far)")
    moved = GenerationRun.objects.filter(pk=run.pk, status=GenerationRun.Status.RUNNING, job_id=claim).update(
        status=GenerationRun.Status.QUEUED, stage=GenerationRun.Stage.QUEUED, job_id="",
        not_before=now + timezone.timedelta(seconds=delay), llm_wait_since=since,
        requeues=F("requeues") + 1, heartbeat_at=now, stage_seconds=rec.finish_stages(), **rec.pending())
    return "backoff" if moved else "lost"


def llm_stage_execute(*, run_id: int, claim: str) -> str:
    """Ask the LLM for a claimed run's kit, then hand it to materialisation; returns what happened."""
    from generation.asking import RunFailed, llm_kit
    from generation.campaigns.accounting import run_account_calls
    from generation.materialise import MaterialiseError
    from generation.pipeline import _record_failure, _sandbox
    from generation.preflight import preflight
    from sandbox import SandboxUnavailable

    run = GenerationRun.objects.select_related("problem", "kit", "campaign").get(pk=run_id)
    if run.status != GenerationRun.Status.RUNNING or run.job_id != claim:
        return "not ours"
    rec = RunRecorder(run, buffered=True)
    outcome = "materialise"
    try:
        if run.kit_id is None:
            rec.log(f"LLM stage of campaign {run.campaign.name if run.campaign else '-'} for {run.problem.pid}")
            # The pre-flight (enough oracles that pass the samples) comes before any paid call.
            sb = _sandbox()
            llm_kit(run, rec, sb, preflight(problem=run.problem, sb=sb, progress=rec))
    except MaterialiseError as exc:
        _record_failure(rec, run_id, exc.reason, str(exc))
        outcome = "failed"
    except RunFailed as exc:
        if exc.reason == FailureReason.LLM_UNAVAILABLE and llm_transient(run_id):
            outcome = _backoff(run, rec, str(exc), claim)
        else:
            _record_failure(rec, run_id, exc.reason, str(exc))
            outcome = "failed"
    except Cancelled:
        _record_failure(rec, run_id, FailureReason.CANCELLED, "cancel requested")
        outcome = "cancelled"
    except SandboxUnavailable as exc:
        _record_failure(rec, run_id, FailureReason.SANDBOX_ERROR, f"sandbox unavailable: {exc}")
        outcome = "failed"
    except Exception as exc:  # noqa: BLE001 - recorded on the row; the worker thread goes on
        log.exception("run %s: LLM stage crashed", run_id)
        _record_failure(rec, run_id, FailureReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        outcome = "failed"
    finally:
        run_account_calls(run_id=run_id)
    if outcome == "materialise" and not run_to_materialise(run_id=run_id, rec=rec, job_id=claim):
        outcome = "lost"
    return outcome


# -- the materialisation stage ------------------------------------------------------------


def materialise_stage(*, run_id: int) -> str:
    """The sandbox-queue job of a campaign run: materialise its saved kit (pipeline.execute)."""
    from rq import get_current_job

    from generation.campaigns.services import campaign_refresh
    from generation.services import generation_run_execute

    row = GenerationRun.objects.filter(pk=run_id).values("status", "job_id", "campaign_id",
                                                          "campaign__status").first()
    if row is None or row["status"] != GenerationRun.Status.QUEUED:
        return "not queued"
    job = get_current_job()
    if job is not None and row["job_id"] != job.id:
        return "stale job"  # the run was queued again under a newer job
    if row["campaign__status"] == Campaign.Status.PAUSED:
        GenerationRun.objects.filter(pk=run_id, status=GenerationRun.Status.QUEUED, job_id=row["job_id"]).update(
            job_id="")
        return "parked"
    if row["campaign__status"] == Campaign.Status.CANCELLED:
        run_fail(run_id=run_id, reason=FailureReason.CANCELLED, error="the campaign was cancelled",
                 from_status=(GenerationRun.Status.QUEUED,), status=GenerationRun.Status.CANCELLED)
        return "cancelled"
    run = generation_run_execute(run_id=run_id)
    if row["campaign_id"] is not None:
        campaign_refresh(campaign_id=row["campaign_id"])
    return run.status
