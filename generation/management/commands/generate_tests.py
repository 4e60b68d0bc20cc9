"""`generate_tests PID [PID ...] [--sync] [--from-kit | --mode MODE] [--model NAME]`, or a bulk filter.

--mode oracle_free (HardTests A.7) or acecoder builds a suite with no human oracle; from_scratch
(the default) becomes oracle_free by itself for a problem without an oracle when
HARDTESTS_ORACLE_FREE_AUTO is on.

--sync runs each problem's pipeline in this process and prints one JSON object per
problem (pid, run, status, failure_reason, suite_version, unchanged, counts); a run that
found nothing changed reports the version that stays active. --from-kit materialises the
kit of the active generated suite (else the latest kit). Without it the runs are
queued on the `generation` queue and a progress bar follows them until they end
(--no-wait only queues). The bulk form (--source / --platform / --missing / --limit,
without PIDs) selects problems from the catalogue. A problem with an open run is not
queued again; the command says so.

--kit-language cpp has the LLM write testlib generators (argument commands) and a testlib checker
instead of Python ones (docs/generation.md, "C++ kits on testlib"); it needs testlib.h
(HARDTESTS_TESTLIB_H) and is refused before anything runs without it, with --from-kit, another
--profile or --campaign.

--campaign NAME makes (or extends and resumes) a campaign over the selection: one run per
problem through the LLM stage (`manage.py llm_worker`) and the `sandbox` queue, with
totals, a cost cap (--cost-cap USD) and a page. It prints one JSON object and returns;
--pause / --resume / --cancel / --status act on an existing campaign.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from generation.campaigns.selectors import campaign_summary
from generation.campaigns.services import campaign_cancel, campaign_create, campaign_pause, campaign_resume
from generation.materialise.testlib import testlib_missing
from generation.models import Campaign, GenerationRun
from generation.pipeline import generation_run_execute
from generation.profiles import PROFILES
from generation.selectors import active_generated_suite
from generation.services import generation_run_start
from problems.models import Problem, TestSuite


def problems_by_pid(pids: list[str], source: str | None = None) -> list[Problem]:
    found = []
    for pid in pids:
        matches = Problem.objects.filter(pid=pid)
        if source:
            matches = matches.filter(source=source)
        rows = list(matches[:2])
        if not rows and ":" in pid and not source:
            src, _, rest = pid.partition(":")
            rows = list(Problem.objects.filter(source=src, pid=rest)[:2])
        if not rows:
            raise CommandError(f"unknown problem {pid!r}")
        if len(rows) > 1:
            raise CommandError(f"problem id {pid!r} exists in several sources; add --source or write SOURCE:PID")
        found.append(rows[0])
    return found


def run_summary(run: GenerationRun) -> dict[str, Any]:
    succeeded = run.status == GenerationRun.Status.SUCCEEDED
    version = run.suite.version if succeeded and run.suite is not None else None
    # A run that found nothing changed made no suite: the one that stays active is the answer.
    unchanged = succeeded and version is None
    if unchanged:
        active = active_generated_suite(run.problem)
        version = active.version if active is not None else None
    return {
        "pid": run.problem.pid,
        "run": run.pk,
        "status": run.status,
        "failure_reason": run.failure_reason or None,
        "suite_version": version,
        "unchanged": unchanged,
        "counts": run.counts or {},
    }


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _fail_if(failed: list[str]) -> None:
    """A run that did not succeed is a failure of what the command was asked to do: exit 1
    (after every problem's line was printed), so a script or CI step stops there."""
    if failed:
        raise CommandError(f"{plural(len(failed), 'run')} did not succeed: {', '.join(failed[:20])}"
                           + (" ..." if len(failed) > 20 else ""))


class Command(BaseCommand):
    help = "Generate test suites for problems: from scratch with the LLM, or from their current kit."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("pids", nargs="*", help="problem ids (or SOURCE:PID)")
        parser.add_argument("--sync", action="store_true", help="run in this process and print JSON per problem")
        parser.add_argument("--from-kit", action="store_true", help="materialise the current kit; no LLM calls "
                            "(the same as --mode from_kit)")
        parser.add_argument("--mode", default=None, choices=list(GenerationRun.Mode.values),
                            help="the run's mode: from_scratch (default), from_kit, oracle_free (HardTests A.7, no "
                                 "oracle needed), acecoder (AceCoder's baseline, no oracle needed)")
        parser.add_argument("--model", default=None, help="LLM model name (default: HARDTESTS_LLM_MODEL)")
        parser.add_argument("--judge", action="store_true", help="judge the candidates against each new suite")
        parser.add_argument("--profile", default="hardtestgen", choices=sorted(PROFILES),
                            help="generation profile of call 2 (generation.profiles)")
        parser.add_argument("--kit-language", default="python3", choices=["python3", "cpp"],
                            help="the language the LLM writes generators and the checker in: python3 (the kit "
                                 "contract) or cpp (testlib generators and checker; needs testlib.h, "
                                 "HARDTESTS_TESTLIB_H)")
        bulk = parser.add_argument_group("bulk selection (instead of PIDs)")
        bulk.add_argument("--source", default=None, help="only problems from this source (dataset)")
        bulk.add_argument("--platform", default=None, help="only problems from this platform")
        bulk.add_argument("--missing", action="store_true", help="only problems without an active generated suite")
        bulk.add_argument("--limit", type=int, default=None, help="at most this many problems")
        parser.add_argument("--no-wait", action="store_true", help="queue the runs and return")
        camp = parser.add_argument_group("campaigns")
        camp.add_argument("--campaign", default=None, metavar="NAME",
                          help="make or extend the campaign NAME over the selection (prints JSON)")
        camp.add_argument("--cost-cap", default=None, metavar="USD", help="pause the campaign once it cost this much")
        for action in ("pause", "resume", "cancel", "status"):
            camp.add_argument(f"--{action}", action="store_true", help=f"{action} the campaign NAME")

    def _query(self, options: dict[str, Any]) -> Any:
        """The bulk selection as a queryset (sliced when --limit is given)."""
        if not (options["source"] or options["platform"] or options["missing"] or options["limit"]):
            raise CommandError("name problem ids, or select in bulk with --source/--platform/--missing/--limit")
        query = Problem.objects.all()
        if options["source"]:
            query = query.filter(source=options["source"])
        if options["platform"]:
            query = query.filter(platform=options["platform"])
        if options["missing"]:
            query = query.exclude(Q(suites__origin=TestSuite.Origin.GENERATED) & Q(suites__status=TestSuite.Status.ACTIVE))
        query = query.order_by("source", "pid").distinct()
        if options["limit"] is not None:
            if options["limit"] < 1:
                raise CommandError("--limit must be at least 1")
            query = query[: options["limit"]]
        return query

    def _select(self, options: dict[str, Any]) -> list[Problem]:
        if options["pids"]:
            return problems_by_pid(options["pids"], options["source"])
        problems = list(self._query(options))
        if not problems:
            raise CommandError("no problem matches the selection")
        return problems

    def _select_ids(self, options: dict[str, Any]) -> list[int]:
        # Ids only: a campaign may select the whole catalogue (statements stay in the database).
        if options["pids"]:
            return [p.pk for p in problems_by_pid(options["pids"], options["source"])]
        ids = list(self._query(options).values_list("pk", flat=True))
        if not ids:
            raise CommandError("no problem matches the selection")
        return ids

    def handle(self, *args: Any, **options: Any) -> None:
        if options["kit_language"] == "cpp" and options["campaign"] is not None:
            raise CommandError("--kit-language cpp is for single runs, not campaigns (a campaign's LLM stage writes "
                               "Python kits)")
        if options["campaign"] is not None:
            self._campaign(options)
            return
        if any(options[a] for a in ("pause", "resume", "cancel", "status")) or options["cost_cap"]:
            raise CommandError("--pause/--resume/--cancel/--status/--cost-cap need --campaign NAME")
        problems = self._select(options)
        if options["from_kit"] and options["mode"] not in (None, GenerationRun.Mode.FROM_KIT):
            raise CommandError(f"--from-kit and --mode {options['mode']} disagree: give one of them")
        mode = GenerationRun.Mode.FROM_KIT if options["from_kit"] else (options["mode"] or GenerationRun.Mode.FROM_SCRATCH)
        if options["model"] is not None and not options["model"].strip():
            raise CommandError("--model must not be empty")
        language = options["kit_language"]
        if language == "cpp":
            if mode != GenerationRun.Mode.FROM_SCRATCH:
                raise CommandError("--kit-language cpp is for from-scratch runs (the LLM writes the kit); a C++ kit "
                                   "is materialised again with --from-kit alone")
            if options["profile"] != "hardtestgen":
                raise CommandError(f"--profile {options['profile']} writes Python generators; --kit-language cpp has "
                                   "its own prompts (leave --profile at hardtestgen)")
            missing = testlib_missing()
            if missing:
                raise CommandError(f"refused before anything runs: {missing}")
        if options["sync"]:
            failed: list[str] = []
            for problem in problems:
                run = generation_run_start(problem=problem, mode=mode, model_name=options["model"], enqueue=False,
                                           profile=options["profile"], kit_language=language,
                                           judge_candidates=False)
                run = generation_run_execute(run_id=run.pk)
                self.stdout.write(json.dumps(run_summary(run)))
                if run.status != GenerationRun.Status.SUCCEEDED:
                    failed.append(f"{run.problem.pid} ({run.failure_reason or run.status})")
            _fail_if(failed)
            return
        runs = [
            generation_run_start(problem=p, mode=mode, model_name=options["model"], judge_candidates=options["judge"],
                                 profile=options["profile"], kit_language=language)
            for p in problems
        ]
        fresh = [r for r in runs if r.created]
        self.stdout.write(f"queued {plural(len(fresh), 'generation run')} on the generation queue")
        for run in runs:
            if not run.created:
                self.stdout.write(f"{run.problem.pid}: not queued again, run #{run.pk} is already {run.status}")
        if not options["no_wait"]:
            self._follow([r.pk for r in runs])

    def _campaign(self, options: dict[str, Any]) -> None:
        name = options["campaign"].strip()
        if not name:
            raise CommandError("--campaign needs a name")
        cap = None
        if options["cost_cap"] is not None:
            try:
                cap = Decimal(options["cost_cap"])
            except InvalidOperation:
                raise CommandError(f"--cost-cap must be a number of USD, got {options['cost_cap']!r}") from None
            if cap < 0:
                raise CommandError("--cost-cap must not be negative")
        actions = [a for a in ("pause", "resume", "cancel", "status") if options[a]]
        if len(actions) > 1:
            raise CommandError("choose one of --pause/--resume/--cancel/--status")
        if actions:
            campaign = Campaign.objects.filter(name=name).first()
            if campaign is None:
                raise CommandError(f"no campaign named {name!r}")
            action = actions[0]
            out: dict[str, Any] = {"campaign": name, "action": action}
            if action == "pause":
                out["changed"] = campaign_pause(campaign=campaign)
            elif action == "resume":
                out["changed"] = campaign_resume(campaign=campaign, cost_cap_usd=cap)
            elif action == "cancel":
                out["runs_cancelled"] = campaign_cancel(campaign=campaign)
            out["summary"] = campaign_summary(campaign=campaign, examples=0)
            self.stdout.write(json.dumps(out, default=str))
            return
        if options["sync"] or options["judge"]:
            raise CommandError("--sync and --judge do not apply to campaigns")
        if options["model"] is not None and not options["model"].strip():
            raise CommandError("--model must not be empty")
        problem_ids = self._select_ids(options)
        filters = {k: options[k] for k in ("source", "platform", "missing", "limit") if options[k]}
        if options["pids"]:
            filters["pids"] = len(options["pids"])
        try:
            start = campaign_create(
                name=name, problem_ids=problem_ids,
                mode=GenerationRun.Mode.FROM_KIT if options["from_kit"] else GenerationRun.Mode.FROM_SCRATCH,
                model_name=options["model"], cost_cap_usd=cap, filters=filters)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps({
            "campaign": start.campaign.name, "id": start.campaign.pk, "created": start.created,
            "added": start.added, "already_in_campaign": start.already_in, "without_kit": start.no_kit,
            "open_elsewhere": len(start.open_elsewhere),
            "open_elsewhere_examples": [{"pid": pid, "run": run} for pid, run in start.open_elsewhere[:20]],
            "status": start.campaign.status, "problems": start.campaign.problem_count,
        }))

    def _follow(self, run_ids: list[int]) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=None, transient=False) as progress:
            task = progress.add_task("generating", total=len(run_ids))
            while True:
                rows = list(GenerationRun.objects.filter(pk__in=run_ids).values_list("status", "stage"))
                done = sum(1 for status, _ in rows if status in GenerationRun.FINISHED)
                running = sum(1 for status, _ in rows if status == GenerationRun.Status.RUNNING)
                progress.update(task, completed=done, description=f"generating ({running} running)")
                if done == len(run_ids):
                    break
                time.sleep(1.0)
        runs = GenerationRun.objects.filter(pk__in=run_ids).select_related("problem", "suite").order_by("pk")
        for run in runs:
            summary = run_summary(run)
            tail = (f"suite v{summary['suite_version']}" + (" unchanged" if summary["unchanged"] else "")
                    if run.status == GenerationRun.Status.SUCCEEDED else (run.failure_reason or run.status))
            self.stdout.write(f"{run.problem.pid}: {run.status} ({tail})")
        _fail_if([f"{r.problem.pid} ({r.failure_reason or r.status})" for r in runs
                  if r.status != GenerationRun.Status.SUCCEEDED])
