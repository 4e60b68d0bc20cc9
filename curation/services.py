"""Curation: import completions, verify them all in the sandbox, select by a rule, export.

The entry points of the app, in three modules:
- curation.lifecycle: a job's import, start, resume, finish, fail and dead-job sweep (every
  change of a job's status, through core.joblife);
- curation.verification: verifying completions in bounded chunks, and LLM judge scores;
- curation.selection: rules applied to a verified job, and the dataset export.
Callers (views, jobs, the command) import from here.
"""

from __future__ import annotations

from typing import Any

from curation.importing import CurationImportError
from curation.lifecycle import (
    VERIFY_JOB,
    curation_enqueue,
    curation_job_fail,
    curation_job_import,
    curation_job_resume,
    curation_job_start,
    curation_jobs_sweep,
)
from curation.rules import RuleError
from curation.selection import (
    EXPORT_COLUMNS,
    CurationRefused,
    job_facts,
    selection_apply,
    selection_export,
    selection_rows,
)
from curation.verification import (
    SandboxFailed,
    curation_chunk_verify,
    curation_job_verify_here,
    curation_judge_run,
)
from problems.models import Problem, TestSuite

__all__ = ["EXPORT_COLUMNS", "VERIFY_JOB", "CurationImportError", "CurationRefused", "RuleError", "SandboxFailed",
           "curation_chunk_verify", "curation_enqueue", "curation_job_fail", "curation_job_import",
           "curation_job_resume", "curation_job_start", "curation_job_verify_here", "curation_jobs_sweep",
           "curation_judge_run", "demo_suites_ensure", "job_facts", "selection_apply", "selection_export",
           "selection_rows"]


def demo_suites_ensure(*, problems: list[Any]) -> list[Any]:
    """Materialise the demo kits (no LLM) of problems with no active generated suite; returns the
    problems that have one afterwards (a failed materialisation leaves its problem out)."""
    from generation.models import GenerationRun
    from generation.pipeline import generation_run_execute
    from generation.services import generation_run_start

    def ready(problem: Problem) -> bool:
        return problem.suites.filter(origin=TestSuite.Origin.GENERATED, status=TestSuite.Status.ACTIVE).exists()

    for problem in problems:
        if ready(problem) or not problem.kits.exists():
            continue
        if problem.generation_runs.filter(status__in=[GenerationRun.Status.QUEUED, GenerationRun.Status.RUNNING]).exists():
            continue
        run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False)
        generation_run_execute(run_id=run.pk)
    return [p for p in problems if ready(p)]
