"""Rendering a tab of the problem page: only the tab bar and panel for htmx, the whole page
otherwise. Generation's tabs (runs) render through this too, so it is not in views."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from core.htmx import htmx_target
from problems.models import Problem


def render_tab(
    request: HttpRequest, problem: Problem, tab: str, template: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    context = {**context, "problem": problem, "tab": tab, "tab_template": template}
    if htmx_target(request) == "problem-tabs":
        return render(request, "problems/_tabs.html", context, status=status)
    return render(request, "problems/problem_detail.html", context, status=status)
