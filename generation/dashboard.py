"""The home page: catalogue totals, the two HardTests pictures, recent runs.

It lives in generation/ because it reads both the catalogue and generation runs, and the
dependency direction is generation -> problems.
"""

from __future__ import annotations

from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from generation.campaigns.selectors import campaigns_open
from generation.models import FailureReason, GenerationRun
from problems.selectors import catalogue_totals, test_kind_distribution
from problems.views.charts import bar_chart
from problems.views.common import htmx_target


def _recent_runs() -> list[GenerationRun]:
    return list(GenerationRun.objects.select_related("problem").only(
        "id", "status", "stage", "mode", "model_name", "failure_reason", "created_at", "finished_at",
        "problem__id", "problem__pid", "problem__title",
    )[:10])


def home(request: HttpRequest) -> HttpResponse:
    if htmx_target(request) == "recent-runs":
        # The recent-runs panel refreshes itself; nothing else on the page needs recomputing.
        return render(request, "problems/_recent_runs.html", {"recent_runs": _recent_runs()})
    by_status = dict(GenerationRun.objects.order_by().values_list("status").annotate(n=Count("id")))
    runs_by_status = [(label, by_status.get(value, 0), value) for value, label in GenerationRun.Status.choices]
    reasons = dict(
        GenerationRun.objects.exclude(failure_reason="").order_by().values_list("failure_reason")
        .annotate(n=Count("id"))
    )
    outcomes: list[tuple[str, int] | tuple[str, int, str]] = [
        ("Succeeded", by_status.get(GenerationRun.Status.SUCCEEDED, 0), "ok")]
    outcomes += [(label, reasons.get(value, 0), "bad") for value, label in FailureReason.choices if reasons.get(value)]
    distribution = test_kind_distribution()
    context = {
        "totals": catalogue_totals(),
        "runs_by_status": runs_by_status,
        "runs_total": sum(by_status.values()),
        "outcome_chart": bar_chart(outcomes, label_width=190, title="Generation outcomes"),
        "kind_charts": [
            {**kind, "chart": bar_chart([(label, n) for label, n in kind["buckets"]], width=300, label_width=60,
                                        bar_height=14, gap=4)}
            for kind in distribution
        ],
        "recent_runs": _recent_runs(),
        "open_campaigns": campaigns_open(),
    }
    return render(request, "problems/home.html", context)
