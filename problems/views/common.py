"""What the problem pages share: partial-or-full rendering of a tab, and the maintainer check."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from hardtests_web.permissions import is_maintainer
from problems.models import Problem


def htmx_target(request: HttpRequest) -> str | None:
    """The element an htmx request will swap, or None for a request that needs a full page
    (no htmx, a boosted link, or htmx restoring history after a cache miss)."""
    htmx = getattr(request, "htmx", None)
    if not htmx or htmx.boosted or htmx.history_restore_request:
        return None
    return htmx.target or ""


def render_tab(
    request: HttpRequest, problem: Problem, tab: str, template: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    """A tab of the problem page: only the tab bar and panel for htmx, the whole page otherwise."""
    context = {**context, "problem": problem, "tab": tab, "tab_template": template}
    if htmx_target(request) == "problem-tabs":
        return render(request, "problems/_tabs.html", context, status=status)
    return render(request, "problems/problem_detail.html", context, status=status)


def require_maintainer(request: HttpRequest) -> None:
    if not is_maintainer(request.user):
        raise PermissionDenied("Only maintainers can do this.")
