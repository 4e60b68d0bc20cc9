"""The two stages of a campaign run, as executed (the moves between them: generation.services).

LLM stage: a QUEUED run without a kit is claimed from the table by an `llm_worker` thread
(job_id = "llm:<worker token>"), asks the LLM for the kit and saves it, then goes back to
QUEUED with an RQ job on the `sandbox` queue: the materialisation stage. Every move is a
conditional update on (status, job_id), so a worker declared dead cannot move a run that
has since been given to another; its other writes (stage, log, the kit) are conditional on the
claim too, and once the run is no longer its own the worker stops (RunLost) and keeps nothing.
A run whose kit is saved never goes back to the LLM.
"""

from __future__ import annotations

import logging
import random
import re

from django.conf import settings
from django.utils import timezone

from generation.accounting import run_account_calls
from generation.asking import llm_kit
from generation.campaigns.services import campaign_refresh
from generation.llm import LLMConfig, llm_configured
from generation.materialise import MaterialiseError
from generation.materialise.types import Cancelled, RunFailed
from generation.models import Campaign, FailureReason, GenerationRun, LLMCall
from generation.pipeline import generation_run_execute, open_sandbox
from generation.preflight import preflight
from generation.recorder import RunLost, RunRecorder
from generation.services import run_fail, run_fail_recorded, run_llm_backoff, run_to_materialise
from sandbox import SandboxUnavailable

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 300.0


# -- the LLM stage ---------------------------------------------------------------------


_STATUS_CODE = re.compile(r"Error code: (\d{3})")


def llm_transient(run_id: int, llm: LLMConfig | None = None) -> bool:
    """Whether the run's last failed call is worth waiting out (429, 5xx, timeouts, dropped connections)."""
    if not llm_configured(llm):
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
    now = timezone.now()
    since = run.llm_wait_since or now
    waited = (now - since).total_seconds()
    limit = float(settings.HARDTESTS_LLM_UNAVAILABLE_AFTER_S)
    first_line = message.splitlines()[0][:300] if message else ""
    if waited >= limit:
        run_fail_recorded(rec, run.pk, FailureReason.LLM_UNAVAILABLE,
                        f"{message}\n(the endpoint kept failing for {waited:.0f} s in total)")
        return "failed"
    delay = min(MAX_BACKOFF_S, settings.HARDTESTS_CAMPAIGN_BACKOFF_S * 2 ** min(run.requeues, 10))
    delay = min(random.uniform(delay / 2, delay), max(1.0, limit - waited))
    rec.log(f"LLM unavailable ({first_line}); back on the queue in {delay:.0f} s "
            f"(waiting {waited:.0f} s of {limit:.0f} s so far)")
    moved = run_llm_backoff(run=run, rec=rec, claim=claim, delay_s=delay, since=since)
    return "backoff" if moved else "lost"


def llm_stage_execute(*, run_id: int, claim: str, llm: LLMConfig | None = None) -> str:
    """Ask the LLM (`llm`, None: the settings' endpoint) for a claimed run's kit, then hand it to
    materialisation; returns what happened."""
    run = GenerationRun.objects.select_related("problem", "kit", "campaign").get(pk=run_id)
    if run.status != GenerationRun.Status.RUNNING or run.job_id != claim:
        return "not ours"
    rec = RunRecorder(run, buffered=True, llm=llm, claim=claim)
    outcome = "materialise"
    try:
        if run.kit_id is None:
            rec.log(f"LLM stage of campaign {run.campaign.name if run.campaign else '-'} for {run.problem.pid}")
            # The pre-flight (enough oracles that pass the samples) comes before any paid call.
            sb = open_sandbox()
            llm_kit(run, rec, sb, preflight(problem=run.problem, sb=sb, progress=rec))
    except MaterialiseError as exc:
        run_fail_recorded(rec, run_id, exc.reason, str(exc))
        outcome = "failed"
    except RunFailed as exc:
        if exc.reason == FailureReason.LLM_UNAVAILABLE and llm_transient(run_id, rec.llm):
            outcome = _backoff(run, rec, str(exc), claim)
        else:
            run_fail_recorded(rec, run_id, exc.reason, str(exc))
            outcome = "failed"
    except RunLost:
        # taken back by the sweep while this thread still worked: it is queued again (or already
        # someone else's), so nothing more is written to it here
        log.warning("run %s: taken back while its LLM stage ran (its worker looked dead); stopping", run_id)
        outcome = "lost"
    except Cancelled:
        run_fail_recorded(rec, run_id, FailureReason.CANCELLED, "cancel requested")
        outcome = "cancelled"
    except SandboxUnavailable as exc:
        run_fail_recorded(rec, run_id, FailureReason.SANDBOX_ERROR, f"sandbox unavailable: {exc}")
        outcome = "failed"
    except Exception as exc:  # noqa: BLE001 - recorded on the row; the worker thread goes on
        log.exception("run %s: LLM stage crashed", run_id)
        run_fail_recorded(rec, run_id, FailureReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        outcome = "failed"
    finally:
        run_account_calls(run_id=run_id)
    if outcome == "materialise" and not run_to_materialise(run_id=run_id, rec=rec, job_id=claim):
        outcome = "lost"
    if outcome in ("failed", "cancelled") and run.campaign_id is not None:
        campaign_refresh(campaign_id=run.campaign_id)  # its last open run may just have ended
    return outcome


# -- the materialisation stage ------------------------------------------------------------


def materialise_stage(*, run_id: int) -> str:
    """The sandbox-queue job of a campaign run: materialise its saved kit (pipeline.execute)."""
    from rq import get_current_job

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
