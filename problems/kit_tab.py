"""The Kit tab's context and rendering, shared by its page (problems.views) and by the kit-edit
and revert views (generation.views), which re-render it with the refused edit and its errors so
nothing typed is lost."""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, Subquery
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from core.forms import form_refused_pop, form_refused_redirect
from problems.forms import KitEditForm
from problems.models import Problem, TestKit
from problems.selectors import code_versions
from problems.tabs import render_tab

DIRECT_INPUTS_SHOWN = 30
DIRECT_INPUT_PREVIEW = 400


def kit_versions_with_runs(problem: Problem) -> list[TestKit]:
    """Kit versions, newest first, each with its latest run's id, status and failure reason
    (a kit whose run failed is marked on the page)."""
    # The run model belongs to generation, above problems; reach it through the relation.
    run_model = TestKit._meta.get_field("runs").related_model
    latest = run_model._default_manager.filter(kit=OuterRef("pk")).order_by("-id")
    return list(
        problem.kits.select_related("validator__edited_by", "output_judge__edited_by", "created_by")
        .annotate(last_run_id=Subquery(latest.values("id")[:1]),
                  last_run_status=Subquery(latest.values("status")[:1]),
                  last_run_failure=Subquery(latest.values("failure_reason")[:1]))
        .order_by("-version")[:100]
    )


def kit_tab_context(problem: Problem, version: str | None = None, edit_form: KitEditForm | None = None,
                    errors: list[str] | None = None) -> dict[str, Any]:
    kits = kit_versions_with_runs(problem)
    kit = kits[0] if kits else None
    if version:
        kit = next((k for k in kits if str(k.version) == str(version)), kit)
    direct = list(kit.direct_inputs or [])[:DIRECT_INPUTS_SHOWN] if kit else []
    context: dict[str, Any] = {
        "kits": kits,
        "kit": kit,
        "is_latest_kit": bool(kit and kits and kit.pk == kits[0].pk),
        "direct_inputs": [
            (len(s) if isinstance(s, str) else 0, (s if isinstance(s, str) else str(s))[:DIRECT_INPUT_PREVIEW])
            for s in direct
        ],
        "direct_total": len(kit.direct_inputs or []) if kit else 0,
        "edit_errors": errors or [],
        **code_versions(problem),
    }
    if kit is not None:
        context["edit_form"] = edit_form or KitEditForm(initial={
            "validator_code": kit.validator.code if kit.validator else "",
            "judge_code": kit.output_judge.code if kit.output_judge else "",
            "kit_version": kit.version,
        })
    return context


def kit_tab_render(request: HttpRequest, problem: Problem, *, version: str | None = None,
                   edit_form: KitEditForm | None = None, errors: list[str] | None = None,
                   status: int = 200) -> HttpResponse:
    key = f"kit:{problem.pk}"
    if request.method == "POST" and status >= 400 and not getattr(request, "htmx", False):
        # A refused edit posted the plain way: back to the Kit tab's own address, with the
        # typed code and the reasons (post/redirect/get).
        return form_refused_redirect(request, key=key, to=reverse("problem_kit", args=[problem.pk]),
                                     errors=errors)
    if request.method == "GET" and edit_form is None:
        refused, refused_errors = form_refused_pop(request, key=key)
        if refused is not None:
            edit_form = KitEditForm(refused)
            edit_form.is_valid()
            errors = refused_errors
    context = kit_tab_context(problem, version, edit_form, errors)
    return render_tab(request, problem, "kit", "problems/_tab_kit.html", context, status=status)
