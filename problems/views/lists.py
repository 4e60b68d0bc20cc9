"""The problems list: filters in the URL, htmx swaps of the table, a full page without JS."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from problems.forms import ProblemFilterForm
from problems.selectors import problem_facets, problem_page
from problems.views.common import htmx_target


def problem_list(request: HttpRequest) -> HttpResponse:
    form = ProblemFilterForm(request.GET or None, facets=problem_facets())
    filters = form.filters() if request.GET else {}
    page = problem_page(filters, filters.get("page") or 1)
    sort = filters.get("sort") or "pid"
    next_sort = {"pid": "-pid" if sort == "pid" else "pid", "title": "-title" if sort == "title" else "title"}
    context = {"form": form, "page": page, "sort": sort, "next_sort": next_sort,
               "unknown_filters": form.unknown() if request.GET else []}
    if htmx_target(request) == "problem-table":
        return render(request, "problems/_problem_table.html", context)
    return render(request, "problems/problem_list.html", context)


def demo_build(request: HttpRequest) -> HttpResponse:
    """The first-run banner, polled; once nothing is being built it answers empty with 286,
    which removes the banner and stops the polling."""
    from problems.demo import demo_build_status
    from problems.views.common import STOP_POLLING

    status = demo_build_status()
    if status is None:
        return HttpResponse("", status=STOP_POLLING)
    return render(request, "problems/_demo_banner.html", {"demo_build": status})
