"""Problems with everything an exporter writes, loaded a chunk at a time.

Each chunk costs a fixed number of queries; test bodies are read from blob storage only
when an exporter asks for them, one test at a time, so memory stays flat however large the
catalogue is.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, QuerySet

from problems.blobs import blob_pairs
from problems.models import (
    DifficultyLabel,
    Problem,
    ProblemAlias,
    Solution,
    TestCase,
    TestKit,
    TestSuite,
)

CHUNK = 200
FILTER_KEYS = ("source", "platform", "pid", "tag", "difficulty", "has_kit", "suite", "limit")


class FilterError(ValueError):
    """An --filter the exporter cannot apply; the message names it."""


@dataclass
class Bundle:
    problem: Problem
    tags: list[str]
    labels: list[DifficultyLabel]
    solutions: list[Solution]
    kit: TestKit | None
    suites: dict[str, TestSuite]
    tests: dict[str, list[TestCase]] = field(default_factory=dict)
    aliases: list[ProblemAlias] = field(default_factory=list)

    def suite_for(self, origins: tuple[str, ...]) -> tuple[str, list[TestCase]] | None:
        """The first active suite among ``origins``, in that order of preference."""
        for origin in origins:
            if origin in self.suites:
                return origin, self.tests.get(origin, [])
        return None


def test_bodies(tests: list[TestCase]) -> Iterator[tuple[bytes, bytes]]:
    """(input, output) of each test, in order; inline bodies come in batches, not one query each."""
    return blob_pairs((t.input_sha256, t.output_sha256) for t in tests)


def problems_select(filters: list[str]) -> tuple[QuerySet[Problem], int | None]:
    """Problems matching ``key=value`` filters (ANDed; a key given twice is ORed), and a limit."""
    by_key: dict[str, list[str]] = defaultdict(list)
    for item in filters:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep and key in ("has_kit",):
            value = "true"
        elif not sep or key not in FILTER_KEYS:
            raise FilterError(f"--filter {item!r}: expected KEY=VALUE with KEY one of {', '.join(FILTER_KEYS)}")
        by_key[key].append(value.strip())
    qs = Problem.objects.all()
    for key, values in by_key.items():
        if key == "source":
            qs = qs.filter(source__in=values)
        elif key == "platform":
            qs = qs.filter(platform__in=values)
        elif key == "pid":
            qs = qs.filter(pid__in=values)
        elif key == "tag":
            qs = qs.filter(tags__name__in=values)
        elif key == "difficulty":
            q = Q()
            for value in values:
                source, _, level = value.rpartition(":")
                q |= Q(difficulties__level=level, **({"difficulties__source": source} if source else {}))
            qs = qs.filter(q)
        elif key == "has_kit":
            qs = qs.filter(kits__isnull=values[-1].lower() not in ("true", "1", "yes"))
        elif key == "suite":
            qs = qs.filter(suites__status=TestSuite.Status.ACTIVE, suites__origin__in=values)
    limit = None
    if "limit" in by_key:
        try:
            limit = int(by_key["limit"][-1])
        except ValueError:
            raise FilterError(f"--filter limit={by_key['limit'][-1]!r}: not a number") from None
    return qs.distinct().order_by("source", "pid"), limit


def bundles(qs: QuerySet[Problem], *, limit: int | None = None, with_tests: bool = True) -> Iterator[Bundle]:
    ids = list(qs.values_list("pk", flat=True)[:limit] if limit is not None else qs.values_list("pk", flat=True))
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        problems = Problem.objects.in_bulk(chunk)
        tags: dict[int, list[str]] = defaultdict(list)
        for problem_id, name in Problem.tags.through.objects.filter(problem_id__in=chunk).values_list(
            "problem_id", "tag__name"
        ):
            tags[problem_id].append(name)
        labels: dict[int, list[DifficultyLabel]] = defaultdict(list)
        for label in DifficultyLabel.objects.filter(problem_id__in=chunk).order_by("source"):
            labels[label.problem_id].append(label)
        solutions: dict[int, list[Solution]] = defaultdict(list)
        for sol in Solution.objects.filter(problem_id__in=chunk):
            solutions[sol.problem_id].append(sol)
        kits: dict[int, TestKit] = {}
        for kit in TestKit.objects.filter(problem_id__in=chunk).select_related("validator", "output_judge").order_by(
            "problem_id", "-version"
        ):
            kits.setdefault(kit.problem_id, kit)
        suites: dict[int, dict[str, TestSuite]] = defaultdict(dict)
        by_suite: dict[int, TestSuite] = {}
        for suite in TestSuite.objects.filter(problem_id__in=chunk, status=TestSuite.Status.ACTIVE):
            suites[suite.problem_id][suite.origin] = suite
            by_suite[suite.pk] = suite
        tests: dict[int, list[TestCase]] = defaultdict(list)
        if with_tests and by_suite:
            for test in TestCase.objects.filter(suite_id__in=by_suite).order_by("suite_id", "ordinal").defer(
                "input_preview", "output_preview"
            ):
                tests[test.suite_id].append(test)
        aliases: dict[int, list[ProblemAlias]] = defaultdict(list)
        for alias in ProblemAlias.objects.filter(problem_id__in=chunk).order_by("source", "pid"):
            aliases[alias.problem_id].append(alias)
        for pk in chunk:
            yield Bundle(
                problem=problems[pk],
                tags=sorted(tags[pk]),
                labels=labels[pk],
                solutions=sorted(solutions[pk], key=solution_order),
                kit=kits.get(pk),
                suites=suites[pk],
                tests={origin: tests[s.pk] for origin, s in suites[pk].items()},
                aliases=aliases[pk],
            )


def solution_order(sol: Solution) -> tuple[Any, ...]:
    # Independent of database ids, so an export after a re-import lists them the same way.
    return (sol.role, sol.reliability is None, sol.reliability or 0, sol.source, sol.language, sol.code_sha256)
