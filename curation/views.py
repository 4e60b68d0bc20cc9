"""Curation pages: the job list (maintainers import a file or start the demo job), a job's page
(progress and cost, verify/resume, judge, select, export, the analyses with CSV downloads).

Reading needs the annotator role (as the evaluation page); every state change needs the
maintainer role, POST and CSRF. Nothing here runs the sandbox or the LLM: they are RQ jobs.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from core.htmx import STOP_POLLING, HtmxHttpRequest
from core.permissions import is_annotator, is_maintainer, require_maintainer
from curation.charts import page_charts
from curation.importing import CurationImportError
from curation.models import CurationJob, Selection
from curation.rules import RuleError, rule_parse
from curation.selectors import job_analysis, job_progress, jobs_recent, table_csv, table_of
from curation.services import (
    CurationRefused,
    curation_job_import,
    curation_job_resume,
    curation_job_start,
    selection_apply,
    selection_export,
)
from problems.models import TestSuite

MAX_UPLOAD_MB = 512


def _reader(request: HttpRequest) -> None:
    if not is_annotator(request.user):
        raise PermissionDenied


@require_GET
def curation_list(request: HttpRequest) -> HttpResponse:
    _reader(request)
    return render(request, "curation/list.html", {
        "jobs": jobs_recent(), "can_run": is_maintainer(request.user), "origins": TestSuite.Origin.choices,
    })


@require_POST
def curation_import(request: HttpRequest) -> HttpResponse:
    require_maintainer(request)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a .jsonl or .parquet file.")
        return redirect("curation:list")
    assert upload.name is not None  # the multipart parser drops a file part without a name
    suffix = ".parquet" if upload.name.endswith(".parquet") else ".jsonl"
    if upload.size and upload.size > MAX_UPLOAD_MB * 1024 * 1024:
        messages.error(request, f"The file is larger than {MAX_UPLOAD_MB} MB: import it with `manage.py curate import`.")
        return redirect("curation:list")
    origin = request.POST.get("origin", "")
    extra = [o for o in request.POST.getlist("extra_origin") if o]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"upload{suffix}"
        with path.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        try:
            job = curation_job_import(path=path, name=request.POST.get("name", "")[:200] or upload.name[:200],
                                      suite_origin=origin, extra_origins=extra, created_by=request.user)
        except CurationImportError as exc:
            messages.error(request, f"Nothing imported: {exc}")
            return redirect("curation:list")
    CurationJob.objects.filter(pk=job.pk).update(source_name=upload.name[:300])
    messages.success(request, f"Imported {job.total} completions as job #{job.pk}.")
    return redirect("curation:detail", pk=job.pk)


@require_POST
def curation_demo(request: HttpRequest) -> HttpResponse:
    """Queue the demo job (demo suites built where missing, demo completions imported, verified)."""
    require_maintainer(request)
    from core.queues import get_queue
    from curation.jobs import curation_demo_job

    transaction.on_commit(lambda: get_queue("default").enqueue(curation_demo_job, request.user.pk, job_timeout=3600))
    messages.success(request, "The demo job is queued: it appears here once its completions are imported.")
    return redirect("curation:list")


@require_GET
def curation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    _reader(request)
    job = get_object_or_404(CurationJob, pk=pk)
    analysis = job_analysis(job, judge_threshold=_threshold(request))
    return render(request, "curation/detail.html", {
        "job": job, "progress": job_progress(job), "analysis": analysis, "charts": page_charts(analysis),
        "selections": list(job.selections.order_by("id")), "can_run": is_maintainer(request.user),
    })


def _threshold(request: HttpRequest) -> float:
    try:
        return max(0.0, min(10.0, float(request.GET.get("judge_threshold", 7))))
    except ValueError:
        return 7.0


@require_GET
def curation_status(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The progress partial, polled by htmx; 286 stops the polling once verification ends."""
    _reader(request)
    job = get_object_or_404(CurationJob, pk=pk)
    response = render(request, "curation/_progress.html", {"job": job, "progress": job_progress(job)})
    if job.finished and request.htmx:
        response.status_code = STOP_POLLING
        response["HX-Refresh"] = "true"
    return response


@require_POST
def curation_verify(request: HttpRequest, pk: int) -> HttpResponse:
    require_maintainer(request)
    job = get_object_or_404(CurationJob, pk=pk)
    if request.POST.get("resume"):
        back = curation_job_resume(job=job)
        messages.success(request, f"Resumed: {back} completion(s) went back to the queue.")
    elif job.status == CurationJob.Status.IMPORTED:
        curation_job_start(job=job)
        messages.success(request, "Verification queued.")
    else:
        messages.error(request, f"Job #{job.pk} is {job.status}; use Resume to pick up what is left.")
    return redirect("curation:detail", pk=pk)


@require_POST
def curation_judge(request: HttpRequest, pk: int) -> HttpResponse:
    require_maintainer(request)
    job = get_object_or_404(CurationJob, pk=pk, status=CurationJob.Status.VERIFIED)
    judge = request.POST.get("judge", "").strip()[:200]
    if not judge:
        messages.error(request, "Name the judging model.")
        return redirect("curation:detail", pk=pk)
    from core.queues import get_queue
    from curation.jobs import curation_judge_job

    transaction.on_commit(lambda: get_queue("generation").enqueue(curation_judge_job, job.pk, judge,
                                                                  job_timeout=6 * 3600))
    messages.success(request, f"Judging with {judge} queued (the generation queue's workers make the calls).")
    return redirect("curation:detail", pk=pk)


@require_POST
def curation_select(request: HttpRequest, pk: int) -> HttpResponse:
    require_maintainer(request)
    job = get_object_or_404(CurationJob, pk=pk)
    try:
        selection = selection_apply(job=job, rule=rule_parse(request.POST.get("rule", "")))
        selection_export(selection=selection)
    except (RuleError, CurationRefused) as exc:
        messages.error(request, str(exc))
        return redirect("curation:detail", pk=pk)
    messages.success(request, f"{selection.label}: kept {selection.kept} of {selection.considered}; exported.")
    return redirect("curation:detail", pk=pk)


@require_GET
def curation_export_download(request: HttpRequest, pk: int, sid: int) -> HttpResponse:
    """The selection's dataset folder (data/ and the card) as a zip."""
    _reader(request)
    selection = get_object_or_404(Selection.objects.select_related("job"), pk=sid, job_id=pk)
    folder = Path(selection.export_path) if selection.export_path else None
    if folder is None or not (folder / "README.md").exists():
        folder = selection_export(selection=selection)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, str(path.relative_to(folder)))
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="curation-{pk}-selection-{sid}.zip"'
    return response


@require_GET
def curation_table_csv(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    _reader(request)
    job = get_object_or_404(CurationJob, pk=pk)
    table = table_of(job_analysis(job, judge_threshold=_threshold(request)), name)
    if table is None:
        raise Http404("no such table")
    response = HttpResponse(table_csv(table), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="curation-{pk}-{name}.csv"'
    return response
