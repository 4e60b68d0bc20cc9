"""Study pages. Thin: check permission, validate a form, call one service, render.

Blindness is enforced here and in selectors: the annotation page is built from the
annotator's own row only, and the results, review and export pages check
`can_see_results` / maintainer rights before reading anyone's labels.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from core.forms import form_refused_pop, form_refused_redirect
from core.htmx import HtmxHttpRequest
from core.permissions import is_maintainer
from review.models import Annotation, Study, StudyItem, ValidatorTrial
from review.studies import assignment, selectors, services
from review.studies.forms import (
    ACTION_KEYS,
    REASON_KEYS,
    SUITE_KEYS,
    VALIDATOR_KEYS,
    DraftForm,
    LabelForm,
    StudyForm,
    choice_pairs,
)
from review.studies.view_helpers import STOP_POLLING, _item, _kind_pages, _study, maintainer_required

IDLE_HOURS = 24


def _own_annotation(request: HttpRequest, item: StudyItem) -> Annotation | None:
    # Reached only past _study (404 for a non-member) or on a POST (login required).
    assert request.user.is_authenticated
    return Annotation.objects.filter(item=item, annotator=request.user).first()


def _elapsed(request: HttpRequest) -> int | None:
    raw = request.POST.get("elapsed_ms", "")
    return int(raw) if raw.isdigit() else None


def _go_next(request: HttpRequest, study: Study) -> HttpResponse:
    try:
        annotation = assignment.item_next(study=study, user=request.user)
    except assignment.AssignmentError as exc:
        messages.error(request, str(exc))
        return redirect("studies:detail", pk=study.pk)
    if annotation is None:
        messages.info(request, "Nothing left for you to label in this study.")
        return redirect("studies:detail", pk=study.pk)
    return redirect("studies:annotate", pk=study.pk, item_pk=annotation.item_id)


# --- studies ----------------------------------------------------------------------------


@require_GET
def study_list(request: HttpRequest) -> HttpResponse:
    studies = selectors.studies_visible_to(request.user)
    return render(request, "review/studies/study_list.html", {"studies": studies})


@maintainer_required
def study_create(request: HttpRequest) -> HttpResponse:
    form = StudyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        study = services.study_create(created_by=request.user, **form.service_fields())
        messages.success(request, f"Study {study.name!r} created as a draft.")
        return redirect("studies:detail", pk=study.pk)
    return render(request, "review/studies/study_form.html", {"form": form, "study": None})


@maintainer_required
def study_edit(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    form = StudyForm(request.POST or None, instance=study)
    if request.method == "POST" and form.is_valid():
        study.refresh_from_db()  # the ModelForm wrote cleaned values onto the instance; the service decides
        services.study_update(study=study, **form.service_fields())
        messages.success(request, "Study saved.")
        return redirect("studies:detail", pk=study.pk)
    return render(request, "review/studies/study_form.html", {"form": form, "study": study})


@require_GET
def study_detail(request: HttpRequest, pk: int) -> HttpResponse:
    study = _study(request, pk)
    maintainer = is_maintainer(request.user)
    context: dict[str, Any] = {
        "study": study,
        "guidelines_html": selectors.markdown_html(study.guidelines),
        "is_member": selectors.is_member(study, request.user),
        "can_label": selectors.can_label(study, request.user),
        "can_see_results": selectors.can_see_results(study, request.user),
        "mine": selectors.my_annotations(study, request.user),
        "held": assignment.current_claim(study=study, user=request.user) if study.status == Study.Status.OPEN else None,
        "has_work": assignment.has_work(study=study, user=request.user),
        "item_count": study.items.count(),
    }
    if maintainer:
        context["progress"] = selectors.study_progress(study)
        context["idle_hours"] = IDLE_HOURS
        context["annotators"] = study.annotators.order_by("username")
        if study.status == Study.Status.DRAFT:
            context["preview_problems"] = selectors.study_problems(study)[:50]
    return render(request, "review/studies/study_detail.html", context)


@require_POST
@maintainer_required
def study_open(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    chosen = study.annotators.count()
    if study.status == Study.Status.DRAFT and chosen < study.overlap:
        messages.error(request, f"Overlap {study.overlap} needs at least {study.overlap} annotators; "
                                f"{chosen} {'is' if chosen == 1 else 'are'} chosen. Edit the study first.")
        return redirect("studies:detail", pk=pk)
    try:
        study = services.study_open(study=study)
        messages.success(request, f"Study open with {study.items.count()} items.")
    except services.StudyStateError as exc:
        messages.error(request, str(exc))
    return redirect("studies:detail", pk=pk)


@require_POST
@maintainer_required
def study_delete(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    if services.study_delete_draft(study=study):
        messages.success(request, f"Draft study “{study.name}” deleted.")
        return redirect("studies:list")
    messages.error(request, "Only a draft study can be deleted; close it instead.")
    return redirect("studies:detail", pk=pk)


@require_POST
@maintainer_required
def study_close(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    try:
        services.study_close(study=study)
        messages.success(request, "Study closed: annotators can now see the results.")
    except services.StudyStateError as exc:
        messages.error(request, str(exc))
    return redirect("studies:detail", pk=pk)


@require_POST
@maintainer_required
def study_results_visibility(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    opened = request.POST.get("opened") == "1"
    services.study_set_results_opened(study=study, opened=opened)
    messages.success(request, "Results opened to annotators." if opened else "Results hidden from annotators.")
    return redirect("studies:detail", pk=pk)


@require_POST
@maintainer_required
def study_release_idle(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    released = services.study_release_idle_claims(study=study, idle_hours=IDLE_HOURS)
    messages.success(request, f"Released {released} item{'s' if released != 1 else ''} held for over {IDLE_HOURS} h.")
    return redirect("studies:detail", pk=pk)


# --- labelling --------------------------------------------------------------------------


@require_GET
def my_queue(request: HttpRequest) -> HttpResponse:
    """An annotator's studies with their progress and where to carry on."""
    return render(request, "review/studies/my_queue.html", {"queues": selectors.my_queues(request.user)})


@require_POST
def item_next(request: HttpRequest, pk: int) -> HttpResponse:
    study = _study(request, pk)
    if not selectors.can_label(study, request.user):
        raise PermissionDenied("you are not labelling in this study")
    return _go_next(request, study)


@require_GET
def annotate(request: HttpRequest, pk: int, item_pk: int) -> HttpResponse:
    study = _study(request, pk)
    item = _item(study, item_pk)
    annotation = _own_annotation(request, item)
    if annotation is None or annotation.status == Annotation.Status.SKIPPED:
        if is_maintainer(request.user):
            return redirect("studies:review_item", pk=pk, item_pk=item_pk)
        raise Http404("this item is not assigned to you")
    if study.status == Study.Status.OPEN:
        services.annotation_view(annotation=annotation)
    refused, _ = form_refused_pop(request, key=f"label:{item.pk}")
    if refused is not None:
        form = LabelForm(refused, study=study)
        form.is_valid()  # shows the reasons the submission was refused for
    else:
        form = LabelForm(initial=_initial(annotation), study=study)
    return render(request, "review/studies/annotate.html",
                  _annotate_context(study, item, annotation, form, _kind_pages(request)))


def _initial(annotation: Annotation) -> dict[str, Any]:
    fields = ("validator_label", "validator_reason", "counterexample", "suite_label", "missing_cases",
              "suggested_input", "comment")
    return {name: getattr(annotation, name) for name in fields}


def _annotate_context(study: Study, item: StudyItem, annotation: Annotation, form: LabelForm,
                      pages: dict[str, str] | None = None) -> dict[str, Any]:
    done, total = selectors.my_progress(study, annotation.annotator)
    return {
        **selectors.item_page_context(item, pages),
        "my_done": done,
        "my_total": total,
        "my_percent": round(100 * done / total) if total else 0,
        "study": study,
        "annotation": annotation,
        "form": form,
        "editable": study.status == Study.Status.OPEN,
        "validator_keys": VALIDATOR_KEYS,
        "suite_keys": SUITE_KEYS,
        "reason_keys": REASON_KEYS,
        "keys": ACTION_KEYS,
        "validator_choices": [
            (v, label, VALIDATOR_KEYS[v]) for v, label in choice_pairs(form, "validator_label")
        ],
        "reason_choices": [(v, label, REASON_KEYS[v]) for v, label in choice_pairs(form, "validator_reason")],
        "suite_choices": [(v, label, SUITE_KEYS[v]) for v, label in choice_pairs(form, "suite_label")],
        "position": item.position + 1,
        "item_count": study.items.count(),
    }


@require_POST
def label(request: HtmxHttpRequest, pk: int, item_pk: int) -> HttpResponse:
    study = _study(request, pk)
    if not selectors.can_label(study, request.user):
        raise PermissionDenied("you are not labelling in this study")
    item = _item(study, item_pk)
    annotation = _own_annotation(request, item)
    if annotation is None or annotation.status == Annotation.Status.SKIPPED:
        raise PermissionDenied("this item is not assigned to you")
    form = LabelForm(request.POST, study=study)
    if not form.is_valid():
        if not request.htmx:
            return form_refused_redirect(request, key=f"label:{item.pk}",
                                         to=reverse("studies:annotate", args=[pk, item_pk]))
        context = _annotate_context(study, item, annotation, form)
        return render(request, "review/studies/annotate.html", context, status=422)
    data = form.cleaned_data
    labels = services.Labels(**{k: data.get(k) or "" for k in services.Labels.__dataclass_fields__})
    try:
        services.annotation_submit(annotation=annotation, labels=labels, elapsed_ms=data.get("elapsed_ms"))
    except services.StudyStateError as exc:
        messages.error(request, str(exc))
        return redirect("studies:detail", pk=pk)
    return _go_next(request, study)


@require_GET
def item_tests(request: HttpRequest, pk: int, item_pk: int) -> HttpResponse:
    """One page of one kind's tests of an item's suite (the annotation and review pages page
    through every test with it)."""
    study = _study(request, pk)
    item = _item(study, item_pk)
    if not is_maintainer(request.user) and _own_annotation(request, item) is None:
        raise PermissionDenied("this item is not assigned to you")
    kind = request.GET.get("kind", "")
    groups = selectors.tests_by_kind(item.suite, pages={kind: request.GET.get("page")}, only=kind)
    if not groups:
        raise Http404("no tests of this kind")
    return render(request, "review/studies/_kind_group.html",
                  {"group": groups[0], "study": study, "item": item, "open": True})


@require_POST
def draft(request: HttpRequest, pk: int, item_pk: int) -> HttpResponse:
    """Autosave (the annotation page posts here as the annotator types): 204 when kept, 409 when
    the item is no longer held unsubmitted."""
    study = _study(request, pk)
    if not selectors.can_label(study, request.user):
        raise PermissionDenied("you are not labelling in this study")
    annotation = _own_annotation(request, _item(study, item_pk))
    if annotation is None:
        raise PermissionDenied("this item is not assigned to you")
    form = DraftForm(request.POST)
    if not form.is_valid():
        return HttpResponse(
            "; ".join(f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items()), status=400
        )
    if not services.annotation_draft_save(annotation=annotation, fields=form.cleaned_data):
        return HttpResponse("not saved: the item is submitted, skipped or released", status=409)
    return HttpResponse(status=204)


@require_POST
def skip(request: HttpRequest, pk: int, item_pk: int) -> HttpResponse:
    study = _study(request, pk)
    if not selectors.can_label(study, request.user):
        raise PermissionDenied("you are not labelling in this study")
    annotation = _own_annotation(request, _item(study, item_pk))
    if annotation is None or annotation.status != Annotation.Status.CLAIMED:
        raise PermissionDenied("you do not hold this item")
    assignment.item_skip(annotation=annotation, elapsed_ms=_elapsed(request) or 0)
    return _go_next(request, study)


@require_POST
def resume(request: HttpRequest, pk: int, item_pk: int) -> HttpResponse:
    study = _study(request, pk)
    if not selectors.can_label(study, request.user):
        raise PermissionDenied("you are not labelling in this study")
    annotation = _own_annotation(request, _item(study, item_pk))
    if annotation is None:
        raise PermissionDenied("this item is not assigned to you")
    if annotation.status == Annotation.Status.SKIPPED and not assignment.item_resume_skipped(annotation=annotation):
        messages.info(request, "Enough people are labelling that item already.")
        return redirect("studies:detail", pk=pk)
    return redirect("studies:annotate", pk=pk, item_pk=item_pk)


# --- the try-it box ---------------------------------------------------------------------


def _may_try(request: HttpRequest, item: StudyItem) -> bool:
    if is_maintainer(request.user):
        return True
    annotation = _own_annotation(request, item)
    return annotation is not None and annotation.status != Annotation.Status.SKIPPED


@require_POST
def trial_start(request: HttpRequest, pk: int, item_pk: int) -> HttpResponse:
    study = _study(request, pk)
    item = _item(study, item_pk)
    if not _may_try(request, item):
        raise PermissionDenied("this item is not assigned to you")
    purpose = request.POST.get("purpose", ValidatorTrial.Purpose.TRY)
    if purpose not in ValidatorTrial.Purpose.values:
        purpose = ValidatorTrial.Purpose.TRY
    text = request.POST.get("counterexample" if purpose == ValidatorTrial.Purpose.COUNTEREXAMPLE else "input", "")
    if not text:
        return render(request, "review/studies/_trial.html", {"trial": None, "message": "Type an input first."})
    try:
        trial = services.trial_start(item=item, user=request.user, text=text, purpose=purpose)
    except services.StudyStateError as exc:
        return render(request, "review/studies/_trial.html", {"trial": None, "message": str(exc)})
    return render(request, "review/studies/_trial.html", {"trial": trial})


@require_GET
def trial_status(request: HttpRequest, trial_pk: int) -> HttpResponse:
    trial = get_object_or_404(ValidatorTrial.objects.select_related("validator"), pk=trial_pk)
    if trial.user_id != request.user.pk and not is_maintainer(request.user):
        raise Http404("no such trial")
    response = render(request, "review/studies/_trial.html", {"trial": trial})
    if trial.finished:
        response.status_code = STOP_POLLING
    return response
