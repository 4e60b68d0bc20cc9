"""What the selectors share: page sizes, sorts, the judging preference of origins."""

from __future__ import annotations

from django.db.models import QuerySet

from problems.models import (
    TestSuite,
)

PAGE_SIZE = 50
COUNT_CAP = 1000
FACET_CACHE_S = 300
# Judging preference for the suite a page shows by default (same order as problems.judging).
ORIGIN_PREFERENCE = ("generated", "official", "imported", "oracle_free", "public")

SORTS: dict[str, tuple[str, ...]] = {
    "pid": ("pid",),
    "-pid": ("-pid",),
    "title": ("title", "pid"),
    "-title": ("-title", "pid"),
    # Ids grow with insertion, so the primary key orders by age without a sort over created_at.
    "new": ("-id",),
    "old": ("id",),
}
SORT_LABELS = {"pid": "Id", "-pid": "Id (desc)", "title": "Title", "-title": "Title (desc)",
               "new": "Newest", "old": "Oldest"}



def _generated_suites() -> QuerySet[TestSuite]:
    # Public suites are only the statement's samples; "has a suite" means a real one.
    return TestSuite.objects.exclude(origin=TestSuite.Origin.PUBLIC)
