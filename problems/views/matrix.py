"""The verdict matrix (solutions x tests, like a preparation system's invocation table) and
"Judge all", which queues judging and lets the matrix fill in by polling."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from problems.forms import JudgeAllForm
from problems.models import SUPPORTED_LANGUAGES, Verdict
from problems.selectors import (
    MATRIX_FILTERS,
    problem_get,
    problem_solutions,
    problem_suites,
    suite_pick,
    verdict_cell,
    verdict_matrix,
)
from problems.views.common import STOP_POLLING, htmx_target, render_tab, require_maintainer


def problem_matrix(request: HttpRequest, pk: int) -> HttpResponse:
    problem = problem_get(pk)
    suites = problem_suites(problem)
    suite = suite_pick(suites, request.GET.get("suite"))
    context: dict[str, Any] = {"suites": suites, "suite": suite, "matrix": None}
    if suite is not None:
        try:
            test_page = int(request.GET.get("tests", "1"))
        except ValueError:
            test_page = 1
        context["matrix"] = verdict_matrix(suite, problem_solutions(problem), test_page=test_page,
                                           show=request.GET.get("show", ""))
        context["filters"] = MATRIX_FILTERS
        context["judge_form"] = JudgeAllForm(initial={"suite": suite.pk})
    if htmx_target(request) == "matrix":
        pending = context["matrix"].pending if context["matrix"] else 0
        return render(request, "problems/_matrix.html", {**context, "problem": problem},
                      status=200 if pending else STOP_POLLING)
    return render_tab(request, problem, "matrix", "problems/_tab_matrix.html", context)


@require_POST
def problem_judge_all(request: HttpRequest, pk: int) -> HttpResponse:
    require_maintainer(request)
    problem = problem_get(pk)
    form = JudgeAllForm(request.POST)
    url = reverse("problem_matrix", args=[problem.pk])
    if not form.is_valid():
        messages.error(request, "Choose a suite to judge against.")
        return redirect(url)
    suite = get_object_or_404(problem.suites, pk=form.cleaned_data["suite"])
    # Imported in the view so page rendering never loads the sandbox package.
    from problems.jobs import judging_enqueue

    solutions = [s for s in problem.solutions.defer("code") if s.language in SUPPORTED_LANGUAGES]
    queued = judging_enqueue(suite=suite, solutions=solutions)
    messages.success(request, f"Queued judging of {queued} solutions against suite v{suite.version}.")
    return redirect(f"{url}?suite={suite.pk}")


def verdict_cell_detail(request: HttpRequest, pk: int, suite_id: int, solution_id: int, ordinal: int) -> HttpResponse:
    """One cell opened: in the side panel through htmx, or as the matrix tab with the panel filled."""
    problem = problem_get(pk)
    suite = get_object_or_404(problem.suites, pk=suite_id)
    solution = get_object_or_404(problem.solutions.defer("code"), pk=solution_id)
    if not suite.tests.filter(ordinal=ordinal).exists():
        raise Http404("no such test")
    detail = verdict_cell(suite, solution, ordinal)
    context = {"problem": problem, "suite": suite, "cell": detail}
    if htmx_target(request) == "cell-detail":
        return render(request, "problems/_verdict_cell.html", context)
    suites = problem_suites(problem)
    matrix_context = {"suites": suites, "suite": suite, "filters": MATRIX_FILTERS,
                      "matrix": verdict_matrix(suite, problem_solutions(problem)),
                      "judge_form": JudgeAllForm(initial={"suite": suite.pk}), "cell": detail}
    return render_tab(request, problem, "matrix", "problems/_tab_matrix.html", matrix_context)


def verdict_output(request: HttpRequest, pk: int, suite_id: int, solution_id: int, ordinal: int) -> HttpResponse:
    """The stored output of a program on a test it failed, as a file."""
    from problems.blobs import blob_get

    verdict = get_object_or_404(Verdict, suite_id=suite_id, solution_id=solution_id, suite__problem_id=pk)
    sha = next((r.get("output_sha256") for r in verdict.results or []
                if isinstance(r, dict) and r.get("ordinal") == ordinal), None)
    if not sha:
        raise Http404("no stored output for this test")
    response = HttpResponse(blob_get(sha), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="solution{solution_id}-test{ordinal:04d}.out"'
    return response
