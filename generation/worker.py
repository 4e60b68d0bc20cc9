"""An RQ worker that records a killed work horse on its GenerationRun at once.

Use it for the `generation` queue: `manage.py rqworker --worker-class
generation.worker.GenerationWorker generation`. With a plain worker the same failure is
found later by the janitor's sweep (generation.services.stale_runs_sweep: from the RQ job's
failed status or the run's heartbeat).
"""

from __future__ import annotations

import logging
from typing import Any

from rq import Worker
from rq.job import Job

from generation.models import FailureReason, GenerationRun
from generation.services import RUN_JOB, run_fail

log = logging.getLogger(__name__)


def _run_id_of(job: Job) -> int | None:
    if job.func_name != RUN_JOB or not job.args:
        return None
    try:
        return int(job.args[0])
    except (TypeError, ValueError):
        return None


class GenerationWorker(Worker):
    def handle_work_horse_killed(self, job: Job, retpid: int, ret_val: int, rusage: Any) -> None:
        # rq leaves this hook unannotated
        super().handle_work_horse_killed(job, retpid, ret_val, rusage)  # type: ignore[no-untyped-call]
        run_id = _run_id_of(job)
        if run_id is None:
            return
        try:
            run_fail(run_id=run_id, reason=FailureReason.WORKER_DIED,
                     error=f"worker died: the work horse (pid {retpid}) was killed (wait status {ret_val})",
                     from_status=(GenerationRun.Status.RUNNING, GenerationRun.Status.QUEUED),
                     note=f"worker died: the work horse (pid {retpid}) was killed")
        except Exception:  # noqa: BLE001 - the sweeper will catch it later
            log.exception("could not record the death of run %s", run_id)
