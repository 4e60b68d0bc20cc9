"""One problem's page: its suites, their statistics and differences, kits, code versions, solutions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Sum

from problems.models import (
    InputValidator,
    OutputJudge,
    Problem,
    Solution,
    TestCase,
    TestKit,
    TestSuite,
    Verdict,
)
from problems.selectors.common import ORIGIN_PREFERENCE


def problem_get(pk: int) -> Problem:
    from django.db.models import Exists, OuterRef
    from django.shortcuts import get_object_or_404

    from problems.models import SUPPORTED_LANGUAGES, Solution

    # What the page says is missing (problem_tags.solution_gaps), in the same query.
    mine = Solution.objects.filter(problem=OuterRef("pk"))
    return get_object_or_404(Problem.objects.prefetch_related("tags", "difficulties").annotate(
        has_usable_oracle=Exists(mine.filter(role=Solution.Role.ORACLE, language__in=SUPPORTED_LANGUAGES)),
        has_gold_candidate=Exists(mine.filter(role=Solution.Role.CANDIDATE).exclude(
            gold_verdict=Solution.GoldVerdict.UNKNOWN)),
    ), pk=pk)


def problem_suites(problem: Problem) -> list[TestSuite]:
    return list(
        problem.suites.order_by("-version").only(
            "id", "problem_id", "version", "status", "origin", "test_count", "total_bytes",
            "counts_by_kind", "created_at", "activated_at", "note", "kit_id", "validator_id", "output_judge_id",
            "unverified", "trust",
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
    rows_a = list(a.tests.values_list("input_sha256", "output_sha256", "ordinal"))
    rows_b = list(b.tests.values_list("input_sha256", "output_sha256", "ordinal"))
    in_a = {i: o for i, o, _ in rows_a}
    in_b = {i: o for i, o, _ in rows_b}
    added = sorted(set(in_b) - set(in_a))
    removed = sorted(set(in_a) - set(in_b))
    common = set(in_a) & set(in_b)
    changed = sum(1 for key in common if in_a[key] != in_b[key])
    fields = ("id", "suite_id", "ordinal", "kind", "generator", "input_size", "input_preview", "output_size")
    added_tests = list(b.tests.filter(input_sha256__in=added[:show]).only(*fields).order_by("ordinal"))
    removed_tests = list(a.tests.filter(input_sha256__in=removed[:show]).only(*fields).order_by("ordinal"))
    by_solution: dict[int, dict[str, Any]] = {}
    for v in Verdict.objects.filter(suite__in=[a, b]).select_related("solution").only(
        "suite_id", "verdict", "passed", "total", "results", "solution__id", "solution__name", "solution__role",
        "solution__language", "solution__gold_verdict",
    ):
        entry = by_solution.setdefault(v.solution_id, {"solution": v.solution, "a": None, "b": None})
        entry["a" if v.suite_id == a.pk else "b"] = v
    # Tests present in both versions with the same input and the same expected output: a verdict
    # that differs there did not come from the suite's change but from the run (timing, mostly).
    same = {key for key in common if in_a[key] == in_b[key]}
    ordinal_a = {o: i for i, _, o in rows_a if i in same}
    ordinal_b = {o: i for i, _, o in rows_b if i in same}
    verdicts = []
    for entry in by_solution.values():
        va, vb = entry["a"], entry["b"]
        entry["changed"] = (va.verdict if va else None) != (vb.verdict if vb else None)
        entry["flipped"] = _flipped_on_unchanged_tests(va, vb, ordinal_a, ordinal_b) if va and vb else []
        entry["timing_sensitive"] = bool(entry["flipped"])
        verdicts.append(entry)
    verdicts.sort(key=lambda e: (not e["changed"], e["solution"].role, e["solution"].pk))
    return SuiteDiff(a, b, len(added), len(removed), changed, len(common) - changed, added_tests, removed_tests,
                     verdicts)


def _flipped_on_unchanged_tests(va: Verdict, vb: Verdict, ordinal_a: dict[int, str],
                                ordinal_b: dict[int, str]) -> list[dict[str, Any]]:
    """Unchanged tests (same input, same expected output) on which the program's verdict differs
    between the two versions: [{"ordinal_a", "ordinal_b", "a", "b"}] (at most 20)."""
    def by_input(results: Any, ordinals: dict[Any, str]) -> dict[str, tuple[int, str]]:
        out: dict[str, tuple[int, str]] = {}
        for r in results or []:
            key = ordinals.get(r.get("ordinal")) if isinstance(r, dict) else None
            if key is not None and r.get("verdict"):
                out[key] = (r["ordinal"], r["verdict"])
        return out

    left, right = by_input(va.results, ordinal_a), by_input(vb.results, ordinal_b)
    flips: list[dict[str, Any]] = [
        {"ordinal_a": left[k][0], "ordinal_b": right[k][0], "a": left[k][1], "b": right[k][1]}
        for k in left.keys() & right.keys() if left[k][1] != right[k][1]]
    return sorted(flips, key=lambda f: f["ordinal_b"])[:20]


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
