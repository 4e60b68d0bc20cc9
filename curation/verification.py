"""Verifying a curation job's completions in the sandbox, and scoring them with an LLM judge.

Verifying goes through problems.judging.judge_code, the judging code the verification API and
the catalogue use, in `Mode.ALL` (every test runs, so pass fractions are exact); a program's
tests go to the sandbox as batches of one compiled program (compile once, run many). Work is
done in bounded chunks claimed row by row with a conditional update, so several workers share
a job, a crash loses at most the claimed rows (claims older than HARDTESTS_CURATION_STALE_S are
taken back: curation.lifecycle), and the queue returns to other work (API verifications)
between chunks.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import F
from django.utils import timezone

from core import joblife
from curation.lifecycle import curation_job_finish_if_done, curation_job_start
from curation.models import CURATION_JOB, Completion, CurationJob, JudgeScore
from problems.judging import judge_code
from problems.kill_order import NOT_A_KILL, kill_evidence_add, suite_kill_order_refresh
from problems.models import KillEvidence, TestSuite
from problems.verify_types import Mode
from sandbox import Sandbox, get_sandbox

__all__ = ["SandboxFailed", "curation_chunk_verify", "curation_job_verify_here", "curation_judge_run"]

log = logging.getLogger(__name__)


class SandboxFailed(RuntimeError):
    """The sandbox could not give a verdict (SE): an error, never a pass fraction."""


def _chunk_size(job: CurationJob) -> int:
    """HARDTESTS_CURATION_CHUNK, smaller when what is left would not keep every chain busy: a
    small job (or a job's tail) is spread over the workers instead of landing on one."""
    pending = Completion.objects.filter(job=job, status=Completion.Status.PENDING).count()
    chains = max(1, settings.HARDTESTS_CURATION_CHAINS)
    return max(1, min(settings.HARDTESTS_CURATION_CHUNK, -(-pending // chains)))


def _claim(job: CurationJob, limit: int) -> tuple[str, list[int]]:
    """Up to `limit` pending completions, taken in one conditional update (workers race: the
    status condition is checked again on each row, so a row goes to one claim only)."""
    token = uuid.uuid4().hex
    pending = Completion.objects.filter(job=job, status=Completion.Status.PENDING).order_by("problem_id", "id")
    Completion.objects.filter(pk__in=pending.values("pk")[:limit], status=Completion.Status.PENDING).update(
        status=Completion.Status.RUNNING, claimed_at=timezone.now(), claim=token)
    return token, list(Completion.objects.filter(claim=token, status=Completion.Status.RUNNING)
                       .values_list("pk", flat=True))


@dataclass
class _Outcome:
    origin: str
    suite_id: int
    verdict: str
    passed: int
    total: int
    tests: list[list[Any]]
    cpu_ms: int


def _teaches(verdict: str) -> bool:
    """Whether a completion's verdict on a suite (every test run) is kill-order evidence."""
    return bool(settings.HARDTESTS_KILL_ORDER_FROM_CURATION) and verdict not in ("AC", "CE")


def _judge_one(completion: Completion, suite: TestSuite, sb: Sandbox, lanes: int) -> _Outcome:
    if completion.extract_kind in ("empty", "no_language") or not completion.code.strip():
        # Nothing to run: the completion has no program; it passes nothing.
        return _Outcome(suite.origin, suite.pk, "CE", 0, suite.test_count, [], 0)
    result = judge_code(problem=suite.problem, suite=suite, language=completion.language, code=completion.code,
                        mode=Mode.ALL, sandbox=sb, parallel=lanes)
    if result.verdict == "SE" or any(t.verdict == "SE" for t in result.tests):
        raise SandboxFailed(f"sandbox error on suite #{suite.pk}: {result.message[:500]}")
    if not result.complete and result.verdict not in ("CE",):
        raise SandboxFailed(f"judging of suite #{suite.pk} stopped after {len(result.tests)} of {result.total} "
                            f"tests ({result.verdict})")
    tests = [[t.ordinal, t.kind, t.verdict] for t in result.tests]
    if settings.HARDTESTS_KILL_ORDER_FROM_CURATION and result.verdict not in ("AC", "CE"):
        # every test ran: each one the completion failed teaches the suite's kill order
        kill_evidence_add(suite_id=suite.pk, language=completion.language, code=completion.code,
                          failing=[t.ordinal for t in result.tests if t.verdict not in NOT_A_KILL],
                          source=KillEvidence.Source.CURATION, refresh=False)  # once, at the chunk's end
    return _Outcome(suite.origin, suite.pk, result.verdict, result.passed, result.total, tests,
                    sum(t.time_ms for t in result.tests))


def _suites_of(job: CurationJob, problem_id: int, cache: dict[int, TestSuite]) -> tuple[TestSuite, list[TestSuite]]:
    pinned = job.suites.get(str(problem_id)) or {}
    wanted = {pk for key, pk in pinned.items()}
    missing = [pk for pk in wanted if pk not in cache]
    if missing:
        for suite in TestSuite.objects.select_related("problem", "output_judge").filter(pk__in=missing):
            cache[suite.pk] = suite
    if pinned.get("primary") not in cache:
        raise SandboxFailed(f"the suite pinned for problem {problem_id} is gone")
    primary = cache[pinned["primary"]]
    extra = [cache[pk] for key, pk in pinned.items() if key not in ("primary", primary.origin) and pk in cache]
    return primary, extra


def _verified_fields(job: CurationJob, completion: Completion, cache: dict[int, TestSuite],
                     sb: Sandbox, lanes: int) -> dict[str, Any]:
    try:
        primary, extra = _suites_of(job, completion.problem_id, cache)
        main = _judge_one(completion, primary, sb, lanes)
        others = [_judge_one(completion, suite, sb, lanes) for suite in extra]
    except Exception as exc:  # noqa: BLE001 - recorded on the row; a resume tries it again
        return {"status": Completion.Status.ERROR, "message": f"{type(exc).__name__}: {exc}"[:2000]}
    results = {"primary": main.origin, "by_origin": {
        o.origin: {"suite": o.suite_id, "verdict": o.verdict, "passed": o.passed, "total": o.total,
                   "tests": o.tests} for o in (main, *others)}}
    return {"status": Completion.Status.DONE, "verdict": main.verdict, "passed": main.passed, "total": main.total,
            "pass_fraction": main.passed / main.total if main.total else None, "results": results,
            "tests_run": sum(len(o.tests) for o in (main, *others)),
            "cpu_ms": sum(o.cpu_ms for o in (main, *others)), "message": ""}


# What a completion copies from an earlier one with the same program: the verdicts, not the cost
# (no program ran for it), and which completion was verified ("same_as" in its results).
_COPIED = ("verdict", "passed", "total", "pass_fraction", "results")


def _same_program(job: CurationJob, completion: Completion,
                  in_chunk: tuple[int, dict[str, Any]] | None) -> dict[str, Any] | None:
    """The fields of a completion whose program (problem, language, code) was already verified
    in this job, in this chunk or an earlier one, copied; None when it must be verified.
    Sampled completions repeat (the same short program from several samples or models), and a
    program judged again on the same suites gets the same per-test verdicts."""
    if not settings.HARDTESTS_CURATION_DEDUP or not completion.code.strip():
        return None
    if in_chunk is not None:
        source, fields = in_chunk
        copied = {name: fields[name] for name in _COPIED}
    else:
        row = (Completion.objects.filter(job=job, problem_id=completion.problem_id, language=completion.language,
                                         code=completion.code, status=Completion.Status.DONE)
               .exclude(pk=completion.pk).order_by("id").values("pk", *_COPIED).first())
        if row is None:
            return None
        source = row.pop("pk")
        copied = row
    results = dict(copied["results"])
    results["same_as"] = results.get("same_as", source)
    return {**copied, "results": results, "status": Completion.Status.DONE, "tests_run": 0, "cpu_ms": 0,
            "message": ""}


def curation_chunk_verify(*, job_id: int, chunk: int | None = None, sandbox: Sandbox | None = None) -> int:
    """Verify up to `chunk` pending completions of a job; returns how many were claimed.
    Marks the job verified when nothing is pending or running any more."""
    job = CurationJob.objects.get(pk=job_id)
    if job.status != CurationJob.Status.VERIFYING:
        return 0
    started = time.perf_counter()
    token, ids = _claim(job, chunk or _chunk_size(job))
    joblife.heartbeat(CURATION_JOB, pk=job.pk)
    sb = sandbox or get_sandbox()
    cache: dict[int, TestSuite] = {}
    written: list[tuple[int, dict[str, Any]]] = []
    # Lanes per program: as the API's unless HARDTESTS_CURATION_JUDGE_PARALLEL says otherwise (1 saves
    # a sandbox start-up per program when the chains alone keep every core busy).
    lanes = settings.HARDTESTS_CURATION_JUDGE_PARALLEL or settings.HARDTESTS_JUDGE_PARALLEL
    seen: dict[tuple[int, str, str], tuple[int, dict[str, Any]]] = {}
    for completion in Completion.objects.filter(pk__in=ids).order_by("problem_id", "id"):
        key = (completion.problem_id, completion.language, completion.code)
        fields = _same_program(job, completion, seen.get(key))
        if fields is None:
            fields = _verified_fields(job, completion, cache, sb, lanes)
            if fields["status"] == Completion.Status.DONE:
                seen[key] = (completion.pk, fields)
        written.append((completion.pk, fields))
    # One commit for the chunk; only rows still carrying this chunk's claim are written.
    with transaction.atomic():
        for pk, fields in written:
            Completion.objects.filter(pk=pk, claim=token, status=Completion.Status.RUNNING).update(**fields)
    joblife.progress(CURATION_JOB, pk=job.pk, wall_ms=F("wall_ms") + int((time.perf_counter() - started) * 1000))
    # what the chunk's completions failed, in each suite's order before the next chunk: the suites
    # that gained evidence only (one every completion passed has nothing new to learn)
    taught = {r["suite"] for _, fields in written if fields["status"] == Completion.Status.DONE
              for r in fields["results"]["by_origin"].values() if _teaches(r["verdict"])}
    for suite_id in taught & cache.keys():
        try:
            suite_kill_order_refresh(suite=cache[suite_id])
        except DatabaseError:  # the order is an optimisation: the chunk's verdicts are written
            log.warning("kill order of suite #%s not computed again", suite_id, exc_info=True)
    curation_job_finish_if_done(job)
    return len(ids)


def curation_job_verify_here(*, job: CurationJob, chunk: int | None = None, progress: Any = None) -> CurationJob:
    """Verify a whole job in this process (the command's --sync), chunk after chunk."""
    curation_job_start(job=job, enqueue=False)
    while curation_chunk_verify(job_id=job.pk, chunk=chunk):
        if progress is not None:
            progress()
    job.refresh_from_db()
    return job


# -- LLM judge ---------------------------------------------------------------------------------


def curation_judge_run(*, job: CurationJob, judge: str, prompt_version: str | None = None,
                       limit: int | None = None) -> dict[str, int]:
    """Score every verified completion of a job that `judge` has not scored yet (one recorded
    LLM call each). An unreadable reply is stored as an error, never as a score."""
    from generation.llm_judge import JUDGE_PROMPT, judge_audit_run, judge_solution

    version = prompt_version or JUDGE_PROMPT
    done = set(JudgeScore.objects.filter(completion__job=job, judge=judge, prompt_version=version)
               .values_list("completion_id", flat=True))
    todo = (Completion.objects.filter(job=job, status=Completion.Status.DONE).exclude(pk__in=done)
            .select_related("problem").order_by("problem_id", "id"))
    if limit:
        todo = todo[:limit]
    runs: dict[int, Any] = {}
    counts = {"scored": 0, "errors": 0}
    for completion in todo:
        if completion.problem_id not in runs:
            runs[completion.problem_id] = judge_audit_run(problem=completion.problem, model=judge,
                                                          note=f"LLM judge of curation job #{job.pk}")
        verdict = judge_solution(run=runs[completion.problem_id], problem=completion.problem,
                                 language=completion.language or "python3",
                                 code=completion.code, model=judge, prompt_version=version)
        JudgeScore.objects.update_or_create(
            completion=completion, judge=judge, prompt_version=version,
            defaults={"score": verdict.score, "correct": verdict.correct, "rationale": verdict.rationale[:4000],
                      "error": verdict.error[:2000], "llm_call": verdict.call},
        )
        counts["errors" if verdict.score is None else "scored"] += 1
    return counts
