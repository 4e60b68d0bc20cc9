"""The home page's totals and charts."""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db.models import Sum

from problems.models import (
    Problem,
    TestCase,
    TestSuite,
)
from problems.selectors.common import FACET_CACHE_S, _generated_suites

KIND_BUCKETS: list[tuple[str, int, int]] = [
    ("0", 0, 0), ("1–5", 1, 5), ("6–10", 6, 10), ("11–20", 11, 20), ("21–50", 21, 50),
    ("51–100", 51, 100), ("101+", 101, 10**12),
]


def catalogue_totals() -> dict[str, int]:
    return {
        "problems": Problem.objects.count(),
        "suites": _generated_suites().filter(status=TestSuite.Status.ACTIVE).count(),
        "suites_total": TestSuite.objects.count(),
        # Sum of the denormalised counts: one pass over suites instead of two million tests.
        # The same suites as "suites" and as the per-kind charts, so the numbers add up.
        "tests": _generated_suites().filter(status=TestSuite.Status.ACTIVE).aggregate(n=Sum("test_count"))["n"] or 0,
    }


def test_kind_distribution() -> list[dict[str, Any]]:
    """For each test kind, how many active generated suites have 0, 1-5, ... tests of it.

    Cached for five minutes: it reads counts_by_kind of every active suite.
    """
    data: list[dict[str, Any]] | None = cache.get("problems:kind-distribution")
    if data is not None:
        return data
    kinds = list(TestCase.Kind.values)
    labels = dict(TestCase.Kind.choices)
    hist = {k: [0] * len(KIND_BUCKETS) for k in kinds}
    totals = dict.fromkeys(kinds, 0)
    suites = 0
    for counts in (
        _generated_suites().filter(status=TestSuite.Status.ACTIVE).values_list("counts_by_kind", flat=True)
        .iterator(chunk_size=5000)
    ):
        suites += 1
        counts = counts or {}
        for kind in kinds:
            n = int(counts.get(kind, 0) or 0)
            totals[kind] += n
            for i, (_, lo, hi) in enumerate(KIND_BUCKETS):
                if lo <= n <= hi:
                    hist[kind][i] += 1
                    break
    data = [
        {"kind": k, "label": labels[k], "total": totals[k], "mean": totals[k] / suites if suites else 0.0,
         "buckets": [(KIND_BUCKETS[i][0], hist[k][i]) for i in range(len(KIND_BUCKETS))]}
        for k in kinds
        # Kinds a generated suite rarely holds get a chart only when it has some, so that the
        # charts' totals add up to the "tests" figure beside them.
        if totals[k] or k not in (TestCase.Kind.IMPORTED, TestCase.Kind.PUBLIC)
    ]
    cache.set("problems:kind-distribution", data, FACET_CACHE_S)
    return data
