"""Reads that the pages share: the filtered problems list, search, suite statistics and diffs,
the verdict matrix. Every function here runs a fixed number of queries whatever the size
of the catalogue (the list and matrix pages are measured by bench/web.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Sum
from django.db.models.expressions import RawSQL
from django.urls import reverse

from problems.list_extensions import Cell, list_extensions
from problems.models import (
    DifficultyLabel,
    InputValidator,
    OutputJudge,
    Problem,
    Solution,
    Tag,
    TestCase,
    TestKit,
    TestSuite,
    Verdict,
)

PAGE_SIZE = 50
COUNT_CAP = 1000
FACET_CACHE_S = 300
# Judging preference for the suite a page shows by default (same order as problems.judging).
ORIGIN_PREFERENCE = ("generated", "official", "imported", "public")

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


# ---------------------------------------------------------------- search


def search_terms(q: str) -> list[str]:
    """Words of a query, lowercased; both backends split on anything that is not a letter or digit."""
    return [t for t in re.split(r"[\W_]+", q.lower()) if t][:12]


def _sqlite_fts_ready() -> bool:
    # The FTS table is kept current by triggers, which SQLite drops whenever Django remakes
    # problems_problem in a migration; without them the index would go stale silently, so
    # search falls back to a (slow but correct) scan until they are installed again.
    key = "problems:fts-ready"
    ready = cache.get(key)
    if ready is None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(*) FROM sqlite_master WHERE name IN "
                "('problems_problem_fts', 'problems_problem_fts_ai', 'problems_problem_fts_ad', 'problems_problem_fts_au')"
            )
            ready = cursor.fetchone()[0] == 4
        cache.set(key, ready, 60)
    return bool(ready)


def search_index_install(**_signal_kwargs: Any) -> bool:
    """Reinstall the SQLite search triggers and rebuild the index if a migration dropped them.

    Django remakes a SQLite table (and so drops its triggers) for many schema changes, e.g.
    adding a NOT NULL column to problems_problem. Meant as a post_migrate receiver; idempotent,
    and a no-op (False) when the index is intact or on PostgreSQL, whose GIN index survives.
    """
    cache.delete("problems:fts-ready")
    if connection.vendor != "sqlite" or _sqlite_fts_ready():
        return False
    from importlib import import_module

    migration = import_module("problems.migrations.0004_problem_search_index")
    with connection.cursor() as cursor:
        for sql in migration.SQLITE_INSTALL:
            cursor.execute(sql)
    cache.delete("problems:fts-ready")
    return True


def problem_search(qs: QuerySet[Problem], q: str) -> QuerySet[Problem]:
    """Problems whose title or statement contains every query word as a word prefix, or whose
    id contains the query (people paste ids, or the memorable part of one: "1A", "isqrt")."""
    q = q.strip()
    terms = search_terms(q)
    # A scan of the short pid column; the statement search is what needs the full-text index.
    by_pid = Q(pid__icontains=q) if q else Q()
    if not terms:
        return qs.filter(by_pid) if q else qs
    vendor = connection.vendor
    if vendor == "sqlite" and _sqlite_fts_ready():
        match = " ".join(f'"{t}"*' for t in terms)
        # One IN over a UNION, so SQLite drives the query from the matching ids.
        ids = RawSQL("SELECT rowid FROM problems_problem_fts WHERE problems_problem_fts MATCH %s", [match])
        return qs.filter(Q(pk__in=ids) | by_pid)
    if vendor == "postgresql":
        tsquery = " & ".join(f"{t}:*" for t in terms)
        matched = RawSQL(
            "to_tsvector('simple'::regconfig, coalesce(\"problems_problem\".\"title\", '') || ' ' || "
            "coalesce(\"problems_problem\".\"statement\", '')) @@ to_tsquery('simple'::regconfig, %s)",
            [tsquery],
        )
        return qs.alias(_matched=matched).filter(Q(_matched=True) | by_pid)
    words = Q()
    for term in terms:
        words &= Q(title__icontains=term) | Q(statement__icontains=term)
    return qs.filter(words | by_pid)


# ---------------------------------------------------------------- the problems list


def _generated_suites() -> QuerySet[TestSuite]:
    # Public suites are only the statement's samples; "has a suite" means a real one.
    return TestSuite.objects.exclude(origin=TestSuite.Origin.PUBLIC)


def problem_list_filter(params: dict[str, Any]) -> QuerySet[Problem]:
    """The problems matching a cleaned ProblemFilterForm, sorted. Filters are non-correlated
    IN (subquery) sets, which both databases build once rather than probing per row."""
    qs = Problem.objects.all()
    if params.get("platform"):
        qs = qs.filter(platform=params["platform"])
    if params.get("difficulty"):
        source, _, level = params["difficulty"].partition(":")
        labels = DifficultyLabel.objects.filter(source=source)
        if level:
            labels = labels.filter(level=level)
        qs = qs.filter(pk__in=labels.values("problem_id"))
    if params.get("tag"):
        through = Problem.tags.through.objects.filter(tag__name=params["tag"])
        qs = qs.filter(pk__in=through.values("problem_id"))
    # Broad conditions (most problems have an active suite) are correlated EXISTS probes, so a
    # page sorted by an index stops after 50 hits; selective ones (a tag, failed suites) are
    # IN (subquery) sets that SQLite and PostgreSQL drive the query from.
    def suites_with(*statuses: str) -> Exists:
        return Exists(_generated_suites().filter(problem_id=OuterRef("pk"), status__in=statuses))

    status = params.get("suite")
    if status == "active":
        qs = qs.filter(suites_with(TestSuite.Status.ACTIVE))
    elif status == "failed":
        failed = _generated_suites().filter(status=TestSuite.Status.FAILED).values("problem_id")
        qs = qs.filter(pk__in=failed).exclude(suites_with(TestSuite.Status.ACTIVE))
    elif status == "none":
        qs = qs.exclude(suites_with(TestSuite.Status.ACTIVE, TestSuite.Status.FAILED))
    judge = params.get("judge")
    if judge in ("yes", "no"):
        judged = Exists(OutputJudge.objects.filter(problem_id=OuterRef("pk")))
        qs = qs.filter(judged) if judge == "yes" else qs.exclude(judged)
    for extension in list_extensions():
        value = params.get(extension.name)
        if value and value in dict(extension.choices):
            qs = extension.apply(qs, value)
    if params.get("q"):
        qs = problem_search(qs, params["q"])
    return qs.order_by(*SORTS.get(params.get("sort") or "pid", SORTS["pid"]))


def is_unfiltered(params: dict[str, Any]) -> bool:
    names = ["platform", "difficulty", "tag", "suite", "judge", "q"] + [e.name for e in list_extensions()]
    return not any(params.get(k) for k in names)


@dataclass
class ProblemRow:
    pk: int
    pid: str
    title: str
    platform: str
    url: str
    tags: list[str] = field(default_factory=list)
    more_tags: int = 0
    difficulties: list[tuple[str, str]] = field(default_factory=list)
    suite_status: str = "none"
    test_count: int | None = None
    has_judge: bool = False
    # One cell per list extension with a column, in registration order.
    extra: list[Cell] = field(default_factory=list)


ROW_TAGS_SHOWN = 5


@dataclass
class ProblemPage:
    rows: list[ProblemRow]
    number: int
    total: int
    has_next: bool
    capped: bool = False
    page_size: int = PAGE_SIZE
    # Headings of the list extensions' columns, matching ProblemRow.extra.
    extra_columns: list[str] = field(default_factory=list)

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def num_pages(self) -> int:
        return max(1, -(-self.total // self.page_size))

    @property
    def start_index(self) -> int:
        return (self.number - 1) * self.page_size + 1 if self.rows else 0

    @property
    def end_index(self) -> int:
        return self.start_index + len(self.rows) - 1 if self.rows else 0


def problem_page(params: dict[str, Any], page: int) -> ProblemPage:
    """One page of the list with everything its rows show, in six queries plus one per extension column."""
    qs = problem_list_filter(params)
    # An unfiltered count is one index scan. A filtered count stops at COUNT_CAP matches: an
    # exact one would evaluate the filters over the whole catalogue on every keystroke.
    if is_unfiltered(params):
        total, capped = Problem.objects.count(), False
    else:
        total = qs.order_by().values("pk")[: COUNT_CAP + 1].count()
        capped = total > COUNT_CAP
    last = max(1, -(-total // PAGE_SIZE))
    page = max(1, page) if capped else min(max(1, page), last)
    offset = (page - 1) * PAGE_SIZE
    # Plain value rows rather than model instances with prefetch_related: the page shows 50
    # rows and the ORM's per-row related managers would cost more than the queries.
    problems = list(qs.values_list("id", "pid", "title", "platform")[offset : offset + PAGE_SIZE + 1])
    has_next = len(problems) > PAGE_SIZE
    problems = problems[:PAGE_SIZE]
    if capped and not problems and page > 1:
        page, offset = 1, 0
        problems = list(qs.values_list("id", "pid", "title", "platform")[:PAGE_SIZE])
        has_next = True
    ids = [p[0] for p in problems]
    tags: dict[int, list[str]] = {}
    for pid, name in (
        Problem.tags.through.objects.filter(problem_id__in=ids).order_by("tag__name").values_list("problem_id", "tag__name")
    ):
        tags.setdefault(pid, []).append(name)
    labels: dict[int, list[tuple[str, str]]] = {}
    for pid, source, level in (
        DifficultyLabel.objects.filter(problem_id__in=ids).order_by("source").values_list("problem_id", "source", "level")
    ):
        labels.setdefault(pid, []).append((source, level))
    suites: dict[int, list[tuple[str, int]]] = {}
    for pid, status, count in (
        _generated_suites()
        .filter(problem_id__in=ids, status__in=[TestSuite.Status.ACTIVE, TestSuite.Status.FAILED,
                                               TestSuite.Status.BUILDING])
        .order_by("problem_id", "-version")
        .values_list("problem_id", "status", "test_count")
    ):
        suites.setdefault(pid, []).append((status, count))
    judged = set(OutputJudge.objects.filter(problem_id__in=ids).values_list("problem_id", flat=True))
    columns = [e for e in list_extensions() if e.column and e.cells]
    extra = [e.cells(ids) if ids else {} for e in columns]  # type: ignore[misc]
    blank = Cell("—")
    detail = reverse("problem_detail", args=[0])[: -len("0/")]
    rows = []
    for pk, pid, title, platform in problems:
        names = tags.get(pk, [])
        row = ProblemRow(pk=pk, pid=pid, title=title, platform=platform, url=f"{detail}{pk}/",
                         tags=names[:ROW_TAGS_SHOWN], more_tags=max(0, len(names) - ROW_TAGS_SHOWN),
                         difficulties=labels.get(pk, []), has_judge=pk in judged,
                         extra=[cells.get(pk, blank) for cells in extra])
        mine = suites.get(pk, [])
        active = [count for status, count in mine if status == TestSuite.Status.ACTIVE]
        if active:
            row.suite_status, row.test_count = "active", active[0]
        elif mine:
            row.suite_status = mine[0][0]
        rows.append(row)
    return ProblemPage(rows=rows, number=page, total=min(total, COUNT_CAP) if capped else total,
                       has_next=has_next, capped=capped, extra_columns=[e.column for e in columns])


def problem_facets() -> dict[str, Any]:
    """Choices for the filter form; cached because they scan indexes of the whole catalogue."""
    facets = cache.get("problems:facets")
    if facets is None:
        platforms = sorted(
            p for p in Problem.objects.order_by().values_list("platform", flat=True).distinct() if p
        )
        difficulty: dict[str, list[str]] = {}
        for source, level in (
            DifficultyLabel.objects.order_by().values_list("source", "level").distinct()
        ):
            difficulty.setdefault(source, []).append(level)
        for levels in difficulty.values():
            levels.sort(key=_level_key)
        tags = list(Tag.objects.order_by("name").values_list("name", flat=True)[:2000])
        facets = {"platforms": platforms, "difficulty": dict(sorted(difficulty.items())), "tags": tags}
        cache.set("problems:facets", facets, FACET_CACHE_S)
    return facets


def _level_key(level: str) -> tuple[int, float, str]:
    try:
        return (0, float(level), level)
    except ValueError:
        order = {"easy": 0, "medium": 1, "medium_hard": 2, "hard": 3, "very_hard": 4}
        return (1, order.get(level.lower(), 99), level)


# ---------------------------------------------------------------- one problem


def problem_get(pk: int) -> Problem:
    from django.shortcuts import get_object_or_404

    return get_object_or_404(Problem.objects.prefetch_related("tags", "difficulties"), pk=pk)


def problem_suites(problem: Problem) -> list[TestSuite]:
    return list(
        problem.suites.order_by("-version").only(
            "id", "problem_id", "version", "status", "origin", "test_count", "total_bytes",
            "counts_by_kind", "created_at", "activated_at", "note", "kit_id", "validator_id", "output_judge_id",
        )
    )


def suite_default(suites: list[TestSuite]) -> TestSuite | None:
    """The suite pages show first: the active one judging would use, else the newest."""
    active = {s.origin: s for s in suites if s.status == TestSuite.Status.ACTIVE}
    for origin in ORIGIN_PREFERENCE:
        if origin in active:
            return active[origin]
    return suites[0] if suites else None


def suite_pick(suites: list[TestSuite], suite_id: Any) -> TestSuite | None:
    try:
        wanted = int(suite_id)
    except (TypeError, ValueError):
        return suite_default(suites)
    return next((s for s in suites if s.pk == wanted), None) or suite_default(suites)


@dataclass
class KindStats:
    kind: str
    label: str
    count: int
    input_bytes: int
    output_bytes: int


def suite_kind_stats(suite: TestSuite) -> list[KindStats]:
    labels = dict(TestCase.Kind.choices)
    rows = (
        suite.tests.order_by().values("kind")
        .annotate(n=Count("id"), i=Sum("input_size"), o=Sum("output_size"))
    )
    order = {k: i for i, k in enumerate(["hacking", "stratified", "regular", "direct", "imported", "public"])}
    stats = [KindStats(r["kind"], labels.get(r["kind"], r["kind"]), r["n"], r["i"] or 0, r["o"] or 0) for r in rows]
    return sorted(stats, key=lambda s: order.get(s.kind, 9))


@dataclass
class SuiteDiff:
    a: TestSuite
    b: TestSuite
    added: int
    removed: int
    output_changed: int
    unchanged: int
    added_tests: list[TestCase]
    removed_tests: list[TestCase]
    verdicts: list[dict[str, Any]] = field(default_factory=list)


def suite_diff(a: TestSuite, b: TestSuite, *, show: int = 50) -> SuiteDiff:
    """What changed from suite a to suite b: tests by input content hash, and verdicts per solution."""
    in_a = dict(a.tests.values_list("input_sha256", "output_sha256"))
    in_b = dict(b.tests.values_list("input_sha256", "output_sha256"))
    added = sorted(set(in_b) - set(in_a))
    removed = sorted(set(in_a) - set(in_b))
    common = set(in_a) & set(in_b)
    changed = sum(1 for key in common if in_a[key] != in_b[key])
    fields = ("id", "suite_id", "ordinal", "kind", "generator", "input_size", "input_preview", "output_size")
    added_tests = list(b.tests.filter(input_sha256__in=added[:show]).only(*fields).order_by("ordinal"))
    removed_tests = list(a.tests.filter(input_sha256__in=removed[:show]).only(*fields).order_by("ordinal"))
    by_solution: dict[int, dict[str, Any]] = {}
    for v in Verdict.objects.filter(suite__in=[a, b]).select_related("solution").only(
        "suite_id", "verdict", "passed", "total", "solution__id", "solution__name", "solution__role",
        "solution__language", "solution__gold_verdict",
    ):
        entry = by_solution.setdefault(v.solution_id, {"solution": v.solution, "a": None, "b": None})
        entry["a" if v.suite_id == a.pk else "b"] = v
    verdicts = []
    for entry in by_solution.values():
        va, vb = entry["a"], entry["b"]
        entry["changed"] = (va.verdict if va else None) != (vb.verdict if vb else None)
        verdicts.append(entry)
    verdicts.sort(key=lambda e: (not e["changed"], e["solution"].role, e["solution"].pk))
    return SuiteDiff(a, b, len(added), len(removed), changed, len(common) - changed, added_tests, removed_tests,
                     verdicts)


def kit_versions(problem: Problem) -> list[TestKit]:
    return list(
        problem.kits.select_related("validator__edited_by", "output_judge__edited_by", "created_by")
        .order_by("-version")[:100]
    )


def code_versions(problem: Problem) -> dict[str, list[Any]]:
    """Every validator and judge version with who wrote it (code bodies deferred)."""
    return {
        "validators": list(
            InputValidator.objects.filter(problem=problem).select_related("edited_by").defer("code", "regression_inputs")
            .order_by("-version")[:100]
        ),
        "judges": list(
            OutputJudge.objects.filter(problem=problem).select_related("edited_by").defer("code")
            .order_by("-version")[:100]
        ),
    }


def problem_solutions(problem: Problem) -> list[Solution]:
    return list(problem.solutions.defer("code").order_by("role", "reliability", "id"))


# ---------------------------------------------------------------- the verdict matrix

from problems.matrix import (  # noqa: E402, F401 - re-exported for the pages
    MATRIX_FILTERS,
    VERDICT_STYLE,
    CellDetail,
    Matrix,
    MatrixColumn,
    gold_expectation,
    matrix_pending,
    verdict_cell,
    verdict_matrix,
    verdict_style,
)

# ---------------------------------------------------------------- the home page

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
        "tests": TestSuite.objects.filter(status=TestSuite.Status.ACTIVE).aggregate(n=Sum("test_count"))["n"] or 0,
    }


def test_kind_distribution() -> list[dict[str, Any]]:
    """For each test kind, how many active generated suites have 0, 1-5, ... tests of it.

    Cached for five minutes: it reads counts_by_kind of every active suite.
    """
    data = cache.get("problems:kind-distribution")
    if data is not None:
        return data
    kinds = [k for k in TestCase.Kind.values if k != TestCase.Kind.PUBLIC]
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
        if totals[k] or k != TestCase.Kind.IMPORTED
    ]
    cache.set("problems:kind-distribution", data, FACET_CACHE_S)
    return data
