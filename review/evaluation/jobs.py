"""RQ job of the evaluation (`default` queue). Takes an id, calls one service."""

from __future__ import annotations

from review.evaluation.services import evaluation_report_run


def evaluation_report_job(report_id: int) -> str:
    # evaluation_report_run records a failure on the row itself before re-raising.
    return evaluation_report_run(report_id=report_id).status
