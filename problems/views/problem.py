"""The problem page and its tabs: Suite, Kit, Solutions (Verdicts live in matrix.py, Runs in generation)."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from problems.kit_tab import kit_tab_render
from problems.models import Problem, Solution, TestCase, TestSuite, Verdict
from problems.selectors import (
    problem_get,
    problem_solutions,
    problem_suites,
    suite_diff,
    suite_kind_stats,
    suite_pick,
)
from problems.views.common import htmx_target, render_tab

TESTS_PER_PAGE = 50


def problem_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return problem_suite(request, pk)


def _suite_context(request: HttpRequest, suites: list[TestSuite], suite: TestSuite | None) -> dict[str, Any]:
    context: dict[str, Any] = {"suites": suites, "suite": suite, "kind": ""}
    if suite is None:
        return context
    kind = request.GET.get("kind", "")
    tests = suite.tests.order_by("ordinal").only(
        "id", "suite_id", "ordinal", "kind", "generator", "call_number", "input_size", "input_preview",
        "output_size", "output_preview", "validator_version", "oracle_id", "output_origin",
    )
    if kind in TestCase.Kind.values:
        tests = tests.filter(kind=kind)
        context["kind"] = kind
    context["kind_stats"] = suite_kind_stats(suite)
    context["tests_page"] = Paginator(tests, TESTS_PER_PAGE).get_page(request.GET.get("page"))
    # The kill order (problems/kill_order.py): each test's place in judging, the known-wrong
    # programs it fails, and whether the fast subset keeps it.
    position = {int(o): i for i, o in enumerate(suite.judge_order or [], start=1)}
    fast = {int(o) for o in suite.fast_ordinals or []}
    context["kill_order"] = {
        t.ordinal: (position.get(t.ordinal), int((suite.kill_counts or {}).get(str(t.ordinal), 0)), t.ordinal in fast)
        for t in context["tests_page"]
    }
    context["fast_size"] = len(fast)
    # Oracles by file name and language ("main.cpp · cpp"), not by id.
    oracle_ids = {t.oracle_id for t in context["tests_page"] if t.oracle_id}
    context["oracle_names"] = {
        pk: f"{name or f'solution {pk}'} · {language}"
        for pk, name, language in Solution.objects.filter(pk__in=oracle_ids).values_list("id", "name", "language")
    }
    return context


def problem_suite(request: HttpRequest, pk: int) -> HttpResponse:
    problem = problem_get(pk)
    suites = problem_suites(problem)
    suite = suite_pick(suites, request.GET.get("suite"))
    context = _suite_context(request, suites, suite)
    if htmx_target(request) == "suite-tests":
        return render(request, "problems/_suite_tests.html", {**context, "problem": problem})
    return render_tab(request, problem, "suite", "problems/_tab_suite.html", context)


def suite_compare(request: HttpRequest, pk: int) -> HttpResponse:
    """What changed between two versions of the problem's suites (?a=<id>&b=<id>)."""
    problem = problem_get(pk)
    suites = problem_suites(problem)
    by_id = {str(s.pk): s for s in suites}
    a, b = by_id.get(request.GET.get("a", "")), by_id.get(request.GET.get("b", ""))
    if a is None and b is not None:
        a = next((s for s in suites if s.version < b.version), None)
    diff = suite_diff(a, b) if a is not None and b is not None and a.pk != b.pk else None
    context = {"diff": diff, "a": a, "b": b}
    if htmx_target(request) == "suite-diff":
        return render(request, "problems/_suite_diff.html", {**context, "problem": problem})
    suite = b or suite_pick(suites, None)
    return render_tab(request, problem, "suite", "problems/_tab_suite.html",
                      {**_suite_context(request, suites, suite), **context})


def problem_kit(request: HttpRequest, pk: int) -> HttpResponse:
    return kit_tab_render(request, problem_get(pk), version=request.GET.get("version"))


def _solutions_context(problem: Problem, suites: list[TestSuite]) -> dict[str, Any]:
    solutions = problem_solutions(problem)
    suite = suite_pick(suites, None)
    verdicts = {}
    if suite is not None:
        verdicts = {v.solution_id: v for v in Verdict.objects.filter(suite=suite).defer("results", "message")}
    rows = [(s, verdicts.get(s.pk)) for s in solutions]
    return {
        "suite": suite,
        "oracles": [r for r in rows if r[0].role == "oracle"],
        "candidates": [r for r in rows if r[0].role == "candidate"],
    }


def problem_solutions_tab(request: HttpRequest, pk: int) -> HttpResponse:
    problem = problem_get(pk)
    context = _solutions_context(problem, problem_suites(problem))
    return render_tab(request, problem, "solutions", "problems/_tab_solutions.html", context)


def solution_code(request: HttpRequest, pk: int, solution_id: int) -> HttpResponse:
    problem = problem_get(pk)
    solution = get_object_or_404(problem.solutions, pk=solution_id)
    if (htmx_target(request) or "").startswith("code-"):
        return render(request, "problems/_solution_code.html", {"problem": problem, "solution": solution})
    context = {**_solutions_context(problem, problem_suites(problem)), "shown_solution": solution}
    return render_tab(request, problem, "solutions", "problems/_tab_solutions.html", context)
