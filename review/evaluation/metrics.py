"""Suites as classifiers: pure functions over judged outcomes (no Django, no database).

A program is *predicted positive* by a suite when it passes every test of it (or, for the
tau sweep, a fraction of tests >= tau); it is *gold positive* when its known verdict is AC.
So TP = gold AC and passes, FP = gold not-AC and passes (a wrong program the suite lets
through), TN = gold not-AC and fails, FN = gold AC and fails (a right program rejected).

Every ratio whose denominator is zero is *undefined* and is returned as None, never as 0:
no predicted positives -> precision undefined; no gold positives -> recall/TPR undefined;
no gold negatives -> TNR undefined; F1 is undefined when precision or recall is.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# 0.1-1.0 as in the verification-limits paper, which also uses tau to select training data.
TAUS: tuple[float, ...] = tuple(round(0.1 * k, 1) for k in range(1, 11))
KEEP_PERCENTS: tuple[int, ...] = (100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 5)
SEEDS = 20
# The paper's table 1, cumulative: direct only; + regular/stratified; everything.
KIND_LEVELS: tuple[tuple[str, frozenset[str] | None], ...] = (
    ("direct", frozenset({"direct"})),
    ("direct+regular", frozenset({"direct", "regular", "stratified"})),
    ("all", None),
)
COST_MODES = ("all_tests", "fail_fast_suite_order", "fail_fast_hacking_first")


@dataclass(frozen=True)
class TestRun:
    ordinal: int
    kind: str
    passed: bool
    wall_ms: int = 0


@dataclass(frozen=True)
class Outcome:
    """One candidate judged against one suite with every test run (a complete verdict)."""

    solution_id: int
    suite_id: int
    problem_id: int
    origin: str
    gold_ac: bool
    tests: tuple[TestRun, ...]
    difficulty: tuple[str, ...] = ()
    platform: str = ""
    candidate_origin: str = ""  # who wrote the candidate (Solution.origin): "human" or a model

    def passes(self, kinds: frozenset[str] | None = None) -> bool | None:
        """Passes every test (of `kinds`); None when the suite has no such test."""
        runs = self.tests if kinds is None else [t for t in self.tests if t.kind in kinds]
        if not runs:
            return None
        return all(t.passed for t in runs)

    def pass_fraction(self) -> float | None:
        if not self.tests:
            return None
        return sum(t.passed for t in self.tests) / len(self.tests)


@dataclass(frozen=True)
class Confusion:
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0

    def add(self, *, gold: bool, predicted: bool) -> Confusion:
        if gold and predicted:
            return Confusion(self.tp + 1, self.fp, self.tn, self.fn)
        if predicted:
            return Confusion(self.tp, self.fp + 1, self.tn, self.fn)
        if gold:
            return Confusion(self.tp, self.fp, self.tn, self.fn + 1)
        return Confusion(self.tp, self.fp, self.tn + 1, self.fn)

    @classmethod
    def of(cls, pairs: Iterable[tuple[bool, bool]]) -> Confusion:
        """From (gold positive, predicted positive) pairs."""
        tp = fp = tn = fn = 0
        for gold, predicted in pairs:
            if gold and predicted:
                tp += 1
            elif predicted:
                fp += 1
            elif gold:
                fn += 1
            else:
                tn += 1
        return cls(tp, fp, tn, fn)


def ratio(numerator: float, denominator: float) -> float | None:
    return None if denominator == 0 else numerator / denominator


def classifier_metrics(c: Confusion) -> dict[str, Any]:
    precision = ratio(c.tp, c.tp + c.fp)
    recall = ratio(c.tp, c.tp + c.fn)
    # 2TP / (2TP + FP + FN) is the harmonic mean of P and R, and is 0 (not undefined) when
    # both are defined and zero; it is only undefined when P or R is.
    f1 = None if precision is None or recall is None else ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn)
    return {
        "tp": c.tp,
        "fp": c.fp,
        "tn": c.tn,
        "fn": c.fn,
        "n": c.tp + c.fp + c.tn + c.fn,
        "gold_positive": c.tp + c.fn,
        "gold_negative": c.tn + c.fp,
        "predicted_positive": c.tp + c.fp,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "tpr": recall,
        "tnr": ratio(c.tn, c.tn + c.fp),
    }


Predict = Callable[[Outcome], "bool | None"]


def _all_pass(outcome: Outcome) -> bool | None:
    return outcome.passes()


def summarise(outcomes: Iterable[Outcome], predict: Predict = _all_pass) -> dict[str, Any]:
    """Metrics and counts of a set of outcomes; outcomes the prediction skips (None) are left out."""
    pairs: list[tuple[bool, bool]] = []
    suites: set[int] = set()
    problems: set[int] = set()
    for outcome in outcomes:
        predicted = predict(outcome)
        if predicted is None:
            continue
        pairs.append((outcome.gold_ac, predicted))
        suites.add(outcome.suite_id)
        problems.add(outcome.problem_id)
    return {**classifier_metrics(Confusion.of(pairs)), "suites": len(suites), "problems": len(problems)}


def group_by(outcomes: Iterable[Outcome], keys: Callable[[Outcome], Iterable[str]]) -> dict[str, list[Outcome]]:
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        for key in keys(outcome):
            groups[key].append(outcome)
    return dict(sorted(groups.items()))


def by_origin(outcomes: Sequence[Outcome], predict: Predict = _all_pass) -> dict[str, dict[str, Any]]:
    return {origin: summarise(group, predict) for origin, group in group_by(outcomes, lambda o: [o.origin]).items()}


def by_origin_and(
    outcomes: Sequence[Outcome], keys: Callable[[Outcome], Iterable[str]], predict: Predict = _all_pass
) -> dict[str, dict[str, dict[str, Any]]]:
    """{origin: {key: metrics}}; an outcome may fall under several keys (e.g. two difficulty labels)."""
    return {
        origin: {key: summarise(sub, predict) for key, sub in group_by(group, keys).items()}
        for origin, group in group_by(outcomes, lambda o: [o.origin]).items()
    }


def difficulty_keys(outcome: Outcome) -> Sequence[str]:
    return outcome.difficulty or ("unlabelled",)


def platform_keys(outcome: Outcome) -> Sequence[str]:
    return (outcome.platform or "unknown",)


def _passes_with(kinds: frozenset[str] | None) -> Predict:
    return lambda o: o.passes(kinds)


def kind_ablation(outcomes: Sequence[Outcome]) -> dict[str, dict[str, dict[str, Any]]]:
    """{origin: {level: metrics}} with a suite's tests restricted to the level's kinds.

    A suite with no test of a level's kinds is left out of that level (its counts show it),
    since "passes no tests" would make every program positive.
    """
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for origin, group in group_by(outcomes, lambda o: [o.origin]).items():
        result[origin] = {
            level: summarise(group, _passes_with(kinds)) for level, kinds in KIND_LEVELS
        }
    return result


def passes_at(tau: float) -> Predict:
    def predict(outcome: Outcome) -> bool | None:
        fraction = outcome.pass_fraction()
        # Compare with a small tolerance: 7/10 >= 0.7 must hold despite binary floats.
        return None if fraction is None else fraction >= tau - 1e-9

    return predict


def tau_sweep(outcomes: Sequence[Outcome], taus: Sequence[float] = TAUS) -> dict[str, dict[str, dict[str, Any]]]:
    """{origin: {"0.5": metrics, ...}}: positive when the pass fraction >= tau."""
    return {
        origin: {f"{tau:.1f}": summarise(group, passes_at(tau)) for tau in taus}
        for origin, group in group_by(outcomes, lambda o: [o.origin]).items()
    }


def kept_count(n: int, percent: float) -> int:
    """Tests kept when `percent`% of a suite of n is kept: rounded up, at least one."""
    return max(1, min(n, math.ceil(n * percent / 100 - 1e-9)))


def _mean(values: Sequence[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def subsample_curve(
    outcomes: Sequence[Outcome], percents: Sequence[int] = KEEP_PERCENTS, seeds: int = SEEDS
) -> dict[str, list[dict[str, Any]]]:
    """{origin: [{percent, precision, recall, ...}, ...]}: keep a random percent of each suite.

    For each seed, every suite keeps the same random subset for all its programs; precision
    and recall are computed per seed over the origin and then averaged over the seeds where
    they are defined (`precision_seeds` / `recall_seeds` say how many).
    """
    by_suite: dict[int, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        if outcome.tests:
            by_suite[outcome.suite_id].append(outcome)
    # Per suite: a programs x tests matrix of passes (tests in ordinal order) and gold labels.
    matrices: dict[str, list[tuple[int, np.ndarray, np.ndarray]]] = defaultdict(list)
    for suite_id, group in sorted(by_suite.items()):
        ordinals = sorted({t.ordinal for o in group for t in o.tests})
        column = {ordinal: i for i, ordinal in enumerate(ordinals)}
        passed = np.zeros((len(group), len(ordinals)), dtype=bool)
        for row, outcome in enumerate(group):
            for run in outcome.tests:
                passed[row, column[run.ordinal]] = run.passed
        gold = np.array([o.gold_ac for o in group], dtype=bool)
        matrices[group[0].origin].append((suite_id, passed, gold))
    curve: dict[str, list[dict[str, Any]]] = {}
    for origin, suites in sorted(matrices.items()):
        points = []
        for percent in percents:
            precisions: list[float | None] = []
            recalls: list[float | None] = []
            totals = np.zeros(4)
            for seed in range(seeds):
                tp = fp = tn = fn = 0
                for suite_id, passed, gold in suites:
                    n = passed.shape[1]
                    rng = np.random.default_rng([seed, suite_id])
                    keep = rng.choice(n, size=kept_count(n, percent), replace=False)
                    predicted = passed[:, keep].all(axis=1)
                    tp += int((predicted & gold).sum())
                    fp += int((predicted & ~gold).sum())
                    tn += int((~predicted & ~gold).sum())
                    fn += int((~predicted & gold).sum())
                totals += (tp, fp, tn, fn)
                m = classifier_metrics(Confusion(tp, fp, tn, fn))
                precisions.append(m["precision"])
                recalls.append(m["recall"])
            mean_tp, mean_fp, mean_tn, mean_fn = (totals / seeds).tolist()
            points.append({
                "percent": percent,
                "precision": _mean(precisions),
                "recall": _mean(recalls),
                "precision_seeds": sum(p is not None for p in precisions),
                "recall_seeds": sum(r is not None for r in recalls),
                "mean_tp": mean_tp, "mean_fp": mean_fp, "mean_tn": mean_tn, "mean_fn": mean_fn,
            })
        curve[origin] = points
    return curve


def percentile_nearest_rank(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank percentile: the smallest value with at least q% of values <= it
    (numpy's inverted_cdf method)."""
    if not values:
        return None
    return float(np.percentile(values, q, method="inverted_cdf"))


def verification_seconds(outcome: Outcome, mode: str, kind_order: Mapping[str, int]) -> float:
    """Seconds of test runs to verify one program (compilation not included).

    all_tests: every test; fail_fast_suite_order: tests in ordinal order, stopping after
    the first failure; fail_fast_hacking_first: the same with hacking tests first
    (`kind_order`, as the judge runs them).
    """
    if mode == "all_tests":
        return sum(t.wall_ms for t in outcome.tests) / 1000
    if mode == "fail_fast_suite_order":
        order = sorted(outcome.tests, key=lambda t: t.ordinal)
    elif mode == "fail_fast_hacking_first":
        order = sorted(outcome.tests, key=lambda t: (kind_order.get(t.kind, len(kind_order)), t.ordinal))
    else:
        raise ValueError(f"unknown cost mode {mode!r}")
    total = 0
    for run in order:
        total += run.wall_ms
        if not run.passed:
            break
    return total / 1000


def cost_summary(outcomes: Sequence[Outcome], kind_order: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    """{origin: {mode: {mean_s, p95_s, n}}} of seconds to verify one program against a suite."""
    result: dict[str, dict[str, Any]] = {}
    for origin, group in group_by(outcomes, lambda o: [o.origin]).items():
        result[origin] = {}
        for mode in COST_MODES:
            seconds = [verification_seconds(o, mode, kind_order) for o in group]
            result[origin][mode] = {
                "n": len(seconds),
                "mean_s": sum(seconds) / len(seconds) if seconds else None,
                "p95_s": percentile_nearest_rank(seconds, 95),
            }
    return result
