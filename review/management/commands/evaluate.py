"""`evaluate [--pids ... | --filter ...] [--origins ...] [--split held_out|tuning|all|both] --out report.json [--sync] [--layout hardtests]`.

Judges every candidate with a gold verdict against every active suite of its problem
(reusing current verdicts; queued on the `sandbox` workers with a progress bar, or in
this process with --sync), then writes report.json, report.csv and the paper-layout
tables (report.tables.csv, report.tables.tex) beside it, and stores the report so the
evaluation page shows it. --layout hardtests prints those tables too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from review.evaluation.selectors import ORIGINS, EvaluationInputError
from review.evaluation.services import (
    JUDGING_TIMEOUT_S,
    NEAR_DUPLICATE_BUDGET_S,
    evaluation_report_create,
    evaluation_report_run,
    evaluation_select,
    report_write,
)

LAYOUTS = ("summary", "hardtests")


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = "Measure suites as classifiers (precision, recall, F1, TPR, TNR) against candidates with gold verdicts."

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--pids", nargs="+", default=[], help="problem pids")
        which.add_argument("--filter", default="", help="key=value[,key=value]: source, platform, pid (glob), tag, "
                                                          "difficulty, title")
        parser.add_argument("--origins", nargs="+", default=[], help=f"suite origins (default all: {' '.join(ORIGINS)})")
        parser.add_argument("--out", required=True, help="report.json path; report.csv is written beside it")
        parser.add_argument("--split", default="held_out", choices=["held_out", "tuning", "all", "both"],
                            help="which labelled candidates count: held_out (default; refinement never saw them), "
                                 "tuning, all, or both (held-out report plus TPR/TNR per split)")
        parser.add_argument("--sync", action="store_true", help="judge in this process instead of the sandbox workers")
        parser.add_argument("--timeout", type=float, default=JUDGING_TIMEOUT_S, help="seconds to wait for the workers")
        parser.add_argument("--layout", choices=LAYOUTS, default="summary",
                            help="hardtests: also print the papers' tables (suite origin x difficulty, average column)")
        parser.add_argument("--difficulty-source", default=None,
                            help="rating source whose levels are the columns (default: the one labelling most "
                                 "problems; '' for none)")
        parser.add_argument("--levels", nargs="+", default=[], help="the level columns, in this order")
        parser.add_argument("--roles", nargs="+", default=[], choices=("candidate", "oracle"),
                            help="which solutions with a gold verdict are measured (default: candidate)")
        parser.add_argument("--per-problem", type=int, default=None, metavar="N",
                            help="measure only the first N solutions of each problem (by id; a cost cap)")
        parser.add_argument("--all-problems", action="store_true",
                            help="compare origins on every problem, not only those where every origin has a suite")
        parser.add_argument("--near-duplicate-budget", type=float, default=NEAR_DUPLICATE_BUDGET_S,
                            help="seconds of exact LCS work per suite before pairs are left unchecked")

    def handle(self, *args: Any, **options: Any) -> None:
        out = Path(options["out"])
        if out.suffix.lower() != ".json":
            raise CommandError(f"--out must name a .json file, not {out}")
        if not out.parent.is_dir():
            raise CommandError(f"--out directory {out.parent} does not exist")
        if options["timeout"] <= 0 or options["near_duplicate_budget"] <= 0:
            raise CommandError("--timeout and --near-duplicate-budget must be positive")
        try:
            selection = evaluation_select(pids=options["pids"], filter_expr=options["filter"],
                                          origins=options["origins"], difficulty_source=options["difficulty_source"],
                                          levels=options["levels"], same_problems=not options["all_problems"],
                                          roles=options["roles"], per_problem=options["per_problem"],
                                          split=options["split"])
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from exc
        if not selection.problems.exists():
            raise CommandError("no problem matches")
        if not options["sync"]:
            self._warn_without_workers()
        row = evaluation_report_create(selection=selection)
        report = self._run(row.pk, options)
        if report.report is None:
            raise CommandError(f"evaluation failed: {report.error.splitlines()[0] if report.error else report.status}")
        written = report_write(report=report.report, out=out)
        self._summary(report.report)
        if options["layout"] == "hardtests":
            from review.evaluation.export import paper_plain_tables, table_text

            for table in paper_plain_tables(report.report):
                self.stdout.write("\n" + table_text(table), ending="")
        self.stdout.write(f"wrote {', '.join(str(p) for p in written)} (report #{report.pk})")
        missing = report.report.get("missing_pairs") or []
        if report.report["counts"]["pairs_missing"]:
            # The figures leave these pairs out: what was asked (every pair measured) did not happen.
            named = "; ".join(f"{m['solution']} on {m['pid']} {m['origin']} suite: {m['why']}" for m in missing[:10])
            raise CommandError(f"{plural(report.report['counts']['pairs_missing'], 'pair')} could not be judged"
                               + (f": {named}" if named else ""))

    def _warn_without_workers(self) -> None:
        try:
            import django_rq
            from rq import Worker

            from core.embedded import ensure_redis
            from problems.jobs import SANDBOX_QUEUE

            ensure_redis()
            queue = django_rq.get_queue(SANDBOX_QUEUE)
            if Worker.count(queue=queue) == 0:
                self.stderr.write("warning: no worker listens on the sandbox queue yet; judging waits for one "
                                  "(start `make run`, or use --sync)")
        except Exception as exc:  # noqa: BLE001 - only a hint; enqueueing reports real errors
            self.stderr.write(f"warning: could not check the sandbox workers: {exc}")

    def _run(self, report_id: int, options: dict[str, Any]) -> Any:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        what = "judging here" if options["sync"] else "judging on the sandbox workers"
        with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      transient=True) as bar:
            task = bar.add_task(what, total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            try:
                return evaluation_report_run(
                    report_id=report_id, sync=options["sync"], timeout_s=options["timeout"],
                    near_duplicate_budget_s=options["near_duplicate_budget"], on_progress=progress,
                )
            except Exception as exc:
                raise CommandError(f"evaluation failed: {type(exc).__name__}: {exc}".splitlines()[0]) from exc

    def _summary(self, report: dict[str, Any]) -> None:
        counts = report["counts"]
        self.stdout.write(
            f"{plural(counts['problems'], 'problem')}, {plural(counts['candidates'], 'candidate')}, "
            f"{counts['pairs_judged']}/{counts['pairs_wanted']} (candidate, suite) pairs judged"
        )
        for origin, m in report["by_origin"].items():
            self.stdout.write(
                f"  {origin:<10} TP {m['tp']:>3} FP {m['fp']:>3} TN {m['tn']:>3} FN {m['fn']:>3}  "
                f"precision {_fmt(m['precision'])} recall {_fmt(m['recall'])} F1 {_fmt(m['f1'])} "
                f"TNR {_fmt(m['tnr'])}"
            )
        split = report.get("split") or {}
        if split:
            self.stdout.write(f"split: {split['name']} ({split['note']})")
        for side, by_origin in (report.get("by_split") or {}).items():
            for origin, m in by_origin.items():
                self.stdout.write(f"  {side:<9} {origin:<10} TPR {_fmt(m['recall'])} TNR {_fmt(m['tnr'])}")
        totals = (report.get("refinement") or {}).get("totals") or {}
        if (report.get("refinement") or {}).get("problems"):
            for side in ("held_out", "tuning"):
                first, final = totals[f"round0_{side}"], totals[f"final_{side}"]
                self.stdout.write(f"refinement on {side}: round 0 TPR {_fmt(first['tpr'])} TNR {_fmt(first['tnr'])}"
                                  f" -> final TPR {_fmt(final['tpr'])} TNR {_fmt(final['tnr'])}")
        near = report["near_duplicates"]
        self.stdout.write(f"near-duplicates: {near['seconds']:.2f} s over {plural(len(near['suites']), 'suite')}")
        for origin, n in near.get("per_problem", {}).items():
            where = f" ({n['max_pid']})" if n["max_pid"] else ""
            self.stdout.write(f"  {origin:<10} near-duplicate share per problem: mean {_fmt(n['mean_share'])}, "
                              f"max {_fmt(n['max_share'])}{where}")
