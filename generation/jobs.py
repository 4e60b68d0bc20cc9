"""RQ jobs of the generation app. Jobs take ids, call one service, record failure on the row."""

from __future__ import annotations

import logging

from generation.models import FailureReason
from generation.runs import run_fail, sweep_stale_runs
from generation.services import generation_run_execute

log = logging.getLogger(__name__)


def generation_run_job(run_id: int) -> str:
    try:
        # A worker that picks up work is a good moment to notice runs whose worker died.
        sweep_stale_runs()
    except Exception:  # noqa: BLE001 - sweeping is housekeeping; the run matters more
        log.warning("sweeping stale runs failed", exc_info=True)
    try:
        run = generation_run_execute(run_id=run_id)
    except Exception as exc:
        run_fail(run_id=run_id, reason=FailureReason.INTERNAL_ERROR, error=f"{type(exc).__name__}: {exc}")
        raise
    return run.status
