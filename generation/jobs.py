"""RQ jobs of the generation app. Jobs take ids, call one service, record failure on the row.

Sweeping dead runs is not done here: at the start of every job it cost one Redis lookup
per queued run, quadratic over a campaign. The janitor does it (generation.services.stale_runs_sweep).
"""

from __future__ import annotations

import logging

from generation.campaigns.stages import materialise_stage
from generation.models import FailureReason
from generation.pipeline import generation_run_execute
from generation.services import run_fail

log = logging.getLogger(__name__)


def generation_run_job(run_id: int) -> str:
    try:
        run = generation_run_execute(run_id=run_id)
    except Exception as exc:
        run_fail(run_id=run_id, reason=FailureReason.INTERNAL_ERROR, error=f"{type(exc).__name__}: {exc}")
        raise
    return run.status


def campaign_materialise_job(run_id: int) -> str:
    """The second stage of a campaign run, on the CPU-bound `sandbox` queue: its saved kit to a suite."""
    try:
        return materialise_stage(run_id=run_id)
    except Exception as exc:
        run_fail(run_id=run_id, reason=FailureReason.INTERNAL_ERROR, error=f"{type(exc).__name__}: {exc}")
        raise
