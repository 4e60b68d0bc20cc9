"""The evaluation page: the latest stored report, and (maintainers) running a new one."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from core.permissions import is_annotator, is_maintainer
from review.evaluation.selectors import report_in_progress, report_latest
from review.evaluation.services import evaluation_report_create, evaluation_select
from review.evaluation.tables import chart_data, page_tables
from review.models import EvaluationReport


@require_GET
def evaluation_page(request: HttpRequest) -> HttpResponse:
    if not is_annotator(request.user):
        raise PermissionDenied
    latest = report_latest()
    context = {
        "latest": latest,
        "running": report_in_progress(),
        "tables": page_tables(latest.report) if latest else None,
        "charts": chart_data(latest.report) if latest else None,
        "can_run": is_maintainer(request.user),
    }
    return render(request, "review/evaluation/page.html", context)


@require_POST
def evaluation_run(request: HttpRequest) -> HttpResponse:
    if not is_maintainer(request.user):
        raise PermissionDenied
    if report_in_progress() is None:
        # The page runs the whole catalogue; narrower runs are the command's job.
        evaluation_report_create(selection=evaluation_select(), user=request.user)
    return redirect("evaluation:page")


@require_GET
def evaluation_status(request: HttpRequest, pk: int) -> HttpResponse:
    """The progress partial, polled by htmx; 286 stops the polling once the run ends."""
    if not is_annotator(request.user):
        raise PermissionDenied
    report = get_object_or_404(EvaluationReport, pk=pk)
    response = render(request, "review/evaluation/_status.html", {"running": report})
    if report.finished and request.htmx:
        response.status_code = 286
        response["HX-Refresh"] = "true"
    return response
