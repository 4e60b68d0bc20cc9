"""RQ job of the evaluation (`default` queue): takes an id, calls one service.

Services never import this module (they would import it in a circle): what starts a report
and queues its job is `evaluation_report_start` here, which the page calls.
"""

from __future__ import annotations

from typing import Any

import django_rq
from django.db import transaction

from core.embedded import ensure_redis
from review.evaluation.services import (
    JUDGING_TIMEOUT_S,
    Selection,
    evaluation_report_create,
    evaluation_report_run,
)
from review.models import EvaluationReport

DEFAULT_QUEUE = "default"


def evaluation_report_job(report_id: int) -> str:
    # evaluation_report_run records a failure on the row itself before re-raising.
    return evaluation_report_run(report_id=report_id).status


def evaluation_report_start(*, selection: Selection, user: Any = None) -> EvaluationReport:
    """A queued report whose job goes to the `default` queue after commit."""
    report = evaluation_report_create(selection=selection, user=user)

    def enqueue() -> None:
        ensure_redis()
        job = django_rq.get_queue(DEFAULT_QUEUE).enqueue(
            evaluation_report_job, report.pk, job_timeout=JUDGING_TIMEOUT_S + 3600, failure_ttl=7 * 86400
        )
        EvaluationReport.objects.filter(pk=report.pk).update(job_id=job.id)

    transaction.on_commit(enqueue)
    return report
