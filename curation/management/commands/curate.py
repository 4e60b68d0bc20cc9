"""`curate`: curation jobs from the command line; prints JSON.

    manage.py curate import FILE.jsonl|.parquet [--name N] [--origin generated] [--extra-origin public]
    manage.py curate verify JOB [--sync] [--resume] [--wait SECONDS]
    manage.py curate judge JOB --judge MODEL [--limit N]
    manage.py curate select JOB --rule "tau>=0.6" [--rule ...] [--export DIR] [--format parquet|jsonl]
    manage.py curate report JOB [--csv-dir DIR] [--judge-threshold 7]
    manage.py curate demo [--out DIR] [--judge MODEL ...] [--sync]

`demo` runs the whole thing on the bundled demo problems (our programs as pretend model
answers, labelled demo data): suites built where missing, 200+ completions imported and
verified, judged when judges are named (an LLM endpoint must be configured), selected under
three rules and exported as datasets `datasets.load_dataset(folder)` reads.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation.importing import CurationImportError
from curation.models import Completion, CurationJob
from curation.rules import RuleError, rule_parse
from curation.selectors import job_analysis, job_progress, table_csv
from curation.services import (
    CurationRefused,
    curation_job_import,
    curation_job_resume,
    curation_job_start,
    curation_job_verify_here,
    curation_judge_run,
    demo_suites_ensure,
    selection_apply,
    selection_export,
)


def _one_line(exc: Exception) -> str:
    return " | ".join(line for line in str(exc).splitlines() if line.strip())


class Command(BaseCommand):
    help = "Curation jobs: import completions, verify them in the sandbox, judge, select by a rule, export."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        p = sub.add_parser("import", help="import a JSON lines or parquet file of completions")
        p.add_argument("file")
        p.add_argument("--name", default="")
        p.add_argument("--origin", default="", help="the suite origin that judges (default: the preferred active suite)")
        p.add_argument("--extra-origin", action="append", default=[], help="also verify against this origin's suite")
        p = sub.add_parser("verify", help="verify every completion of a job")
        p.add_argument("job", type=int)
        p.add_argument("--sync", action="store_true", help="in this process instead of the RQ workers")
        p.add_argument("--resume", action="store_true", help="take back claims a crash left and errored rows")
        p.add_argument("--wait", type=float, default=0.0, help="with workers: wait up to this many seconds")
        p = sub.add_parser("judge", help="score a verified job's completions with an LLM judge")
        p.add_argument("job", type=int)
        p.add_argument("--judge", required=True, help="the judging model")
        p.add_argument("--limit", type=int, default=None)
        p = sub.add_parser("select", help="apply rules to a verified job (and export what they keep)")
        p.add_argument("job", type=int)
        p.add_argument("--rule", action="append", required=True)
        p.add_argument("--export", default="", help="a folder: one dataset per rule below it")
        p.add_argument("--format", default="parquet", choices=["parquet", "jsonl"])
        p = sub.add_parser("report", help="the job's analysis tables as JSON (and CSV files)")
        p.add_argument("job", type=int)
        p.add_argument("--csv-dir", default="")
        p.add_argument("--judge-threshold", type=float, default=7.0)
        p = sub.add_parser("demo", help="the whole pipeline on the demo problems")
        p.add_argument("--out", default="", help="where the datasets go (default: MEDIA_ROOT/curation/demo)")
        p.add_argument("--judge", action="append", default=[], help="judging model (twice: compare two judges)")
        p.add_argument("--sync", action="store_true", help="verify in this process (default when no worker runs)")
        p.add_argument("--wait", type=float, default=1800.0)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = getattr(self, f"_{options['action']}")(options)
        except (CurationImportError, CurationRefused, RuleError, CurationJob.DoesNotExist, OSError) as exc:
            raise CommandError(_one_line(exc)) from exc
        self.stdout.write(json.dumps(result, default=str))
        # The JSON says what happened; a verification that failed is still a failure to a script.
        if options["action"] == "verify" and result.get("status") == CurationJob.Status.FAILED:
            raise CommandError(f"job #{result['job']} failed")

    def _job(self, pk: int) -> CurationJob:
        try:
            return CurationJob.objects.get(pk=pk)
        except CurationJob.DoesNotExist as exc:
            raise CommandError(f"no curation job #{pk}") from exc

    def _import(self, o: dict[str, Any]) -> dict[str, Any]:
        path = Path(o["file"])
        if not path.is_file():
            raise CommandError(f"no file {path}")
        job = curation_job_import(path=path, name=o["name"], suite_origin=o["origin"], extra_origins=o["extra_origin"])
        return {"job": job.pk, "completions": job.total}

    def _verify(self, o: dict[str, Any]) -> dict[str, Any]:
        job = self._job(o["job"])
        if o["resume"]:
            curation_job_resume(job=job, reclaim_all=o["sync"], enqueue=not o["sync"])
        if o["sync"]:
            job = self._verify_here(job)
        elif not o["resume"]:
            curation_job_start(job=job)
        if not o["sync"] and o["wait"]:
            job = self._wait(job, o["wait"])
        job.refresh_from_db()
        return {"job": job.pk, "status": job.status, **job_progress(job)}

    def _verify_here(self, job: CurationJob) -> CurationJob:
        from rich.progress import Progress

        with Progress(console=None, transient=True, disable=not self.stderr.isatty()) as bar:
            task = bar.add_task("verifying", total=job.total)

            def tick() -> None:
                done = Completion.objects.filter(job=job, status__in=["done", "error"]).count()
                bar.update(task, completed=done)

            return curation_job_verify_here(job=job, progress=tick)

    def _wait(self, job: CurationJob, seconds: float) -> CurationJob:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            job.refresh_from_db()
            if job.finished:
                return job
            time.sleep(1.0)
        raise CommandError(f"job #{job.pk} still {job.status} after {seconds:g} s (are sandbox workers running?)")

    def _judge(self, o: dict[str, Any]) -> dict[str, Any]:
        job = self._job(o["job"])
        if job.status != CurationJob.Status.VERIFIED:
            raise CommandError(f"job #{job.pk} is {job.status}: verify it first")
        return {"job": job.pk, "judge": o["judge"], **curation_judge_run(job=job, judge=o["judge"], limit=o["limit"])}

    def _select(self, o: dict[str, Any]) -> dict[str, Any]:
        job = self._job(o["job"])
        out = []
        for text in o["rule"]:
            selection = selection_apply(job=job, rule=rule_parse(text))
            item: dict[str, Any] = {"selection": selection.pk, "rule": selection.label, "kept": selection.kept,
                                    "considered": selection.considered}
            if o["export"]:
                item["export"] = str(selection_export(selection=selection, fmt=o["format"],
                                                      out_dir=Path(o["export"]) / f"job{job.pk}-selection{selection.pk}"))
            out.append(item)
        return {"job": job.pk, "selections": out}

    def _report(self, o: dict[str, Any]) -> dict[str, Any]:
        job = self._job(o["job"])
        analysis = job_analysis(job, judge_threshold=o["judge_threshold"])
        if o["csv_dir"]:
            folder = Path(o["csv_dir"])
            folder.mkdir(parents=True, exist_ok=True)
            for table in analysis["tables"]:
                (folder / f"job-{job.pk}-{table['name']}.csv").write_text(table_csv(table))
        return {"job": job.pk, "status": job.status, "progress": job_progress(job), **analysis}

    def _demo(self, o: dict[str, Any]) -> dict[str, Any]:
        from curation.demo import demo_file
        from problems.demo import demo_load, demo_problems

        demo_load()
        problems = demo_problems()
        problems = demo_suites_ensure(problems=problems)
        if not problems:
            raise CommandError("no demo problem has an active generated suite (materialisation failed)")
        out = Path(o["out"] or Path(settings.MEDIA_ROOT) / "curation" / "demo")
        path = demo_file(problems, out / "completions.jsonl")
        job = curation_job_import(path=path, name="demo (our programs as pretend model answers)",
                                  suite_origin="generated", extra_origins=["public"], demo=True)
        if o["sync"]:
            job = self._verify_here(job)
        else:
            curation_job_start(job=job)
            job = self._wait(job, o["wait"])
        if job.status != CurationJob.Status.VERIFIED:
            raise CommandError(f"demo job #{job.pk} ended {job.status}: {job.error[:300]}")
        judged = {judge: curation_judge_run(job=job, judge=judge) for judge in o["judge"]}
        rules = ["tau>=0.6", "kind:hacking",
                 f"tau>=0.6 & judge:{o['judge'][0]}>=7" if o["judge"] else "origin:public"]
        selections = self._select({"job": job.pk, "rule": rules, "export": str(out), "format": "parquet"})
        return {"job": job.pk, "problems": len(problems), "completions": job.total, "judged": judged,
                "progress": job_progress(job), **selections}
