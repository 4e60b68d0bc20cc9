"""The problems list: filters, sorting, pages, facets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache
from django.db.models import Exists, OuterRef, QuerySet
from django.urls import reverse

from problems.list_extensions import Cell, list_extensions
from problems.models import (
    DifficultyLabel,
    OutputJudge,
    Problem,
    Tag,
    TestSuite,
)
from problems.selectors.common import COUNT_CAP, FACET_CACHE_S, PAGE_SIZE, SORTS, _generated_suites
from problems.selectors.search import problem_search


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
    size = int(params.get("per_page") or PAGE_SIZE)
    qs = problem_list_filter(params)
    # An unfiltered count is one index scan. A filtered count stops at COUNT_CAP matches: an
    # exact one would evaluate the filters over the whole catalogue on every keystroke.
    if is_unfiltered(params):
        total, capped = Problem.objects.count(), False
    else:
        total = qs.order_by().values("pk")[: COUNT_CAP + 1].count()
        capped = total > COUNT_CAP
    last = max(1, -(-total // size))
    page = max(1, page) if capped else min(max(1, page), last)
    offset = (page - 1) * size
    # Plain value rows rather than model instances with prefetch_related: the page shows 50
    # rows and the ORM's per-row related managers would cost more than the queries.
    problems = list(qs.values_list("id", "pid", "title", "platform")[offset : offset + size + 1])
    has_next = len(problems) > size
    problems = problems[:size]
    if capped and not problems and page > 1:
        page, offset = 1, 0
        problems = list(qs.values_list("id", "pid", "title", "platform")[:size])
        has_next = True
    ids = [p[0] for p in problems]
    tags: dict[int, list[str]] = {}
    for problem_id, name in (
        Problem.tags.through.objects.filter(problem_id__in=ids).order_by("tag__name").values_list("problem_id", "tag__name")
    ):
        tags.setdefault(problem_id, []).append(name)
    labels: dict[int, list[tuple[str, str]]] = {}
    for problem_id, source, level in (
        DifficultyLabel.objects.filter(problem_id__in=ids).order_by("source").values_list("problem_id", "source", "level")
    ):
        labels.setdefault(problem_id, []).append((source, level))
    suites: dict[int, list[tuple[str, int]]] = {}
    for problem_id, status, count in (
        _generated_suites()
        .filter(problem_id__in=ids, status__in=[TestSuite.Status.ACTIVE, TestSuite.Status.FAILED,
                                               TestSuite.Status.BUILDING])
        .order_by("problem_id", "-version")
        .values_list("problem_id", "status", "test_count")
    ):
        suites.setdefault(problem_id, []).append((status, count))
    judged = set(OutputJudge.objects.filter(problem_id__in=ids).values_list("problem_id", flat=True))
    columns = [(e.column, e.cells) for e in list_extensions() if e.column and e.cells]
    extra = [column_cells(ids) if ids else {} for _, column_cells in columns]
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
                       has_next=has_next, capped=capped, page_size=size,
                       extra_columns=[heading for heading, _ in columns])


def problem_facets() -> dict[str, Any]:
    """Choices for the filter form; cached because they scan indexes of the whole catalogue."""
    facets: dict[str, Any] | None = cache.get("problems:facets")
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
