"""Writes of the evaluation: judge what is missing, compute the report, store it.

The metric arithmetic lives in metrics.py and redundancy.py (pure); this module loads
rows, queues judging on the `sandbox` workers and stores an EvaluationReport.
"""

from __future__ import annotations

import csv
import io
import json
import multiprocessing
import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from core import joblife
from generation.refine.report import refinement_section, split_section
from generation.refine.split import HELD_OUT, SPLITS, TUNING
from problems.blobs import blobs_get
from problems.jobs import judging_enqueue
from problems.judging import KIND_ORDER, solution_judge
from problems.models import JudgingTask, Problem, Solution, TestSuite, Verdict
from problems.verify_types import Mode
from review.evaluation import metrics, paper
from review.evaluation.export import paper_plain_tables, tables_csv, tables_latex
from review.evaluation.fast_suites import fast_suite_records, fast_suite_report
from review.evaluation.redundancy import LCS_RATIO, LENGTH_SLACK, NearDuplicates, near_duplicates
from review.evaluation.selectors import (
    EvaluationInputError,
    Pairs,
    evaluation_outcomes,
    evaluation_pairs,
    evaluation_problems,
    origins_check,
    roles_check,
)
from review.models import EvaluationReport
from review.models.evaluation import EVALUATION_REPORT

NEAR_DUPLICATE_BUDGET_S = 60.0
FAST_REPORT_SUITES = 200  # the most recently activated suites the fast-suite section measures
JUDGING_TIMEOUT_S = 6 * 3600
BUSY = (JudgingTask.Status.QUEUED, JudgingTask.Status.RUNNING)

Progress = Callable[[int, int], None]


@dataclass
class JudgingPlan:
    wanted: int
    current: int
    task_ids: list[int] = field(default_factory=list)
    judged_here: int = 0


@dataclass(frozen=True)
class Selection:
    problems: QuerySet[Problem]
    origins: list[str]
    params: dict[str, Any]
    # Which candidates count: held_out (default), tuning, all, or both (held-out report plus a per-split table).
    split: str = "held_out"

    @property
    def roles(self) -> list[str]:
        return self.params.get("roles") or ["candidate"]

    @property
    def per_problem(self) -> int | None:
        return self.params.get("per_problem")


def evaluation_select(
    *, pids: Sequence[str] = (), filter_expr: str = "", origins: Sequence[str] = (),
    difficulty_source: str | None = None, levels: Sequence[str] = (), same_problems: bool = True,
    roles: Sequence[str] = (), per_problem: int | None = None, split: str = "held_out",
) -> Selection:
    """Check what a user asked for; raises EvaluationInputError with a one-line reason.

    difficulty_source/levels/same_problems shape the paper-layout tables (None: the rating
    source that labels the most problems); roles: which solutions are measured (candidates by
    default; "oracle" adds gold solutions such as Klear's); per_problem: measure only the
    first that many of each problem (a cost cap for expensive problems); split: which side of
    the tuning/held-out split of candidates counts (generation.refine.split)."""
    if split not in SPLITS:
        raise EvaluationInputError(f"unknown split {split!r} (use {', '.join(SPLITS)})")
    chosen = origins_check(origins)
    measured = roles_check(roles)
    if per_problem is not None and per_problem < 1:
        raise EvaluationInputError("the number of candidates per problem must be at least 1")
    problems = evaluation_problems(pids=pids, filter_expr=filter_expr)
    return Selection(problems=problems, origins=chosen, split=split,
                     params={"pids": list(pids), "filter": filter_expr, "origins": chosen,
                             "difficulty_source": difficulty_source, "levels": list(levels),
                             "same_problems": same_problems, "roles": measured, "per_problem": per_problem,
                             "split": split})


def selection_from_params(params: dict[str, Any]) -> Selection:
    """The Selection a stored report was asked with (older reports lack the table options)."""
    return evaluation_select(
        pids=params.get("pids") or (), filter_expr=params.get("filter") or "", origins=params.get("origins") or (),
        difficulty_source=params.get("difficulty_source"), levels=params.get("levels") or (),
        same_problems=params.get("same_problems", True), roles=params.get("roles") or (),
        per_problem=params.get("per_problem"), split=params.get("split") or HELD_OUT,
    )


def evaluation_judge_missing(*, pairs: Pairs, sync: bool = False, on_progress: Progress | None = None) -> JudgingPlan:
    """Judge every wanted (candidate, suite) pair without a current verdict, running every
    test (mode "all") because the ablations and the cost need per-test results.

    sync judges here, one by one; otherwise one job per pair goes to the `sandbox` queue,
    reusing a task that is already queued or running for the same pair.
    """
    missing = pairs.missing
    plan = JudgingPlan(wanted=len(pairs.wanted), current=len(pairs.current))
    if sync:
        for done, (solution, suite) in enumerate(missing, start=1):
            solution_judge(solution=solution, suite=suite, mode=Mode.ALL)
            plan.judged_here += 1
            if on_progress:
                on_progress(done, len(missing))
        return plan
    busy = {
        (s, t): pk
        for pk, s, t in JudgingTask.objects.filter(status__in=BUSY, mode="all").values_list("pk", "solution_id", "suite_id")
    }
    to_queue: dict[int, tuple[TestSuite, list[Solution]]] = {}
    for solution, suite in missing:
        existing = busy.get((solution.pk, suite.pk))
        if existing is not None:
            plan.task_ids.append(existing)
        else:
            to_queue.setdefault(suite.pk, (suite, []))[1].append(solution)
    with transaction.atomic():
        for suite, solutions in to_queue.values():
            before = set(JudgingTask.objects.filter(suite=suite).values_list("pk", flat=True))
            judging_enqueue(suite=suite, solutions=solutions, mode=Mode.ALL)
            plan.task_ids += list(JudgingTask.objects.filter(suite=suite).exclude(pk__in=before).values_list("pk", flat=True))
    return plan


def evaluation_wait(
    *, task_ids: Sequence[int], timeout_s: float = JUDGING_TIMEOUT_S, poll_s: float = 1.0,
    on_progress: Progress | None = None,
) -> dict[str, int]:
    """Wait until the judging tasks are done or failed (read from the database)."""
    deadline = time.monotonic() + timeout_s
    while True:
        counts: defaultdict[str, int] = defaultdict(int)
        for status in JudgingTask.objects.filter(pk__in=list(task_ids)).values_list("status", flat=True):
            counts[status] += 1
        finished = counts[JudgingTask.Status.DONE] + counts[JudgingTask.Status.FAILED]
        if on_progress:
            on_progress(finished, len(task_ids))
        if finished >= len(task_ids) or time.monotonic() > deadline:
            return {"done": counts[JudgingTask.Status.DONE], "failed": counts[JudgingTask.Status.FAILED],
                    "unfinished": len(task_ids) - finished}
        time.sleep(poll_s)


def _near_duplicates_section(suites: list[TestSuite], budget_s: float, processes: int | None = None) -> dict[str, Any]:
    """Near-duplicate shares per suite; suites are independent, so they run in parallel
    processes (one per CPU by default) because exact LCS of large inputs is CPU-bound; CPUs
    left over (fewer suites than CPUs) go to threads within each suite."""
    started = time.perf_counter()
    cpus = processes or os.cpu_count() or 1
    workers = max(1, min(cpus, len(suites)))
    threads = max(1, cpus // workers)
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) if workers > 1 else None
    pending: list[tuple[TestSuite, int, Future[NearDuplicates] | NearDuplicates]] = []
    try:
        for suite in suites:
            bodies = blobs_get(suite.tests.order_by("ordinal").values_list("input_sha256", flat=True))
            size = sum(len(b) for b in bodies)
            options: dict[str, Any] = {"budget_s": budget_s, "threads": threads}
            work = pool.submit(near_duplicates, bodies, **options) if pool else near_duplicates(bodies, **options)
            pending.append((suite, size, work))
        results = [(suite, size, work.result() if isinstance(work, Future) else work) for suite, size, work in pending]
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
    per_suite = []
    totals: dict[str, dict[str, Any]] = {}
    for suite, size, found in results:
        per_suite.append({"pid": suite.problem.pid, "origin": suite.origin, "suite_version": suite.version,
                          "bytes": size, **found.to_dict()})
        t = totals.setdefault(suite.origin, {"suites": 0, "inputs": 0, "near_duplicate_inputs": 0,
                                             "pairs_lcs_computed": 0, "pairs_unchecked": 0, "seconds": 0.0})
        t["suites"] += 1
        t["inputs"] += found.inputs
        t["near_duplicate_inputs"] += found.near_duplicate_inputs
        t["pairs_lcs_computed"] += found.pairs_lcs_computed
        t["pairs_unchecked"] += found.pairs_unchecked
        t["seconds"] += found.seconds
    for t in totals.values():
        t["share"] = metrics.ratio(t["near_duplicate_inputs"], t["inputs"])
        t["exact"] = t["pairs_unchecked"] == 0
    return {
        "per_problem": paper.near_duplicates_per_problem(per_suite),
        "rule": (f"the longer at most {LENGTH_SLACK:.0%} longer than the shorter (rounded down) and "
                 f"LCS >= {LCS_RATIO:.0%} of the shorter"),
        "seconds": time.perf_counter() - started,
        "processes": workers,
        "threads_per_suite": threads,
        "budget_s_per_suite": budget_s,
        "by_origin": dict(sorted(totals.items())),
        "suites": per_suite,
    }


MISSING_NAMED = 50  # pairs named in a report; the count is always whole


def missing_pairs(pairs: Pairs) -> list[dict[str, Any]]:
    """The wanted (candidate, suite) pairs with no current verdict, each with why: never
    judged, a sandbox error (the machine failed; judged again next run) or a run cut short."""
    missing = pairs.missing
    if not missing:
        return []
    found = {(v.solution_id, v.suite_id): v for v in Verdict.objects.filter(
        solution__in={s.pk for s, _ in missing}, suite__in={t.pk for _, t in missing}).only(
        "solution_id", "suite_id", "verdict", "complete", "results")}
    named = []
    for solution, suite in missing[:MISSING_NAMED]:
        verdict = found.get((solution.pk, suite.pk))
        if verdict is None:
            why = "never judged (its judging did not finish before the report)"
        elif verdict.verdict == Verdict.Value.SE:
            why = "sandbox error: the machine failed, not the program; the next evaluation judges it again"
        else:
            why = (f"incomplete: {len(verdict.results or [])} of {suite.test_count} tests run "
                   f"(a fail-fast verdict); the next evaluation judges every test")
        named.append({"pid": suite.problem.pid, "solution": solution.name or f"#{solution.pk}",
                      "solution_id": solution.pk, "suite_id": suite.pk, "origin": suite.origin, "why": why})
    return named


def evaluation_report_compute(
    *, selection: Selection, near_duplicate_budget_s: float = NEAR_DUPLICATE_BUDGET_S,
    on_step: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any]:
    """The report, from current verdicts only (nothing is judged here)."""
    started = time.perf_counter()
    main_split = HELD_OUT if selection.split == "both" else selection.split
    pairs = evaluation_pairs(problems=selection.problems, origins=selection.origins, roles=selection.roles,
                             per_problem=selection.per_problem, split=main_split)
    outcomes = evaluation_outcomes(pairs=pairs)
    suites = list({suite.pk: suite for _, suite in pairs.wanted}.values())
    names = {s.pk: s for s, _ in pairs.wanted}
    suite_of = {t.pk: t for t in suites}
    errors = []
    for o in outcomes:
        predicted = o.passes()
        if predicted != o.gold_ac:
            solution, suite = names[o.solution_id], suite_of[o.suite_id]
            errors.append({"kind": "false_positive" if predicted else "false_negative", "origin": o.origin,
                           "pid": suite.problem.pid, "solution": solution.name or str(solution.pk),
                           "gold_verdict": solution.gold_verdict, "passed": sum(t.passed for t in o.tests),
                           "total": len(o.tests)})
    suites_by_origin: dict[str, int] = defaultdict(int)
    for suite in suites:
        suites_by_origin[suite.origin] += 1
    report: dict[str, Any] = {
        "generated_at": timezone.now().isoformat(timespec="seconds"),
        "params": selection.params,
        "counts": {
            "problems": len({s.problem_id for s in suites}),
            "candidates": len({s.pk for s, _ in pairs.wanted}),
            "suites_by_origin": dict(sorted(suites_by_origin.items())),
            "pairs_wanted": len(pairs.wanted),
            "pairs_judged": len(outcomes),
            "pairs_missing": len(pairs.wanted) - len(outcomes),
        },
        "missing_pairs": missing_pairs(pairs),
        "definitions": {
            "positive": "the program passes every test of the suite",
            "gold_positive": "the candidate's gold verdict is AC",
            "undefined": "null: the ratio's denominator is zero",
            "tau_selection": "candidates whose pass fraction >= tau are kept as positives (training data); "
                             "precision = gold AC among them / kept",
            "redundancy": f"precision/recall with a random x% of each suite kept, mean over {metrics.SEEDS} seeds",
            "cost": "seconds of test runs (wall time) to verify one program against one suite; compilation excluded",
        },
    }
    # Each section is a step the page shows while the report is computed (near-duplicates can
    # take most of a minute on its own).
    sections: list[tuple[str, str, Callable[[], Any]]] = [
        ("by_origin", "precision and recall by origin", lambda: metrics.by_origin(outcomes)),
        ("by_difficulty", "by difficulty", lambda: metrics.by_origin_and(outcomes, metrics.difficulty_keys)),
        ("by_platform", "by platform", lambda: metrics.by_origin_and(outcomes, metrics.platform_keys)),
        ("by_kind", "ablation by test kind", lambda: metrics.kind_ablation(outcomes)),
        ("tau", "the tau sweep", lambda: metrics.tau_sweep(outcomes)),
        ("tau_selection", "training-data selection", lambda: paper.tau_selection(outcomes)),
        ("paper", "the papers' tables", lambda: paper.paper_tables(
            outcomes, difficulty_source=selection.params.get("difficulty_source"),
            origins=[o for o in selection.origins if o in suites_by_origin], levels=selection.params.get("levels") or (),
            same_problems_only=selection.params.get("same_problems", True),
        )),
        ("redundancy", "the redundancy curve", lambda: metrics.subsample_curve(outcomes)),
        ("near_duplicates", "near-duplicate inputs", lambda: _near_duplicates_section(suites, near_duplicate_budget_s)),
        ("cost", "cost", lambda: metrics.cost_summary(outcomes, KIND_ORDER)),
        ("split", "the tuning/held-out split", lambda: split_section(selection.problems, main_split)),
        ("refinement", "refinement rounds", lambda: refinement_section(selection.problems)),
        # Stored with the report so the page reads it (compute on write): leave-one-out over
        # every suite's programs took seconds, far too long for a page request.
        ("fast", "fast suites and kill order", lambda: {
            **fast_suite_report(fast_suite_records(limit=FAST_REPORT_SUITES)), "limit": FAST_REPORT_SUITES}),
    ]
    for index, (key, label, compute) in enumerate(sections):
        if on_step:
            on_step(index, len(sections), label)
        report[key] = compute()
    report["misclassified"] = errors
    if selection.split == "both":
        report["by_split"] = {
            side: metrics.by_origin(evaluation_outcomes(pairs=evaluation_pairs(
                problems=selection.problems, origins=selection.origins, split=side)))
            for side in (TUNING, HELD_OUT)
        }
    report["seconds"] = time.perf_counter() - started
    return report


def evaluation_report_create(*, selection: Selection, user: Any = None) -> EvaluationReport:
    """A queued report row; jobs.evaluation_report_start also queues its job."""
    return EvaluationReport.objects.create(params=selection.params, created_by=user)


def evaluation_report_run(
    *, report_id: int, sync: bool = False, timeout_s: float = JUDGING_TIMEOUT_S,
    near_duplicate_budget_s: float = NEAR_DUPLICATE_BUDGET_S, on_progress: Progress | None = None,
) -> EvaluationReport:
    """Judge what is missing (waiting for the sandbox workers), then compute and store."""
    worker, job_id = joblife.current_worker()
    claimed = joblife.claim(EVALUATION_REPORT, pk=report_id, worker=worker, job_id=job_id)
    report = EvaluationReport.objects.get(pk=report_id)
    if not claimed:
        return report
    try:
        selection = selection_from_params(report.params)
        pairs = evaluation_pairs(problems=selection.problems, origins=selection.origins, roles=selection.roles,
                                 per_problem=selection.per_problem,
                                 split="all" if selection.split == "both" else selection.split)
        missing = len(pairs.missing)
        joblife.progress(EVALUATION_REPORT, pk=report_id, judging_total=missing)

        def progress(done: int, total: int) -> None:
            joblife.progress(EVALUATION_REPORT, pk=report_id, judging_done=done)
            if on_progress:
                on_progress(done, total)

        plan = evaluation_judge_missing(pairs=pairs, sync=sync, on_progress=progress)
        if plan.task_ids:
            evaluation_wait(task_ids=plan.task_ids, timeout_s=timeout_s, on_progress=progress)
        joblife.move(EVALUATION_REPORT, pk=report_id, from_status=(EvaluationReport.Status.JUDGING,),
                     to=EvaluationReport.Status.COMPUTING)

        def step(done: int, total: int, label: str) -> None:
            joblife.progress(EVALUATION_REPORT, pk=report_id, compute_done=done, compute_total=total,
                             compute_step=label[:100])

        data = evaluation_report_compute(selection=selection, near_duplicate_budget_s=near_duplicate_budget_s,
                                         on_step=step)
    except Exception as exc:
        joblife.fail(EVALUATION_REPORT, pk=report_id, reason=f"{type(exc).__name__}: {exc}")
        raise
    joblife.finish(EVALUATION_REPORT, pk=report_id, report=data)
    report.refresh_from_db()
    return report


CSV_COLUMNS = ("section", "origin", "group", "tp", "fp", "tn", "fn", "n", "precision", "recall", "f1", "tpr", "tnr",
               "mean_s", "p95_s", "share", "seconds")


def report_csv(report: dict[str, Any]) -> str:
    """One row per (section, origin, group); empty cells where a value is undefined."""
    rows: list[dict[str, Any]] = []
    for origin, m in report["by_origin"].items():
        rows.append({"section": "by_origin", "origin": origin, "group": "all", **m})
    for section in ("by_difficulty", "by_platform", "by_kind", "tau"):
        for origin, groups in report[section].items():
            for group, m in groups.items():
                rows.append({"section": section, "origin": origin, "group": group, **m})
    for origin, points in report["redundancy"].items():
        for p in points:
            rows.append({"section": "redundancy", "origin": origin, "group": f"{p['percent']}%",
                         "precision": p["precision"], "recall": p["recall"]})
    for origin, t in report["near_duplicates"]["by_origin"].items():
        rows.append({"section": "near_duplicates", "origin": origin, "group": "all", "n": t["inputs"],
                     "share": t["share"], "seconds": t["seconds"]})
    for origin, modes in report["cost"].items():
        for mode, c in modes.items():
            rows.append({"section": "cost", "origin": origin, "group": mode, "n": c["n"], "mean_s": c["mean_s"],
                         "p95_s": c["p95_s"]})
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return out.getvalue()


def report_write(*, report: dict[str, Any], out: Path) -> list[Path]:
    """report.json at `out`, report.csv beside it (same stem), and the paper-layout tables as
    report.tables.csv and report.tables.tex."""
    out.write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
    csv_path = out.with_suffix(".csv")
    csv_path.write_text(report_csv(report))
    written = [out, csv_path]
    tables = paper_plain_tables(report)
    if tables:
        for suffix, text in ((".tables.csv", tables_csv(tables)), (".tables.tex", tables_latex(tables))):
            path = out.with_name(out.stem + suffix)
            path.write_text(text)
            written.append(path)
    return written


def evaluation_report_abandon(*, report_id: int, reason: str) -> bool:
    """Record as failed an unfinished report whose job is gone (its worker was killed, Redis lost
    it): without this, it blocks every new evaluation until it is hours old. False when the report
    finished meanwhile."""
    return joblife.fail(EVALUATION_REPORT, pk=report_id, reason=reason)
