"""Tables in the papers' layouts (pure; no Django).

HardTests reports, per suite origin (rows), precision and recall for each difficulty level
of one rating source (columns) and an "average" column that is the plain mean of the level
columns, split by which model wrote the candidate programs. CodeContests-O averages TPR/TNR
per problem. Both readings are here, each labelled:

- macro: the metric of each problem's candidates, averaged over the problems where it is
  defined (a problem with no predicted positive has no precision and is left out of the
  precision mean, not counted as 0);
- micro: every candidate of the column pooled into one confusion matrix.

Suite origins are compared on the same problems by default: a problem counts only when every
compared origin has judged outcomes on it; the others are counted as excluded. Problems
without a label of the chosen source fall in an "unlabelled" column that the average leaves
out; the "all" column takes every compared problem.

The verification-limits paper also uses tau to *select training data*: a program is kept as
a positive when it passes at least tau of its problem's tests. `tau_selection` says how many
candidates each tau keeps and how many of those are truly correct (precision of the kept set).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from review.evaluation.metrics import TAUS, Confusion, Outcome, classifier_metrics, passes_at

PAPER_METRICS: tuple[str, ...] = ("precision", "recall", "f1")
AGGREGATIONS: tuple[str, ...] = ("macro", "micro")
AVERAGE = "average"
ALL = "all"
UNLABELLED = "unlabelled"
ALL_CANDIDATES = "all"
AGGREGATION_LABELS = {
    "macro": "macro: mean over problems of each problem's value",
    "micro": "micro: all candidates of the column pooled",
}

OutcomeFilter = Callable[[Outcome], bool]


def _natural(text: str) -> tuple[Any, ...]:
    """'2' < '10', and 'Div. 2' < 'Div. 10'."""
    return tuple(int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text))


def difficulty_levels(outcomes: Iterable[Outcome], source: str) -> list[str]:
    prefix = f"{source}:"
    found = {key[len(prefix):] for o in outcomes for key in o.difficulty if key.startswith(prefix)}
    return sorted(found, key=_natural)


def default_difficulty_source(outcomes: Sequence[Outcome]) -> str:
    """The rating source that labels the most problems ('' when none is labelled)."""
    labelled: dict[str, set[int]] = defaultdict(set)
    for o in outcomes:
        for key in o.difficulty:
            labelled[key.split(":", 1)[0]].add(o.problem_id)
    if not labelled:
        return ""
    return min(labelled, key=lambda s: (-len(labelled[s]), s))


def same_problems(outcomes: Sequence[Outcome], origins: Sequence[str]) -> tuple[set[int], set[int]]:
    """(problems every origin has outcomes on, the other problems that have any outcome)."""
    have: dict[int, set[str]] = defaultdict(set)
    for o in outcomes:
        have[o.problem_id].add(o.origin)
    kept = {p for p, seen in have.items() if all(origin in seen for origin in origins)}
    return kept, set(have) - kept


def _level_of(outcome: Outcome, source: str) -> str:
    prefix = f"{source}:"
    for key in outcome.difficulty:
        if key.startswith(prefix):
            return key[len(prefix):]
    return UNLABELLED


def _mean(values: Iterable[float | None]) -> tuple[float | None, int]:
    defined = [v for v in values if v is not None]
    return (sum(defined) / len(defined) if defined else None), len(defined)


def _cell(outcomes: Sequence[Outcome], metric: str, aggregation: str) -> dict[str, Any]:
    """{value, problems, defined}: defined = problems whose value entered a macro mean (for
    micro, the problems pooled)."""
    problems: dict[int, list[tuple[bool, bool]]] = defaultdict(list)
    for o in outcomes:
        predicted = o.passes()
        if predicted is not None:
            problems[o.problem_id].append((o.gold_ac, predicted))
    if aggregation == "micro":
        value = classifier_metrics(Confusion.of(p for pairs in problems.values() for p in pairs))[metric]
        return {"value": value, "problems": len(problems), "defined": len(problems) if value is not None else 0}
    value, defined = _mean(classifier_metrics(Confusion.of(pairs))[metric] for pairs in problems.values())
    return {"value": value, "problems": len(problems), "defined": defined}


def paper_tables(
    outcomes: Sequence[Outcome], *, difficulty_source: str | None = None, origins: Sequence[str] = (),
    levels: Sequence[str] = (), by_candidate_origin: bool = True, same_problems_only: bool = True,
    keep: OutcomeFilter | None = None,
) -> dict[str, Any]:
    """The HardTests layout: for each aggregation and candidate group, one table per metric
    with a row per suite origin and a column per difficulty level, then "average" (plain
    mean of the level columns where defined) and "all".

    `origins` fixes the compared suite origins (default: those with outcomes); `keep`
    narrows the outcomes first (e.g. a tuning/held-out split of the candidates).
    """
    chosen = [o for o in outcomes if keep is None or keep(o)]
    compared = list(dict.fromkeys(origins)) or sorted({o.origin for o in chosen})
    chosen = [o for o in chosen if o.origin in compared]
    if same_problems_only:
        kept, excluded = same_problems(chosen, compared)
        chosen = [o for o in chosen if o.problem_id in kept]
    else:
        kept, excluded = {o.problem_id for o in chosen}, set()
    source = default_difficulty_source(chosen) if difficulty_source is None else difficulty_source
    level_columns = list(levels) or (difficulty_levels(chosen, source) if source else [])
    has_unlabelled = any(_level_of(o, source) not in level_columns for o in chosen) if level_columns else False
    columns = [*level_columns, *([UNLABELLED] if has_unlabelled else []), *([AVERAGE] if level_columns else []), ALL]
    groups = [ALL_CANDIDATES]
    candidate_origins = sorted({o.candidate_origin for o in chosen if o.candidate_origin})
    if by_candidate_origin and len(candidate_origins) > 1:  # one origin would repeat the "all" table
        groups += candidate_origins
    tables = []
    for aggregation in AGGREGATIONS:
        for group in groups:
            members = [o for o in chosen if group == ALL_CANDIDATES or o.candidate_origin == group]
            metrics_rows: dict[str, list[dict[str, Any]]] = {m: [] for m in PAPER_METRICS}
            for origin in compared:
                mine = [o for o in members if o.origin == origin]
                by_column: dict[str, list[Outcome]] = defaultdict(list)
                for o in mine:
                    level = _level_of(o, source) if level_columns else UNLABELLED
                    by_column[level if level in level_columns else UNLABELLED].append(o)
                for metric in PAPER_METRICS:
                    cells = {column: _cell(by_column[column], metric, aggregation)
                             for column in [*level_columns, *([UNLABELLED] if has_unlabelled else [])]}
                    if level_columns:
                        value, defined = _mean(cells[c]["value"] for c in level_columns)
                        cells[AVERAGE] = {"value": value, "problems": sum(cells[c]["problems"] for c in level_columns),
                                          "defined": defined}
                    cells[ALL] = _cell(mine, metric, aggregation)
                    metrics_rows[metric].append({"origin": origin, "cells": [cells[c] for c in columns]})
            tables.append({
                "name": f"{aggregation}-{group}",
                "aggregation": aggregation,
                "aggregation_label": AGGREGATION_LABELS[aggregation],
                "candidates": group,
                "programs": len({o.solution_id for o in members}),
                "metrics": metrics_rows,
            })
    return {
        "layout": "hardtests",
        "difficulty_source": source,
        "columns": columns,
        "origins": compared,
        "same_problems": same_problems_only,
        "problems_compared": len(kept),
        "problems_excluded": len(excluded),
        "definitions": {
            AVERAGE: "plain mean of the difficulty-level columns where defined (as in HardTests); 'defined' "
                     "counts the columns that entered it",
            ALL: "every compared problem in one column",
            UNLABELLED: f"problems without a {source or 'difficulty'} label; left out of the average",
            "same_problems": "only problems where every compared suite origin has judged outcomes",
            **AGGREGATION_LABELS,
        },
        "tables": tables,
    }


def tau_selection(
    outcomes: Sequence[Outcome], taus: Sequence[float] = TAUS, keep: OutcomeFilter | None = None
) -> dict[str, list[dict[str, Any]]]:
    """{suite origin: [{tau, kept, correct, precision, gold_positive, recall}, ...]}: the
    candidates a tau keeps as positives (pass fraction >= tau) and how many are gold AC."""
    chosen = [o for o in outcomes if keep is None or keep(o)]
    result: dict[str, list[dict[str, Any]]] = {}
    for origin in sorted({o.origin for o in chosen}):
        mine = [o for o in chosen if o.origin == origin]
        rows = []
        for tau in taus:
            predict = passes_at(tau)
            c = Confusion.of((o.gold_ac, bool(predict(o))) for o in mine if predict(o) is not None)
            m = classifier_metrics(c)
            rows.append({"tau": f"{tau:.1f}", "kept": m["predicted_positive"], "correct": c.tp,
                         "precision": m["precision"], "gold_positive": m["gold_positive"], "recall": m["recall"],
                         "candidates": m["n"]})
        result[origin] = rows
    return result


def near_duplicates_per_problem(per_suite: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """{origin: {problems, mean_share, max_share, max_pid}} from the per-suite results: the
    rebuttal's per-problem mean and maximum share (one active suite per origin and problem)."""
    shares: dict[str, list[tuple[float, str]]] = defaultdict(list)
    empty: Counter[str] = Counter()
    for suite in per_suite:
        if suite.get("share") is None:
            empty[suite["origin"]] += 1
        else:
            shares[suite["origin"]].append((suite["share"], suite["pid"]))
    result = {}
    for origin in sorted(set(shares) | set(empty)):
        values = shares.get(origin, [])
        top = max(values, default=None, key=lambda v: (v[0], v[1]))
        result[origin] = {
            "problems": len(values),
            "problems_without_inputs": empty[origin],
            "mean_share": sum(v for v, _ in values) / len(values) if values else None,
            "max_share": top[0] if top else None,
            "max_pid": top[1] if top else "",
        }
    return result
