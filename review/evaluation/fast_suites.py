"""Fast suites and kill order measured on held-out programs (the evaluation page and bench/).

For every active suite with stored complete verdicts (mode "all") of candidates with gold
labels, each known-wrong program is held out in turn: the kill matrix, the kill order and
the fast subset are built from the other programs only (problems/kill_order.py), and the
held-out program is judged against them from its stored per-test results. Known-correct
programs never enter a kill matrix, so they are held out by construction.

Reported, pooled over suites: precision / recall (of "accepted" against gold AC) of the full
suite, of the fast subset, and of random subsets keeping a share of the tests (the HardTests
rebuttal's redundancy experiment); the tests a wrong program runs before its first failure
(median, kind order against kill order); and what fail-fast judging of every program costs
(tests run, and CPU ms from the stored per-test times) in four arms that change one thing at a
time: the full suite in kind order (the baseline), the full suite in kill order (order alone),
the fast subset in kind order (subset alone) and the fast subset in kill order (both). Each
ratio is the baseline over one arm, so a reader never sees two changes folded into one figure.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, field
from typing import Any

from problems.kill_order import TestFacts, fast_subset, first_failure, kill_order, kind_order, random_drop

KEEP_SHARES = (0.2, 0.4, 0.6, 0.8, 1.0)
ARMS = {
    "full_kind": "full suite, kind order (baseline)",
    "full_kill": "full suite, kill order (order alone)",
    "fast_kind": "fast subset, kind order (subset alone)",
    "fast_kill": "fast subset, kill order (both)",
}
RANDOM_SEEDS = 20


@dataclass(frozen=True)
class Program:
    solution_id: int
    correct: bool
    failing: frozenset[int]  # ordinals it fails (every test ran)
    compiled: bool = True  # False: CE, rejected by any subset, runs no test
    times: dict[int, int] = field(default_factory=dict)  # ordinal -> CPU ms of its run


@dataclass(frozen=True)
class SuiteRecord:
    suite_id: int
    problem: str
    tests: list[TestFacts]
    programs: list[Program]


def _kills(programs: list[Program], held_out: int | None) -> dict[int, set[int]]:
    kills: dict[int, set[int]] = {}
    for p in programs:
        if p.correct or p.solution_id == held_out:
            continue
        for ordinal in p.failing:
            kills.setdefault(ordinal, set()).add(p.solution_id)
    return kills


def _accepted(p: Program, keep: set[int] | None) -> bool:
    if not p.compiled:
        return False
    return not (p.failing if keep is None else p.failing & keep)


def _cost(p: Program, order: list[int]) -> tuple[int, int]:
    """(tests run, CPU ms) of fail-fast judging in `order`."""
    if not p.compiled:
        return 0, 0
    stop = first_failure(order, p.failing) or len(order)
    run = order[:stop]
    return len(run), sum(p.times.get(o, 0) for o in run)


class _Counts:
    def __init__(self) -> None:
        self.tp = self.fp = self.fn = 0

    def add(self, accepted: bool, correct: bool) -> None:
        self.tp += accepted and correct
        self.fp += accepted and not correct
        self.fn += (not accepted) and correct

    def pr(self) -> tuple[float | None, float | None]:
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else None
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else None
        return precision, recall


def fast_suite_report(records: list[SuiteRecord], *, min_kills: int | None = None) -> dict[str, Any]:
    """The figures of the module's docstring; `min_kills` as HARDTESTS_KILL_ORDER_MIN_KILLS (its default)."""
    if min_kills is None:
        from django.conf import settings

        min_kills = int(settings.HARDTESTS_KILL_ORDER_MIN_KILLS)
    full, fast = _Counts(), _Counts()
    drops = {share: [_Counts() for _ in range(RANDOM_SEEDS)] for share in KEEP_SHARES}
    kind_runs: list[int] = []
    kill_runs: list[int] = []
    # [tests run, CPU ms] per arm
    arms: dict[str, list[int]] = {arm: [0, 0] for arm in ARMS}
    sizes: list[tuple[int, int]] = []
    suites = programs = 0
    for record in records:
        wrong = [p for p in record.programs if not p.correct]
        if not wrong or not record.tests:
            continue
        suites += 1
        programs += len(record.programs)
        by_kind = kind_order(record.tests)
        everyone = _kills(record.programs, None)
        sizes.append((len(fast_subset(record.tests, everyone, kill_order(record.tests, everyone, min_kills)) or by_kind),
                      len(record.tests)))
        ordinals = [t.ordinal for t in record.tests]
        for p in record.programs:
            kills = _kills(record.programs, p.solution_id)
            order = kill_order(record.tests, kills, min_kills) if kills else by_kind
            subset = fast_subset(record.tests, kills, order)
            fast_tests = subset or order
            full.add(_accepted(p, None), p.correct)
            fast.add(_accepted(p, set(fast_tests)), p.correct)
            for share, counts in drops.items():
                for seed, c in enumerate(counts):
                    c.add(_accepted(p, random_drop(ordinals, share, random.Random(seed * 7919 + p.solution_id))),
                          p.correct)
            if not p.correct and p.compiled and p.failing:
                kind_runs.append(first_failure(by_kind, p.failing) or len(by_kind))
                kill_runs.append(first_failure(order, p.failing) or len(order))
            kept = set(fast_tests)
            orders = {"full_kind": by_kind, "full_kill": order,
                      "fast_kind": [o for o in by_kind if o in kept], "fast_kill": fast_tests}
            for arm, arm_order in orders.items():
                tests_run, cpu_ms = _cost(p, arm_order)
                arms[arm][0] += tests_run
                arms[arm][1] += cpu_ms
    curve = []
    for share, counts in drops.items():
        prs = [c.pr() for c in counts]
        ps = [p for p, _ in prs if p is not None]
        rs = [r for _, r in prs if r is not None]
        curve.append({"keep": share, "precision": statistics.fmean(ps) if ps else None,
                      "recall": statistics.fmean(rs) if rs else None})
    median_kind = statistics.median(kind_runs) if kind_runs else None
    median_kill = statistics.median(kill_runs) if kill_runs else None
    return {
        "suites": suites,
        "programs": programs,
        "full": dict(zip(("precision", "recall"), full.pr(), strict=True)),
        "fast": dict(zip(("precision", "recall"), fast.pr(), strict=True)),
        "fast_tests": sum(a for a, _ in sizes),
        "full_tests": sum(b for _, b in sizes),
        "random_drop": curve,
        "wrong_programs": len(kind_runs),
        "median_tests_to_failure_kind": median_kind,
        "median_tests_to_failure_kill": median_kill,
        "median_ratio": (median_kind / median_kill) if median_kind and median_kill else None,
        **{f"tests_run_{arm}": arms[arm][0] for arm in ARMS},
        **{f"cpu_ms_{arm}": arms[arm][1] for arm in ARMS},
        "speedup_tests": _ratio(arms["full_kind"][0], arms["fast_kill"][0]),
        "speedup_cpu": _ratio(arms["full_kind"][1], arms["fast_kill"][1]),
        # one change at a time against the baseline (full suite, kind order)
        "arms": [{"arm": arm, "label": label, "tests_run": arms[arm][0], "cpu_ms": arms[arm][1],
                  "fewer_tests": _ratio(arms["full_kind"][0], arms[arm][0]),
                  "less_cpu": _ratio(arms["full_kind"][1], arms[arm][1])}
                 for arm, label in ARMS.items()],
    }


def _ratio(baseline: int, other: int) -> float | None:
    return baseline / other if other else None


def fast_suite_records(*, suite_ids: list[int] | None = None, limit: int | None = None) -> list[SuiteRecord]:
    """Active suites' tests and the complete verdicts of their candidates with gold labels (the
    `limit` most recently activated, when given)."""
    from problems.kill_order import failing_tests, suite_test_facts
    from problems.matrix import gold_expectation
    from problems.models import Solution, TestSuite, Verdict

    # a suite no known-wrong program failed has no kill order and no fast subset to measure
    suites = TestSuite.objects.filter(status=TestSuite.Status.ACTIVE).exclude(judge_order=[]).select_related("problem")
    if suite_ids is not None:
        suites = suites.filter(pk__in=suite_ids)
    records = []
    suites = suites.order_by("-activated_at", "-pk")
    for suite in suites[:limit] if limit is not None else suites:
        verdicts = (Verdict.objects.filter(suite=suite, solution__role=Solution.Role.CANDIDATE)
                    .select_related("solution").only("verdict", "complete", "results", "solution__gold_verdict",
                                                     "solution__role"))
        programs = []
        for v in verdicts:
            known = gold_expectation(v.solution)
            if known is None or v.verdict == "SE" or not (v.complete or v.verdict == "CE"):
                continue
            results = [r for r in v.results or [] if isinstance(r, dict) and "ordinal" in r]
            programs.append(Program(v.solution_id, known, frozenset(failing_tests(results)), v.verdict != "CE",
                                    {int(r["ordinal"]): int(r.get("time_ms") or 0) for r in results}))
        if programs:
            records.append(SuiteRecord(suite.pk, f"{suite.problem.source}:{suite.problem.pid}",
                                       suite_test_facts(suite), programs))
    return records
