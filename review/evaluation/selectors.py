"""Reads for the evaluation: which problems, candidates and suites, and their judged outcomes."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from generation.refine.split import candidate_sides, split_keeps
from problems.models import (
    SUPPORTED_LANGUAGES,
    DifficultyLabel,
    Problem,
    Solution,
    TestCase,
    TestSuite,
    Verdict,
)
from review.evaluation.metrics import Outcome, TestRun
from review.models import EvaluationReport

ORIGINS: tuple[str, ...] = tuple(TestSuite.Origin.values)
FILTER_KEYS = ("source", "platform", "pid", "tag", "difficulty", "title")


class EvaluationInputError(ValueError):
    """Bad input from a user (an unknown pid, origin or filter); the message is one line."""


def glob_regex(pattern: str) -> str:
    """A `*`/`?` glob as a regex both SQLite and PostgreSQL understand."""
    return "^" + re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".") + "$"


def problems_filter(expression: str) -> Q:
    """`key=value[,key=value...]`, all of which must hold. Keys: source, platform, pid (a
    glob such as demo/*), tag, difficulty (a level), title (contains, case-insensitive)."""
    query = Q()
    for part in [p.strip() for p in expression.split(",") if p.strip()]:
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not value:
            raise EvaluationInputError(f"filter term {part!r} is not key=value")
        if key == "source":
            query &= Q(source=value)
        elif key == "platform":
            query &= Q(platform=value)
        elif key == "pid":
            query &= Q(pid__regex=glob_regex(value)) if any(c in value for c in "*?") else Q(pid=value)
        elif key == "tag":
            query &= Q(tags__name=value)
        elif key == "difficulty":
            query &= Q(difficulties__level=value)
        elif key == "title":
            query &= Q(title__icontains=value)
        else:
            raise EvaluationInputError(f"unknown filter key {key!r} (use {', '.join(FILTER_KEYS)})")
    return query


def evaluation_problems(*, pids: Sequence[str] = (), filter_expr: str = "") -> QuerySet[Problem]:
    if pids and filter_expr:
        raise EvaluationInputError("give either pids or a filter, not both")
    if pids:
        found = set(Problem.objects.filter(pid__in=pids).values_list("pid", flat=True))
        missing = [p for p in pids if p not in found]
        if missing:
            raise EvaluationInputError(f"unknown pid(s): {', '.join(missing[:5])}")
        return Problem.objects.filter(pid__in=pids).order_by("pid")
    if filter_expr:
        try:
            return Problem.objects.filter(problems_filter(filter_expr)).distinct().order_by("pid")
        except re.error as exc:
            raise EvaluationInputError(f"bad pid pattern: {exc}") from exc
    return Problem.objects.order_by("pid")


def origins_check(origins: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(origins)) or list(ORIGINS)
    unknown = [o for o in chosen if o not in ORIGINS]
    if unknown:
        raise EvaluationInputError(f"unknown origin(s): {', '.join(unknown)} (use {', '.join(ORIGINS)})")
    return chosen


ROLES: tuple[str, ...] = tuple(Solution.Role.values)


def roles_check(roles: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(roles)) or [Solution.Role.CANDIDATE.value]
    unknown = [r for r in chosen if r not in ROLES]
    if unknown:
        raise EvaluationInputError(f"unknown role(s): {', '.join(unknown)} (use {', '.join(ROLES)})")
    return chosen


def evaluation_candidates(
    *, problems: QuerySet[Problem], roles: Sequence[str] = ("candidate",), per_problem: int | None = None,
    split: str = "all",
) -> list[Solution]:
    """Solutions of `roles` (candidates by default) with a known gold verdict, in a language
    the sandbox runs; with per_problem, only the first that many of each problem (by id:
    the same ones every run, so their verdicts are reused). Oracles are only measured when
    asked: imported gold solutions (Klear's) are the only programs some datasets have, but
    a suite whose outputs they voted on is not independent of them. Candidates are kept on the
    chosen side of the tuning/held-out split (generation.refine.split; "all" and "both" keep every
    one); other roles are never tuning data, so they count everywhere but in "tuning"."""
    found = list(
        Solution.objects.filter(problem__in=problems, role__in=list(roles), language__in=SUPPORTED_LANGUAGES)
        .exclude(gold_verdict=Solution.GoldVerdict.UNKNOWN)
        .select_related("problem")
        .order_by("problem__pid", "id")
    )
    if split not in ("all", "both"):
        sides = candidate_sides(problems)
        found = [s for s in found if split_keeps(sides.get(s.pk), split) if s.role == Solution.Role.CANDIDATE
                 ] + [s for s in found if s.role != Solution.Role.CANDIDATE and split != "tuning"]
        found.sort(key=lambda s: (s.problem.pid, s.pk))
    if per_problem is None:
        return found
    taken: dict[int, int] = defaultdict(int)
    kept = []
    for solution in found:
        taken[solution.problem_id] += 1
        if taken[solution.problem_id] <= per_problem:
            kept.append(solution)
    return kept


def evaluation_suites(*, problems: QuerySet[Problem], origins: Sequence[str]) -> list[TestSuite]:
    """The active suite of each chosen origin of each problem (empty suites judge nothing)."""
    return list(
        TestSuite.objects.filter(problem__in=problems, origin__in=origins, status=TestSuite.Status.ACTIVE,
                                 test_count__gt=0)
        .select_related("problem", "output_judge")
        .order_by("problem__pid", "origin")
    )


def verdict_is_current(verdict: Verdict, suite: TestSuite) -> bool:
    """Active suites never change, so a verdict with every test run stays true. A compile
    error is final too: nothing ran, and it fails every test. A sandbox error is not."""
    if verdict.verdict == Verdict.Value.CE:
        return True
    if verdict.verdict == Verdict.Value.SE:
        return False  # the sandbox failed, not the program: judge it again
    return verdict.complete and len(verdict.results) == suite.test_count


@dataclass(frozen=True)
class Pairs:
    wanted: list[tuple[Solution, TestSuite]]
    current: dict[tuple[int, int], Verdict]

    @property
    def missing(self) -> list[tuple[Solution, TestSuite]]:
        return [(s, t) for s, t in self.wanted if (s.pk, t.pk) not in self.current]


def evaluation_pairs(
    *, problems: QuerySet[Problem], origins: Sequence[str], roles: Sequence[str] = ("candidate",),
    per_problem: int | None = None, split: str = "all",
) -> Pairs:
    """Every (candidate, suite) of the same problem, and the current verdicts among them."""
    candidates = evaluation_candidates(problems=problems, roles=roles, per_problem=per_problem, split=split)
    suites = evaluation_suites(problems=problems, origins=origins)
    suites_of: dict[int, list[TestSuite]] = defaultdict(list)
    for suite in suites:
        suites_of[suite.problem_id].append(suite)
    wanted = [(c, s) for c in candidates for s in suites_of.get(c.problem_id, [])]
    by_pk = {s.pk: s for s in suites}
    current = {}
    verdicts = Verdict.objects.filter(solution__in=[c.pk for c in candidates], suite__in=list(by_pk))
    for verdict in verdicts:
        if verdict_is_current(verdict, by_pk[verdict.suite_id]):
            current[(verdict.solution_id, verdict.suite_id)] = verdict
    return Pairs(wanted=wanted, current=current)


def _difficulty_keys(problems: Iterable[int]) -> dict[int, tuple[str, ...]]:
    keys: dict[int, list[str]] = defaultdict(list)
    for problem_id, source, level in DifficultyLabel.objects.filter(problem__in=list(problems)).values_list(
        "problem_id", "source", "level"
    ).order_by("source"):
        keys[problem_id].append(f"{source}:{level}")
    return {pid: tuple(v) for pid, v in keys.items()}


def evaluation_outcomes(*, pairs: Pairs) -> list[Outcome]:
    """Judged outcomes of every wanted pair that has a current verdict."""
    suites = {suite.pk: suite for _, suite in pairs.wanted}
    kinds: dict[int, dict[int, str]] = defaultdict(dict)
    for suite_id, ordinal, kind in TestCase.objects.filter(suite__in=list(suites)).values_list(
        "suite_id", "ordinal", "kind"
    ):
        kinds[suite_id][ordinal] = kind
    difficulty = _difficulty_keys({s.problem_id for s in suites.values()})
    outcomes = []
    for solution, suite in pairs.wanted:
        verdict = pairs.current.get((solution.pk, suite.pk))
        if verdict is None:
            continue
        if verdict.verdict == Verdict.Value.CE:
            runs = tuple(TestRun(o, k, False, 0) for o, k in sorted(kinds[suite.pk].items()))
        else:
            runs = tuple(
                TestRun(int(r["ordinal"]), kinds[suite.pk].get(int(r["ordinal"]), ""), r["verdict"] == "AC",
                        int(r.get("wall_ms") or 0))
                for r in verdict.results
            )
        outcomes.append(Outcome(
            solution_id=solution.pk, suite_id=suite.pk, problem_id=suite.problem_id, origin=suite.origin,
            gold_ac=solution.gold_verdict == Solution.GoldVerdict.AC, tests=runs,
            difficulty=difficulty.get(suite.problem_id, ()), platform=suite.problem.platform,
            candidate_origin=solution.origin,
        ))
    return outcomes


def report_latest() -> EvaluationReport | None:
    # Table 8 reports (review/evaluation/oracle_free.py) have their own section and shape.
    return (EvaluationReport.objects.filter(status=EvaluationReport.Status.DONE)
            .exclude(Q(params__has_key="kind") & Q(params__kind="oracle_free_table8")).first())


def report_in_progress(*, stale_after_s: float = 7 * 3600) -> EvaluationReport | None:
    """The newest unfinished report; one older than any job may run is taken as dead."""
    return EvaluationReport.objects.exclude(
        status__in=[EvaluationReport.Status.DONE, EvaluationReport.Status.FAILED]
    ).filter(created_at__gte=timezone.now() - timedelta(seconds=stale_after_s)).first()
