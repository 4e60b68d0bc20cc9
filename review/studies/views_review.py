"""Study pages after labelling: results, per-item review and adjudication, suite additions, exports.

Split from views.py (same rules): only maintainers, or annotators once results are visible.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from core.forms import form_refused_pop, form_refused_redirect
from core.htmx import HtmxHttpRequest
from problems.kit_check import kit_code_errors
from review.models import Study, StudyItem, SuiteAddition
from review.studies import results, selectors, services
from review.studies.forms import AdjudicationForm, InputForm, ValidatorEditForm
from review.studies.view_helpers import STOP_POLLING, _item, _kind_pages, _study, maintainer_required

# The item page's forms a refusal sends back to it: name in the page's context -> (form class,
# the field that carries reasons found beyond the form's own validation).
_REFUSABLE: dict[str, tuple[type, str | None]] = {
    "adjudication_form": (AdjudicationForm, None),
    "validator_form": (ValidatorEditForm, "code"),
    "input_form": (InputForm, None),
}

# --- results, review, adjudication, export ----------------------------------------------


@require_GET
def study_results(request: HttpRequest, pk: int) -> HttpResponse:
    study = _study(request, pk)
    if not selectors.can_see_results(study, request.user):
        raise PermissionDenied("results are hidden until the study closes")
    context = {"study": study, **results.study_results(study, viewer=request.user),
               "progress": selectors.study_progress(study)}
    return render(request, "review/studies/results.html", context)


@require_GET
@maintainer_required
def review_item(request: HttpRequest, pk: int, item_pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    item = _item(study, item_pk)
    forms: dict[str, Any] = {}
    for name, (form_class, error_field) in _REFUSABLE.items():
        data, errors = form_refused_pop(request, key=f"review:{item.pk}:{name}")
        if data is not None:
            form = form_class(data)
            form.is_valid()
            for error in errors:
                if error not in form.errors.get(error_field or "__all__", []):
                    form.add_error(error_field, error)
            forms[name] = form
    return render(request, "review/studies/review_item.html", _review_context(request, study, item, **forms))


def _refused(request: HtmxHttpRequest, study: Study, item: StudyItem, name: str, form: Any) -> HttpResponse:
    """A refused form: the re-rendered page for htmx, else back to the item's page with what was
    typed and why (post/redirect/get), so the address bar never holds a POST-only address."""
    if request.htmx:
        context = _review_context(request, study, item, **{name: form})
        return render(request, "review/studies/review_item.html", context, status=422)
    extra = [str(e) for e in form.errors.get(_REFUSABLE[name][1] or "__all__", [])] if name == "validator_form" else []
    return form_refused_redirect(request, key=f"review:{item.pk}:{name}", errors=extra,
                                 to=reverse("studies:review_item", kwargs={"pk": study.pk, "item_pk": item.pk}))


def _review_context(request: HttpRequest, study: Study, item: StudyItem, **forms: Any) -> dict[str, Any]:
    adjudication = getattr(item, "adjudication", None)
    initial = {}
    if adjudication is not None:
        initial = {k: getattr(adjudication, k) for k in
                   ("validator_label", "validator_reason", "counterexample", "suite_label", "note")}
    latest = selectors.latest_validator(item.problem)
    annotations = list(item.annotations.select_related("annotator").order_by("annotator__username"))
    return {
        **selectors.item_page_context(item, _kind_pages(request)),
        "study": study,
        "annotations": annotations,
        "adjudication": adjudication,
        "adjudication_form": forms.get("adjudication_form") or AdjudicationForm(initial=initial),
        "validator_form": forms.get("validator_form") or ValidatorEditForm(
            initial={"code": latest.code if latest else "", "note": f"fix from study {study.name}"}
        ),
        "latest_validator": latest,
        "regression_inputs": (latest.regression_inputs if latest else []),
        "suggested": [a for a in annotations if a.suggested_input],
        "additions": list(item.suite_additions.select_related("new_suite").order_by("-created_at")[:10]),
        "input_form": forms.get("input_form") or InputForm(),
    }


@require_POST
@maintainer_required
def adjudicate(request: HtmxHttpRequest, pk: int, item_pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    item = _item(study, item_pk)
    form = AdjudicationForm(request.POST)
    if not form.is_valid():
        return _refused(request, study, item, "adjudication_form", form)
    adjudication = services.adjudication_set(item=item, user=request.user, **form.cleaned_data)
    note = " The counterexample is now a regression input of the validator." if adjudication.regression_recorded else ""
    messages.success(request, "Final label saved." + note)
    return redirect("studies:review_item", pk=pk, item_pk=item_pk)


@require_POST
@maintainer_required
def validator_edit(request: HtmxHttpRequest, pk: int, item_pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    item = _item(study, item_pk)
    form = ValidatorEditForm(request.POST)
    if form.is_valid():
        # The same check as the Kit tab's editor: parses, defines validate_input, accepts the samples.
        current = selectors.latest_validator(item.problem)
        if current is not None and current.code == form.cleaned_data["code"].replace("\r\n", "\n"):
            messages.info(request, f"Nothing changed: validator v{current.version} is kept and no run was started.")
            return redirect("studies:review_item", pk=pk, item_pk=item_pk)
        for error in kit_code_errors(problem=item.problem, validator_code=form.cleaned_data["code"], judge_code=""):
            form.add_error("code", error)
    if not form.is_valid():
        return _refused(request, study, item, "validator_form", form)
    edit = services.validator_edit(item=item, user=request.user, **form.cleaned_data)
    messages.success(request, f"Saved validator v{edit.validator.version} (kit v{edit.kit.version}); {edit.message}.")
    return redirect("studies:review_item", pk=pk, item_pk=item_pk)


@require_POST
@maintainer_required
def suite_addition_start(request: HtmxHttpRequest, pk: int, item_pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    item = _item(study, item_pk)
    form = InputForm(request.POST)
    if not form.is_valid():
        return _refused(request, study, item, "input_form", form)
    annotation = item.annotations.filter(pk=request.POST.get("annotation") or 0).first()
    try:
        addition = services.suite_addition_start(
            item=item, user=request.user, text=form.cleaned_data["input"], annotation=annotation
        )
    except services.StudyStateError as exc:
        messages.error(request, str(exc))
        return redirect("studies:review_item", pk=pk, item_pk=item_pk)
    if request.htmx:
        return render(request, "review/studies/_addition.html", {"addition": addition})
    return redirect(reverse("studies:review_item", kwargs={"pk": pk, "item_pk": item_pk}) + f"#addition-{addition.pk}")


@require_GET
@maintainer_required
def suite_addition_status(request: HttpRequest, addition_pk: int) -> HttpResponse:
    addition = get_object_or_404(SuiteAddition.objects.select_related("new_suite", "base_suite"), pk=addition_pk)
    response = render(request, "review/studies/_addition.html", {"addition": addition})
    if addition.finished:
        response.status_code = STOP_POLLING
    return response


def _export(request: HttpRequest, pk: int, body: Any, content_type: str, ext: str) -> HttpResponse:
    study = _study(request, pk)
    if not selectors.can_see_results(study, request.user):
        raise PermissionDenied("results are hidden until the study closes")
    response = HttpResponse(body(study, viewer=request.user), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-labels.{ext}"'
    return response


@require_GET
def export_csv(request: HttpRequest, pk: int) -> HttpResponse:
    return _export(request, pk, results.export_csv, "text/csv; charset=utf-8", "csv")


@require_GET
def export_jsonl(request: HttpRequest, pk: int) -> HttpResponse:
    return _export(request, pk, results.export_jsonl, "application/x-ndjson; charset=utf-8", "jsonl")
