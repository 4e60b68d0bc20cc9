"""Curation: import completions, verify them all in the sandbox, select by a rule, export.

Verifying goes through problems.judging.judge_code, the judging code the verification API and
the catalogue use, in `mode="all"` (every test runs, so pass fractions are exact); a program's
tests go to the sandbox as batches of one compiled program (compile once, run many). Work is
done in bounded chunks claimed row by row with a conditional update, so several workers share
a job, a crash loses at most the claimed rows (claims older than HARDTESTS_CURATION_STALE_S are
taken back), and the queue returns to other work (API verifications) between chunks.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import F
from django.utils import timezone

from core.queues import get_queue
from curation.importing import CurationImportError, read_rows, rows_check
from curation.models import Completion, CurationJob, JudgeScore, Selection
from curation.rules import Facts, RuleError, judges_of, keeps, origins_of, rule_check, rule_label
from problems.judging import judge_code, suite_for_judging
from problems.kill_order import NOT_A_KILL, kill_evidence_add, suite_kill_order_refresh
from problems.models import KillEvidence, Problem, TestSuite
from problems.verify_types import Mode
from sandbox import Sandbox, get_sandbox

__all__ = ["CurationImportError", "RuleError", "curation_job_import", "curation_job_resume", "curation_job_start",
           "curation_chunk_verify", "curation_judge_run", "selection_apply", "selection_export"]

log = logging.getLogger(__name__)


class CurationRefused(ValueError):
    """A request that cannot be honoured as asked (the message says why)."""


class SandboxFailed(RuntimeError):
    """The sandbox could not give a verdict (SE): an error, never a pass fraction."""


# -- import ------------------------------------------------------------------------------------


def curation_job_import(*, path: Path, name: str = "", suite_origin: str = "", extra_origins: list[str] | None = None,
                        created_by: Any = None, demo: bool = False) -> CurationJob:
    """A new job holding every row of `path`, or CurationImportError naming the bad rows (nothing written)."""
    extra = [o for o in (extra_origins or []) if o and o != suite_origin]
    for origin in [suite_origin, *extra]:
        if origin and origin not in TestSuite.Origin.values:
            raise CurationImportError(f"unknown suite origin {origin!r}")
    rows = rows_check(read_rows(path), origin=suite_origin)
    pinned: dict[str, dict[str, int]] = {}
    for problem in {row.problem.pk: row.problem for row in rows}.values():
        primary = suite_for_judging(problem, suite_origin or None)
        if primary is None:  # activated elsewhere since the check: refuse rather than guess
            raise CurationImportError(f"problem {problem.pid!r} has no active suite")
        suites = {"primary": primary.pk, primary.origin: primary.pk}
        for origin in extra:
            other = suite_for_judging(problem, origin)
            if other is not None:
                suites[origin] = other.pk
        pinned[str(problem.pk)] = suites
    with transaction.atomic():
        job = CurationJob.objects.create(
            name=name or path.name, source_name=path.name, suite_origin=suite_origin, extra_origins=extra,
            suites=pinned, demo=demo, total=len(rows), created_by=created_by,
        )
        Completion.objects.bulk_create(
            [Completion(job=job, problem=row.problem, model_name=row.model, sample_index=row.sample_index,
                        language=row.language, completion=row.completion, code=row.code,
                        extract_kind=row.extract_kind, gold=row.gold,
                        suite_id=pinned[str(row.problem.pk)]["primary"]) for row in rows],
            batch_size=500,
        )
    return job


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


# -- verification ------------------------------------------------------------------------------


VERIFY_JOB = "curation.jobs.curation_verify_job"


def curation_enqueue(job_id: int, chains: int | None = None) -> int:
    """Queue up to `chains` chunk chains (default: one per sandbox worker); returns how many."""
    pending = Completion.objects.filter(job_id=job_id, status=Completion.Status.PENDING).count()
    wanted = chains or max(1, settings.HARDTESTS_CURATION_CHAINS)
    # Chunks shrink to keep every chain busy (_chunk_size), so a chain per completion at most.
    count = max(1, min(wanted, pending))
    queue = get_queue(settings.HARDTESTS_CURATION_QUEUE)
    for _ in range(count):
        queue.enqueue(VERIFY_JOB, job_id, job_timeout=3600, failure_ttl=7 * 86400)
    return count


def curation_job_start(*, job: CurationJob, enqueue: bool = True) -> CurationJob:
    """Mark the job verifying and (after commit) queue its chunk chains."""
    CurationJob.objects.filter(pk=job.pk).update(status=CurationJob.Status.VERIFYING,
                                                  started_at=job.started_at or timezone.now(), error="")
    if enqueue:
        transaction.on_commit(lambda: curation_enqueue(job.pk))
    job.refresh_from_db()
    return job


def curation_job_resume(*, job: CurationJob, reclaim_all: bool = False, enqueue: bool = True) -> int:
    """Put back what a crash left: claims older than the stale limit (all claims with
    `reclaim_all`, when no worker runs) and completions that ended in a sandbox error.
    Returns how many went back to pending; then starts the job again."""
    stale = Completion.objects.filter(job=job, status=Completion.Status.RUNNING)
    if not reclaim_all:
        stale = stale.filter(claimed_at__lt=timezone.now() - timedelta(seconds=settings.HARDTESTS_CURATION_STALE_S))
    back = stale.update(status=Completion.Status.PENDING, claimed_at=None, claim="")
    back += Completion.objects.filter(job=job, status=Completion.Status.ERROR).update(
        status=Completion.Status.PENDING, claimed_at=None, claim="", message="")
    curation_job_start(job=job, enqueue=enqueue)
    return back


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
    CurationJob.objects.filter(pk=job.pk).update(wall_ms=F("wall_ms") + int((time.perf_counter() - started) * 1000))
    # what the chunk's completions failed, in each suite's order before the next chunk: the suites
    # that gained evidence only (one every completion passed has nothing new to learn)
    taught = {r["suite"] for _, fields in written if fields["status"] == Completion.Status.DONE
              for r in fields["results"]["by_origin"].values() if _teaches(r["verdict"])}
    for suite_id in taught & cache.keys():
        try:
            suite_kill_order_refresh(suite=cache[suite_id])
        except DatabaseError:  # the order is an optimisation: the chunk's verdicts are written
            log.warning("kill order of suite #%s not computed again", suite_id, exc_info=True)
    _finish_if_done(job)
    return len(ids)


def _finish_if_done(job: CurationJob) -> None:
    open_rows = Completion.objects.filter(job=job, status__in=[Completion.Status.PENDING, Completion.Status.RUNNING])
    if not open_rows.exists():
        CurationJob.objects.filter(pk=job.pk, status=CurationJob.Status.VERIFYING).update(
            status=CurationJob.Status.VERIFIED, finished_at=timezone.now())


def curation_job_verify_here(*, job: CurationJob, chunk: int | None = None, progress: Any = None) -> CurationJob:
    """Verify a whole job in this process (the command's --sync), chunk after chunk."""
    curation_job_start(job=job, enqueue=False)
    while curation_chunk_verify(job_id=job.pk, chunk=chunk):
        if progress is not None:
            progress()
    job.refresh_from_db()
    return job


def curation_job_fail(*, job_id: int, error: str) -> None:
    CurationJob.objects.filter(pk=job_id).update(status=CurationJob.Status.FAILED, error=error[:4000],
                                                 finished_at=timezone.now())


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


# -- selection and export ----------------------------------------------------------------------


def job_facts(job: CurationJob, judges: list[str]) -> list[tuple[Completion, Facts]]:
    """Every verified completion of a job with what rules read of it (the latest prompt's score per judge)."""
    completions = list(Completion.objects.filter(job=job, status=Completion.Status.DONE)
                       .select_related("problem").order_by("id"))
    scores: dict[int, dict[str, float | None]] = {}
    if judges:
        for cid, judge, score in (JudgeScore.objects.filter(completion__job=job, judge__in=judges)
                                  .order_by("created_at").values_list("completion_id", "judge", "score")):
            scores.setdefault(cid, {})[judge] = score
    out = []
    for c in completions:
        results = c.results or {}
        out.append((c, Facts(passed=c.passed, total=c.total, primary_origin=results.get("primary", ""),
                             results=results.get("by_origin", {}), scores=scores.get(c.pk, {}))))
    return out


def _selectable(job: CurationJob, rule: dict[str, Any]) -> None:
    if job.status != CurationJob.Status.VERIFIED:
        raise CurationRefused(f"job #{job.pk} is {job.status}, not verified: its pass fractions are not final")
    errors = Completion.objects.filter(job=job, status=Completion.Status.ERROR).count()
    if errors:
        raise CurationRefused(f"{errors} completion(s) of job #{job.pk} could not be verified (sandbox error): "
                              "resume the job before selecting")
    for origin in origins_of(rule):
        if origin not in {*job.extra_origins, job.suite_origin} - {""}:
            raise CurationRefused(f"origin {origin!r} was not verified by this job (import with it as an extra origin)")
    for judge in judges_of(rule):
        if not JudgeScore.objects.filter(completion__job=job, judge=judge).exists():
            raise CurationRefused(f"judge {judge!r} has scored nothing of job #{job.pk}: run the judge first")


def selection_apply(*, job: CurationJob, rule: dict[str, Any]) -> Selection:
    rule = rule_check(rule)
    _selectable(job, rule)
    facts = job_facts(job, judges_of(rule))
    kept = [c.pk for c, f in facts if keeps(rule, f)]
    return Selection.objects.create(job=job, rule=rule, label=rule_label(rule), kept=len(kept),
                                    considered=len(facts), kept_ids=kept)


EXPORT_COLUMNS = ("prompt", "completion", "code", "language", "problem", "problem_title", "model", "sample_index",
                  "pass_fraction", "passed", "total", "judge_score", "rule", "gold", "demo_data")


def selection_rows(selection: Selection) -> list[dict[str, Any]]:
    rule = selection.rule
    judges = judges_of(rule)
    kept = set(selection.kept_ids)
    job = selection.job
    scores: dict[int, float | None] = {}
    score_query = JudgeScore.objects.filter(completion_id__in=kept)
    if judges:
        score_query = score_query.filter(judge=judges[0])
    for cid, score in score_query.order_by("created_at").values_list("completion_id", "score"):
        scores[cid] = score  # the rule's (first) judge, else the latest judge that scored it
    rows = []
    for c in Completion.objects.filter(pk__in=kept).select_related("problem").order_by("problem_id", "model_name",
                                                                                         "sample_index"):
        rows.append({
            "prompt": c.problem.statement, "completion": c.completion or c.code, "code": c.code,
            "language": c.language, "problem": f"{c.problem.source}:{c.problem.pid}", "problem_title": c.problem.title,
            "model": c.model_name, "sample_index": c.sample_index, "pass_fraction": c.pass_fraction,
            "passed": c.passed, "total": c.total, "judge_score": scores.get(c.pk), "rule": selection.label,
            "gold": c.gold, "demo_data": job.demo,
            # which suite's verdict pass_fraction is: an oracle_free one has model-made outputs
            "suite_origin": (c.results or {}).get("primary", ""),
        })
    return rows


def selection_export(*, selection: Selection, out_dir: Path | None = None, fmt: str = "parquet") -> Path:
    """Write the kept pairs as a dataset folder `datasets.load_dataset(folder)` reads: data/ and a card."""
    import pyarrow as pa

    if fmt not in ("parquet", "jsonl"):
        raise CurationRefused(f"unknown export format {fmt!r} (parquet or jsonl)")
    job = selection.job
    # `datasets` caches a local dataset under its folder's name, whatever the folder's path: every
    # export folder gets a name of its own (job and selection), or a load could return another's rows.
    folder = out_dir or Path(settings.MEDIA_ROOT) / "curation" / f"job{job.pk}-selection{selection.pk}"
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    rows = selection_rows(selection)
    schema = pa.schema([("prompt", pa.string()), ("completion", pa.string()), ("code", pa.string()),
                        ("language", pa.string()), ("problem", pa.string()), ("problem_title", pa.string()),
                        ("model", pa.string()), ("sample_index", pa.int64()), ("pass_fraction", pa.float64()),
                        ("passed", pa.int64()), ("total", pa.int64()), ("judge_score", pa.float64()),
                        ("rule", pa.string()), ("gold", pa.string()), ("demo_data", pa.bool_()),
                        ("suite_origin", pa.string())])
    table = pa.Table.from_pylist(rows, schema=schema)
    for old in data.glob("train-*"):
        old.unlink()
    if fmt == "parquet":
        import pyarrow.parquet as pq

        target = data / f"train-job{job.pk}-selection{selection.pk}.parquet"
        pq.write_table(table, target)
    else:
        import json

        target = data / f"train-job{job.pk}-selection{selection.pk}.jsonl"
        with target.open("w") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    (folder / "README.md").write_text(_card(selection, len(rows), target.name))
    Selection.objects.filter(pk=selection.pk).update(export_path=str(folder))
    selection.export_path = str(folder)
    return folder


def _card(selection: Selection, count: int, filename: str) -> str:
    job = selection.job
    demo = ("\n**Demo data**: the completions are the project's own demo programs wrapped as model answers, "
            "not samples of a real model.\n" if job.demo else "")
    return (
        "---\n"
        "configs:\n- config_name: default\n  data_files:\n  - split: train\n"
        f"    path: data/{filename}\n"
        "license: other\ntask_categories:\n- text-generation\ntags:\n- code\n- rejection-sampling\n"
        "---\n\n"
        f"# Curated completions: {job.name} ({selection.label})\n{demo}\n"
        f"{count} completions kept of {selection.considered} verified in curation job #{job.pk}, "
        f"by the rule `{selection.label}`.\n\n"
        "Each row pairs a problem statement (`prompt`) with a model completion that passed the rule. "
        "`pass_fraction` is the share of the pinned suite's tests the extracted program passed, every test run; "
        "`judge_score` is an LLM judge's 0-10 score when one was asked.\n\n"
        f"Rule (JSON): `{selection.rule}`\n"
    )
