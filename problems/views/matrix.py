"""The verdict matrix (solutions x tests, like a preparation system's invocation table) and
"Judge all", which queues judging and lets the matrix fill in by polling."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from problems.forms import JudgeAllForm
from problems.models import SUPPORTED_LANGUAGES
from problems.selectors import problem_get, problem_solutions, problem_suites, suite_pick, verdict_matrix
from problems.views.common import STOP_POLLING, htmx_target, render_tab, require_maintainer

# htmx stops polling when a response has this status.



def problem_matrix(request: HttpRequest, pk: int) -> HttpResponse:
    problem = problem_get(pk)
    suites = problem_suites(problem)
    suite = suite_pick(suites, request.GET.get("suite"))
    context: dict = {"suites": suites, "suite": suite, "matrix": None}
    if suite is not None:
        try:
            test_page = int(request.GET.get("tests", "1"))
        except ValueError:
            test_page = 1
        context["matrix"] = verdict_matrix(suite, problem_solutions(problem), test_page=test_page)
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
