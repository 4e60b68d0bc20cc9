"""`demo_materialise [--enqueue|--sync]`: every demo problem gets an active generated suite.

For each demo problem with a kit and no active generated suite, materialise the kit (no
LLM): --enqueue (what `make run` uses) queues runs on the `generation` queue, whose
workers then queue the candidates' judging; --sync (the default) does everything in this
process and prints each candidate's verdict next to its gold verdict. Candidates without
a verdict against an existing active suite are judged too.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from generation.models import GenerationRun
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.models import Problem, Solution, TestSuite

BUSY = (GenerationRun.Status.QUEUED, GenerationRun.Status.RUNNING)


def _active_generated(problem: Problem) -> TestSuite | None:
    return problem.suites.filter(origin=TestSuite.Origin.GENERATED, status=TestSuite.Status.ACTIVE).first()


def _unjudged(problem: Problem, suite: TestSuite) -> list[Solution]:
    """Candidates with no verdict against the suite and no judging of it under way."""
    pending = suite.judging_tasks.filter(status__in=("queued", "running")).values("solution_id")
    return list(problem.solutions.filter(role=Solution.Role.CANDIDATE).exclude(verdicts__suite=suite)
                .exclude(pk__in=pending))


class Command(BaseCommand):
    help = "Materialise the demo problems' kits into active generated suites and judge the demo candidates."

    def add_arguments(self, parser: CommandParser) -> None:
        how = parser.add_mutually_exclusive_group()
        how.add_argument("--enqueue", action="store_true", help="queue the work for the RQ workers")
        how.add_argument("--sync", action="store_true", help="do it all in this process (the default)")

    def handle(self, *args: Any, **options: Any) -> None:
        from problems.demo import DEMO_SOURCE

        problems = list(Problem.objects.filter(source=DEMO_SOURCE).order_by("pid"))
        if not problems:
            raise CommandError("no demo problems loaded (run `manage.py load_demo` first)")
        if options["enqueue"]:
            self._enqueue(problems)
        else:
            self._sync(problems)

    def _enqueue(self, problems: list[Problem]) -> None:
        from problems.jobs import judging_enqueue

        queued = judged = 0
        for problem in problems:
            suite = _active_generated(problem)
            if suite is not None:
                pending = _unjudged(problem, suite)
                if pending:
                    judged += judging_enqueue(suite=suite, solutions=pending)
                continue
            if not problem.kits.exists() or problem.generation_runs.filter(status__in=BUSY).exists():
                continue
            generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, judge_candidates=True)
            queued += 1
        self.stdout.write(f"demo: queued {queued} generation run{'s' if queued != 1 else ''} and {judged} judging "
                          f"task{'s' if judged != 1 else ''}")

    def _sync(self, problems: list[Problem]) -> None:
        from problems.judging import solution_judge

        failed: list[str] = []
        for problem in problems:
            suite = _active_generated(problem)
            summary: dict[str, Any] = {"pid": problem.pid}
            if suite is None and problem.kits.exists():
                run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False)
                run = generation_run_execute(run_id=run.pk)
                summary.update(run=run.pk, status=run.status, failure_reason=run.failure_reason or None)
                suite = _active_generated(problem)
            if suite is None:
                summary["suite_version"] = None
                self.stdout.write(json.dumps(summary))
                failed.append(f"{problem.pid} ({summary.get('failure_reason') or 'no kit'})")
                continue
            summary["suite_version"] = suite.version
            verdicts = {}
            for solution in _unjudged(problem, suite):
                verdicts[solution.name or str(solution.pk)] = solution_judge(solution=solution, suite=suite).verdict
            summary["verdicts"] = verdicts
            self.stdout.write(json.dumps(summary))
            # SE is the machine failing, never the program: the judging asked for did not happen.
            failed += [f"{problem.pid}/{name} (sandbox error)" for name, v in verdicts.items() if v == "SE"]
        if failed:
            raise CommandError(f"{len(failed)} of the demo's problems or judgings failed: {', '.join(failed[:20])}")
