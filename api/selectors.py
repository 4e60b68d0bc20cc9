"""Reads of the API: resolving a problem reference, suites, pages of problems."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import connection
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet

from api.errors import BadRequest, NotFound
from core.sql import ModelColumns, fetch_all, per_vendor
from problems.blobs import blob_pairs
from problems.judging import (
    JUDGE_SOURCE_READ,
    ORIGIN_PREFERENCE,
    TIME_ONLY,
    judge_source_sql,
    judging_position,
    judging_sort_key,
    suite_for_judging,
)
from problems.models import Problem, ProblemAlias, TestSuite

if TYPE_CHECKING:
    # django-stubs' helper (dev only): a model instance with attributes a queryset added
    from django_stubs_ext import WithAnnotations

# Suites a client may name by version: complete ones. Building and failed suites are
# never judged against.
COMPLETE = (TestSuite.Status.ACTIVE, TestSuite.Status.SUPERSEDED)


def problem_ref(problem: Problem) -> str:
    return f"{problem.source}:{problem.pid}"


def _refuse_unusable_ref(ref: str) -> None:
    if not ref or "\x00" in ref or len(ref) > 300:
        raise NotFound(f"no problem {ref[:300]!r}")


def _ambiguous(ref: str, matches: list[Problem]) -> BadRequest:
    refs = ", ".join(problem_ref(p) for p in matches[:5])
    return BadRequest(f"pid {ref!r} names problems in several sources; use source:pid, one of: {refs}",
                      code="ambiguous")


def _no_active_suite(problem: Problem) -> NotFound:
    return NotFound(f"problem {problem_ref(problem)} has no active test suite", code="no_active_suite")


def problem_resolve(ref: str) -> Problem:
    """The problem named by a bare pid, a source:pid, or a mirror's (alias) pid.

    A pid is unique only within its source, so a bare pid that several sources share is
    refused with 400 naming the refs to use instead of picking one silently.
    """
    _refuse_unusable_ref(ref)
    matches = list(Problem.objects.filter(pid=ref).order_by("source")[:6])
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise _ambiguous(ref, matches)
    if ":" in ref:
        source, pid = ref.split(":", 1)
        problem = Problem.objects.filter(source=source, pid=pid).first()
        if problem is not None:
            return problem
        alias = ProblemAlias.objects.select_related("problem").filter(source=source, pid=pid).first()
        if alias is not None:
            return alias.problem
    aliases = list(ProblemAlias.objects.select_related("problem").filter(pid=ref)[:2])
    if len({a.problem_id for a in aliases}) == 1:
        return aliases[0].problem
    raise NotFound(f"no problem {ref!r}")


class _TargetQuery:
    """One query for the problems a reference names by pid (or by source:pid), their active
    suites and the code of the judging function that judges each now: what verifying needs,
    instead of one query for the problem, one for its suites (about 1.4 ms of a verification's
    10 ms through the API, on this machine's SQLite) and one for the judging function (0.6 ms
    of CPU: resolving and snapshotting a suite, 0.77 -> 0.19 ms)."""

    # What the verification path reads of a problem; any other field is loaded on access.
    PROBLEM_FIELDS = ("id", "source", "pid", "title", "time_limit_ms", "memory_limit_mb", "comparison")
    # The kill order's lists (as long as the suite) are read by the worker, never here.
    SUITE_FIELDS = tuple(f.attname for f in TestSuite._meta.concrete_fields
                         if f.attname not in ("judge_order", "fast_ordinals", "kill_counts"))

    def __init__(self) -> None:
        self.problem = ModelColumns(Problem, "p", self.PROBLEM_FIELDS)
        self.suite = ModelColumns(TestSuite, "s", self.SUITE_FIELDS)
        qn = connection.ops.quote_name
        self.width = len(self.problem)
        base = (
            f"SELECT {self.problem.sql}, {self.suite.sql}, {judge_source_sql('s', qn)} "
            f"FROM {qn(Problem._meta.db_table)} p "
            f"LEFT JOIN {qn(TestSuite._meta.db_table)} s ON s.{qn('problem_id')} = p.{qn('id')} "
            f"AND s.{qn('status')} = %s WHERE "
        )
        order = f" ORDER BY p.{qn('source')}, p.{qn('id')} LIMIT 64"
        self.by_pid = base + f"p.{qn('pid')} = %s" + order
        self.by_pid_or_source = base + f"(p.{qn('pid')} = %s OR (p.{qn('source')} = %s AND p.{qn('pid')} = %s))" + order

    def run(self, ref: str) -> list[tuple[Problem, list[TestSuite]]]:
        """Each problem whose pid is `ref`, or else the one `source:pid` names, with its active suites."""
        if ":" in ref:
            source, pid = ref.split(":", 1)
            sql, params = self.by_pid_or_source, [TestSuite.Status.ACTIVE, ref, source, pid]
        else:
            sql, params = self.by_pid, [TestSuite.Status.ACTIVE, ref]
        found: dict[Any, tuple[Problem, list[TestSuite]]] = {}
        for row in fetch_all(sql, params):
            pk = row[0]
            if pk not in found:
                found[pk] = (self.problem.build(row[: self.width]), [])
            problem, suites = found[pk]
            if row[self.width] is not None:  # a problem without an active suite comes with NULLs
                suite = self.suite.build(row[self.width : -1])
                suite.problem = problem
                suite.__dict__[JUDGE_SOURCE_READ] = (row[-1],)  # suite_judging's, read here
                suites.append(suite)
        exact = [item for item in found.values() if item[0].pid == ref]
        return exact or list(found.values())


def verification_target(ref: str, version: int | None) -> tuple[Problem, TestSuite]:
    """The problem and suite a verification names: problem_resolve and suite_resolve, with
    the common case (a pid or source:pid and the active suite) in one query."""
    _refuse_unusable_ref(ref)
    matches = per_vendor("verification_target", _TargetQuery).run(ref)
    if len(matches) > 1:
        raise _ambiguous(ref, [problem for problem, _ in matches])
    if not matches:
        problem = problem_resolve(ref)  # an alias: rare, and read the usual way
        return problem, suite_resolve(problem, version)
    problem, active = matches[0]
    if version is not None:
        return problem, suite_resolve(problem, version)
    suite = preferred_active(active)
    if suite is None:
        raise _no_active_suite(problem)
    return problem, suite


def suite_resolve(problem: Problem, version: int | None) -> TestSuite:
    """The suite to judge against: the given version (complete), else the active one."""
    if version is None:
        suite = suite_for_judging(problem)
        if suite is None:
            raise _no_active_suite(problem)
        return suite
    suite = (
        problem.suites.filter(version=version, status__in=COMPLETE).first()
    )
    if suite is None:
        raise NotFound(f"problem {problem_ref(problem)} has no complete suite version {version}", code="no_suite")
    return suite


def preferred_active(suites: list[TestSuite]) -> TestSuite | None:
    """Among a problem's active suites (prefetched), the one judging uses."""
    by_origin = {s.origin: s for s in suites}
    for origin in ORIGIN_PREFERENCE:
        if origin in by_origin:
            return by_origin[origin]
    return None


@dataclass(frozen=True)
class ProblemFilters:
    source: str | None = None
    platform: str | None = None
    tag: str | None = None
    difficulty: str | None = None
    q: str | None = None
    has_suite: bool | None = None


class ActiveSuites(TypedDict):
    active_suites: list[TestSuite]  # the problem's active suites, prefetched


def problem_page(filters: ProblemFilters, *, limit: int,
                 offset: int) -> tuple[int, list[WithAnnotations[Problem, ActiveSuites]]]:
    qs: QuerySet[Problem] = Problem.objects.all()
    if filters.source:
        qs = qs.filter(source=filters.source)
    if filters.platform:
        qs = qs.filter(platform=filters.platform)
    if filters.tag:
        qs = qs.filter(tags__name=filters.tag)
    if filters.difficulty:
        qs = qs.filter(difficulties__level=filters.difficulty)
    if filters.q:
        qs = qs.filter(Q(pid__icontains=filters.q) | Q(title__icontains=filters.q))
    if filters.has_suite is not None:
        active = TestSuite.objects.filter(problem=OuterRef("pk"), status=TestSuite.Status.ACTIVE)
        qs = qs.filter(Exists(active)) if filters.has_suite else qs.exclude(Exists(active))
    # tag and difficulty joins can repeat a problem; ids keep paging stable.
    qs = qs.distinct().order_by("id")
    count = qs.count()
    rows = list(
        qs.prefetch_related(
            "tags",
            "difficulties",
            Prefetch(
                "suites", queryset=TestSuite.objects.filter(status=TestSuite.Status.ACTIVE), to_attr="active_suites"
            ),
        )[offset : offset + limit]
    )
    return count, rows


def problem_complete_suites(problem: Problem) -> list[TestSuite]:
    return list(problem.suites.filter(status__in=COMPLETE).order_by("-version"))


def suite_tests(suite: TestSuite, *, offset: int, limit: int, bodies: bool) -> list[dict[str, Any]]:
    """A page of the suite's tests in run order (the order judging uses), bodies on request."""
    rows = list(
        suite.tests.values("ordinal", "kind", "input_sha256", "output_sha256", "input_size", "output_size")
    )
    by = judging_sort_key(judging_position(suite))
    rows.sort(key=lambda r: by((r["ordinal"], r["kind"])))
    rows = rows[offset : offset + limit]
    # One query per page for the inline bodies, not one per body.
    pairs = blob_pairs((r["input_sha256"], r["output_sha256"]) for r in rows) if bodies else None
    page = []
    for index, row in enumerate(rows, start=offset):
        item: dict[str, Any] = {
            "index": index,
            "ordinal": row["ordinal"],
            "kind": row["kind"],
            "input_size": row["input_size"],
            "output_size": row["output_size"],
        }
        if pairs is not None:
            inp, out = next(pairs)
            item["input"] = inp.decode("utf-8", errors="replace")
            # A time-only test has no expected output: null, so no local verifier compares with "".
            item["output"] = None if row["kind"] == TIME_ONLY else out.decode("utf-8", errors="replace")
        page.append(item)
    return page
