"""The evaluation page: the latest stored report, and (maintainers) running a new one."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from rq.exceptions import NoSuchJobError
from rq.job import Job

from core.htmx import HtmxHttpRequest
from core.permissions import is_annotator, is_maintainer
from core.queues import redis_connection
from review.evaluation.export import plain_table, table_csv, table_latex
from review.evaluation.jobs import evaluation_report_start
from review.evaluation.oracle_free import table8_display, table8_latest
from review.evaluation.selectors import report_in_progress, report_latest
from review.evaluation.services import evaluation_report_abandon, evaluation_select
from review.evaluation.tables import chart_data, page_tables
from review.models import EvaluationReport

ENQUEUE_GRACE_S = 120  # a report with no job id this long after its creation was never queued
LOST = "its job is gone (the worker was stopped or Redis restarted before it finished)"


def job_lost(report: EvaluationReport) -> bool:
    """An unfinished report whose RQ job no longer exists or ended without recording an outcome:
    nothing will ever finish it."""
    if not report.job_id:
        return (timezone.now() - report.created_at).total_seconds() > ENQUEUE_GRACE_S
    try:
        job = Job.fetch(report.job_id, connection=redis_connection())
    except NoSuchJobError:
        return True
    except Exception:  # Redis unreachable: say nothing rather than guess
        return False
    return job.get_status(refresh=False) in ("failed", "stopped", "canceled")


def _done_report(report: EvaluationReport) -> dict[str, Any]:
    """The data of a done report (stored together with the status, so never None)."""
    data: dict[str, Any] | None = report.report
    assert data is not None
    return data


def _running() -> tuple[EvaluationReport | None, bool]:
    report = report_in_progress()
    return report, bool(report is not None and job_lost(report))


@require_GET
def evaluation_page(request: HttpRequest) -> HttpResponse:
    if not is_annotator(request.user):
        raise PermissionDenied
    latest = report_latest()
    running, lost = _running()
    context: dict[str, Any] = {
        "latest": latest,
        "running": running,
        "running_lost": lost,
        "tables": page_tables(_done_report(latest)) if latest else None,
        "charts": chart_data(_done_report(latest)) if latest else None,
        "can_run": is_maintainer(request.user),
        # Computed with the report (services.evaluation_report_compute), never here: the page
        # reads stored figures only. A report older than that section has none.
        "fast": _done_report(latest).get("fast") if latest else None,
    }
    table8 = table8_latest()
    if table8 is not None:
        context["table8"] = table8
        context["table8_rows"] = table8_display(table8.report or {})
    return render(request, "review/evaluation/page.html", context)


@require_POST
def evaluation_run(request: HttpRequest) -> HttpResponse:
    if not is_maintainer(request.user):
        raise PermissionDenied
    running, lost = _running()
    if running is not None and lost:
        evaluation_report_abandon(report_id=running.pk, reason=f"Evaluation #{running.pk} stopped: {LOST}.")
    if running is None or lost:
        # The page runs the whole catalogue; narrower runs are the command's job.
        evaluation_report_start(selection=evaluation_select(), user=request.user)
    return redirect("evaluation:page")


@require_GET
def evaluation_status(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The progress partial, polled by htmx; 286 stops the polling once the run ends."""
    if not is_annotator(request.user):
        raise PermissionDenied
    report = get_object_or_404(EvaluationReport, pk=pk)
    response = render(request, "review/evaluation/_status.html", {"running": report})
    if report.finished and request.htmx:
        response.status_code = 286
        response["HX-Refresh"] = "true"
    return response


EXPORTS = {"csv": ("text/csv; charset=utf-8", table_csv), "tex": ("application/x-tex; charset=utf-8", table_latex)}


@require_GET
def evaluation_table_export(request: HttpRequest, pk: int, name: str, fmt: str) -> HttpResponse:
    """One table of a finished report as CSV or LaTeX (the numbers the page shows)."""
    if not is_annotator(request.user):
        raise PermissionDenied
    report = get_object_or_404(EvaluationReport, pk=pk, status=EvaluationReport.Status.DONE)
    table = plain_table(_done_report(report), name)
    if table is None or fmt not in EXPORTS:
        raise Http404("no such table")
    content_type, render_table = EXPORTS[fmt]
    response = HttpResponse(render_table(table), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="evaluation-{pk}-{name}.{fmt}"'
    return response
