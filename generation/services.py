"""A generation run's lifecycle: every change of a run's status, in one module.

    QUEUED ──claim──> RUNNING ──activate / unchanged──> SUCCEEDED
      │                 │ └──fail──> FAILED / CANCELLED
      │                 └──(campaign) kit saved──> QUEUED on the sandbox queue ──claim──> …
      └──cancel / dead──> CANCELLED / FAILED       (a dead campaign run goes back to QUEUED)

Entry points call it to start, cancel and sweep runs: the pages, `generate_tests`, campaigns
(generation.campaigns.services), curation and studies, the janitor. The executors call it to
claim, finish and fail the run they execute: generation.pipeline (a run's job on the
`generation` queue, or `--sync`) and generation.campaigns.stages (a campaign run's LLM stage
and its materialisation job on the `sandbox` queue). It imports none of them.

Every move that the worker, the web and the sweeper race on is a conditional update
(`filter(pk=..., status=...).update(...)`) whose count says who won; the moves every long job
kind shares (claim, finish, fail) go through core.joblife (GENERATION_RUN), the campaign's own
moves are here. The dead-run sweep (`stale_runs_sweep`) has one caller: the janitor
(hardtests_web/ops/janitor.py), through core.joblife.sweep, which GENERATION_RUN names it to.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, cast

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from core import joblife
from core.queues import GENERATION_QUEUE, JUDGING_QUEUE, get_queue, redis_connection
from generation.accounting import run_account_calls
from generation.materialise.testlib import CHECKER_FILE, checker_judge
from generation.materialise.types import RunFailed
from generation.models import GENERATION_RUN, Campaign, FailureReason, GenerationRun
from generation.profiles import profile_get
from generation.recorder import MAX_LOG_CHARS, RunRecorder, stale_after_s
from generation.selectors import has_usable_oracle, kit_to_materialise
from problems.models import PackageJudge, Problem, TestSuite
from problems.services import suite_activate, suite_fail

log = logging.getLogger(__name__)

__all__ = ["OPEN", "campaign_runs_cancel", "run_close_record", "run_open_to_record", "run_record_finished", "enqueue_materialise", "enqueue_run", "generation_run_cancel", "generation_run_open",
           "generation_run_start", "llm_stage_claim", "materialise_job_id", "run_activate", "run_claim",
           "run_fail", "run_fail_recorded", "run_llm_backoff", "run_requeue_dead", "run_succeed_unchanged",
           "run_to_materialise", "stale_runs_sweep"]

OPEN = (GenerationRun.Status.QUEUED, GenerationRun.Status.RUNNING)
RUN_JOB = "generation.jobs.generation_run_job"
MATERIALISE_JOB = "generation.jobs.campaign_materialise_job"


# -- starting, cancelling ------------------------------------------------------------------


def _job_id(run: GenerationRun) -> str:
    return f"generation-run-{run.pk}"


def enqueue_run(run_id: int, job_id: str) -> None:
    """Put a QUEUED run's job on the `generation` queue (a run that cannot be queued fails)."""
    try:
        get_queue(GENERATION_QUEUE).enqueue(
            RUN_JOB, run_id, job_id=job_id,
            job_timeout=settings.RQ_QUEUES[GENERATION_QUEUE].get("DEFAULT_TIMEOUT", 3600),
            result_ttl=24 * 3600, failure_ttl=7 * 24 * 3600,
        )
    except Exception as exc:  # noqa: BLE001 - record it: a run must never wait for a job that does not exist
        log.exception("could not enqueue generation run %s", run_id)
        run_fail(run_id=run_id, reason=FailureReason.INTERNAL_ERROR, error=f"could not enqueue the job: {exc}",
                 from_status=(GenerationRun.Status.QUEUED,))


def generation_run_start(
    *,
    problem: Problem,
    mode: str,
    model_name: str | None = None,
    user: Any = None,
    enqueue: bool = True,
    judge_candidates: bool = False,
    profile: str = "hardtestgen",
    kit_language: str = "python3",
) -> GenerationRun:
    """Create a QUEUED run and enqueue its job on the `generation` queue after commit.

    mode is GenerationRun.Mode.FROM_SCRATCH (both LLM calls, a new kit), FROM_KIT (the kit of
    the problem's active generated suite, else its latest kit; no LLM), or ORACLE_FREE / ACECODER
    (no oracle: generation/oracle_free; FROM_SCRATCH becomes ORACLE_FREE for a problem without a
    usable oracle, see oracle_free_mode_for). `enqueue=False` leaves it for
    generation.pipeline.generation_run_execute (the `--sync` command). `judge_candidates=True`
    queues judging of the problem's candidates against the new suite once it is active.
    `kit_language="cpp"`: the LLM writes testlib generators and checker (generation/asking_testlib.py).

    A problem has at most one open (queued or running) run, enforced by a unique index:
    when one is open already, nothing is created and that run comes back with
    `run.created = False` (callers say so); a new run has `run.created = True`.
    """
    if kit_language not in ("python3", "cpp"):
        raise ValueError(f"unknown kit language {kit_language!r}; choose python3 or cpp")
    if mode not in GenerationRun.Mode.values:
        raise ValueError(f"unknown generation mode {mode!r}; choose one of {', '.join(GenerationRun.Mode.values)}")
    mode = oracle_free_mode_for(problem=problem, mode=mode)
    asks_llm = mode != GenerationRun.Mode.FROM_KIT
    model = (model_name or "").strip() if asks_llm else ""
    kit = kit_to_materialise(problem) if mode == GenerationRun.Mode.FROM_KIT else None
    try:
        with transaction.atomic():
            run = GenerationRun.objects.create(
                problem=problem, mode=mode, model_name=model or (settings.HARDTESTS_LLM_MODEL if asks_llm else ""),
                created_by=user if getattr(user, "is_authenticated", False) else None, kit=kit,
                judge_candidates=judge_candidates, heartbeat_at=timezone.now(), profile=profile_get(profile).name,
                kit_language=kit_language,
                log=f"{timezone.now():%H:%M:%S} queued by {getattr(user, 'username', None) or 'system'}\n",
            )
            if enqueue:
                run.job_id = _job_id(run)
                run.save(update_fields=["job_id"])
                run_id, job_id = run.pk, run.job_id
                transaction.on_commit(lambda: enqueue_run(run_id, job_id))
    except IntegrityError:
        existing = generation_run_open(problem=problem)
        if existing is None:  # the open run ended meanwhile: a genuine error, not a duplicate
            raise
        existing.created = False
        return existing
    run.created = True
    return run


def testlib_checker_row(*, problem: Problem, code: str) -> PackageJudge:
    """The PackageJudge that judges a C++ kit's suites with its testlib checker (one row per checker
    text): problems/judging.py then runs it as it runs a package's checker, FAIL a judging failure."""
    judge = checker_judge(code)
    row = PackageJudge.objects.filter(problem=problem, kind=PackageJudge.Kind.TESTLIB_CHECKER,
                                      digest=judge.digest).first()
    if row is None:
        row = PackageJudge.objects.create(problem=problem, kind=PackageJudge.Kind.TESTLIB_CHECKER,
                                          name=f"generated/{CHECKER_FILE}", language="cpp", entry=CHECKER_FILE,
                                          files=dict(judge.files), flags=[], digest=judge.digest)
    return row


def oracle_free_mode_for(*, problem: Problem, mode: str) -> str:
    """The mode a run really takes: from scratch becomes oracle-free (HardTests A.7) for a problem
    with no oracle the sandbox can run, when HARDTESTS_ORACLE_FREE_AUTO is on (it would otherwise
    fail as no_valid_oracle). The run's mode and the suite's origin say so."""
    if (mode == GenerationRun.Mode.FROM_SCRATCH and settings.HARDTESTS_ORACLE_FREE_AUTO
            and not has_usable_oracle(problem)):
        return GenerationRun.Mode.ORACLE_FREE
    return mode


def generation_run_open(*, problem: Problem) -> GenerationRun | None:
    """The problem's open (queued or running) run, if any."""
    return GenerationRun.objects.filter(problem=problem, status__in=OPEN).first()


def generation_run_cancel(*, run: GenerationRun, user: Any = None) -> bool:
    """Cancel a queued run at once, or ask a running one to stop at its next check.

    Returns False when the run had already finished.
    """
    who = getattr(user, "username", None) or "system"
    if run_fail(run_id=run.pk, reason=FailureReason.CANCELLED, error=f"cancelled by {who} before it started",
                from_status=(GenerationRun.Status.QUEUED,), status=GenerationRun.Status.CANCELLED,
                note=f"cancelled by {who}"):
        if run.job_id:
            _cancel_job(run.job_id)
        run.refresh_from_db()
        return True
    with transaction.atomic():
        requested = GenerationRun.objects.filter(pk=run.pk, status=GenerationRun.Status.RUNNING).update(
            cancel_requested=True
        )
        if requested:
            _append_log(run.pk, f"cancel requested by {who}")
    run.refresh_from_db()
    return bool(requested)


def _cancel_job(job_id: str) -> None:
    # The job would find the run cancelled and do nothing; removing it just keeps the queue tidy.
    try:
        from rq.job import Job

        Job.fetch(job_id, connection=redis_connection()).cancel()
    except Exception:  # noqa: BLE001 - best effort
        pass


def run_open_to_record(*, problem: Problem, mode: str, model_name: str, note: str) -> GenerationRun | None:
    """A RUNNING run that records LLM calls made outside the pipeline (an evaluation building a
    suite in memory); None when the problem has an open run of its own (one open run per problem)."""
    now = timezone.now()
    try:
        with transaction.atomic():
            return GenerationRun.objects.create(problem=problem, mode=mode, model_name=model_name,
                                                status=GenerationRun.Status.RUNNING, started_at=now,
                                                heartbeat_at=now, log=f"{now:%H:%M:%S} {note}\n")
    except IntegrityError:
        return None


def run_close_record(*, run_id: int, rec: RunRecorder, reason: str = "") -> None:
    """End a run_open_to_record run: SUCCEEDED, or FAILED with `reason`."""
    GenerationRun.objects.filter(pk=run_id, status=GenerationRun.Status.RUNNING).update(
        status=GenerationRun.Status.FAILED if reason else GenerationRun.Status.SUCCEEDED, failure_reason=reason,
        finished_at=timezone.now(), stage=GenerationRun.Stage.DONE, **rec.pending())


def run_record_finished(*, problem: Problem, model_name: str, note: str) -> GenerationRun:
    """A finished run that made no suite, to record calls under (an LLM judge's): it never holds
    the problem's one open run."""
    now = timezone.now()
    return GenerationRun.objects.create(
        problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, model_name=model_name,
        status=GenerationRun.Status.SUCCEEDED, stage=GenerationRun.Stage.DONE, log=note, started_at=now,
        finished_at=now,
    )


def campaign_runs_cancel(*, campaign: Campaign, who: str) -> int:
    """Cancel a campaign's queued runs at once and ask its running ones to stop; returns how many
    were cancelled."""
    now = timezone.now()
    with transaction.atomic():
        cancelled = GenerationRun.objects.filter(campaign=campaign, status=GenerationRun.Status.QUEUED).update(
            status=GenerationRun.Status.CANCELLED, failure_reason=FailureReason.CANCELLED, finished_at=now,
            error=f"campaign cancelled by {who}")
        GenerationRun.objects.filter(campaign=campaign, status=GenerationRun.Status.RUNNING).update(
            cancel_requested=True)
    return cancelled


# -- executing: claim, finish, fail ----------------------------------------------------------


def run_claim(*, run_id: int) -> bool:
    """QUEUED -> RUNNING for the executor that wins it; False when the run is not (or no longer) queued.
    (No claim again by job id: a run whose worker died is swept as worker_died, or a campaign run
    queued again, by stale_runs_sweep; its re-delivered job finds it running and does nothing.)"""
    return joblife.claim(GENERATION_RUN, pk=run_id)


def run_activate(run: GenerationRun, rec: RunRecorder, suite: TestSuite) -> TestSuite:
    """RUNNING -> SUCCEEDED with its complete suite made active, if the run is still ours."""
    rec.check_cancel()
    with transaction.atomic():
        # If a sweeper declared the worker dead, it has failed the run and this suite stays unused.
        finished = joblife.finish(GENERATION_RUN, pk=run.pk, still={"cancel_requested": False},
                                  stage=GenerationRun.Stage.DONE, stage_seconds=rec.finish_stages(), suite=suite)
        if finished:
            suite = suite_activate(suite=suite)
    if not finished:
        suite_fail(suite=suite, note=f"generation run #{run.pk} was cancelled or declared dead before activation")
        raise RunFailed(FailureReason.CANCELLED, "the run was cancelled or declared dead before activation")
    return suite


def run_succeed_unchanged(run: GenerationRun, rec: RunRecorder, active: TestSuite) -> None:
    """RUNNING -> SUCCEEDED without a new suite version: the kit gives exactly the active suite's tests."""
    rec.log(f"nothing changed: the kit gives exactly the tests of active suite v{active.version} "
            f"({active.test_count} tests); no new version made")
    joblife.finish(GENERATION_RUN, pk=run.pk, stage=GenerationRun.Stage.DONE, stage_seconds=rec.finish_stages())


def run_fail(*, run_id: int, reason: str, error: str, from_status: tuple[str, ...] | None = None,
             status: str = GenerationRun.Status.FAILED, note: str = "", still: dict[str, Any] | None = None) -> bool:
    """Finish a run as failed (or cancelled) if it is still in one of from_status (and matches
    `still`, e.g. its claim); fail its building suite.

    The previous active suite is never touched: only a BUILDING suite is failed.
    """
    from_status = from_status or OPEN
    with transaction.atomic():
        updated = joblife.fail(GENERATION_RUN, pk=run_id, reason=error, from_status=from_status, status=status,
                               still=still, failure_reason=reason)
        if updated:
            suite = TestSuite.objects.filter(generation_run__pk=run_id, status=TestSuite.Status.BUILDING).first()
            if suite is not None:
                suite_fail(suite=suite, note=note or f"generation run #{run_id} {status}: {reason}")
            if note:
                _append_log(run_id, note)
    return bool(updated)


def run_fail_recorded(rec: RunRecorder, run_id: int, reason: str, message: str) -> None:
    """run_fail for the executor holding `rec`: its log line, buffered log and stage timings go too."""
    cancelled = reason == FailureReason.CANCELLED
    try:
        rec.log(("cancelled: " if cancelled else f"failed ({reason}): ") + message.splitlines()[0][:1000])
    except Exception:  # noqa: BLE001 - the failure itself matters more than its log line
        log.warning("run %s: could not write the log", run_id, exc_info=True)
    # a claimed run (the LLM stage) is failed only while it is still the claim's: one the sweep
    # took back is queued again or someone else's
    rec.owned().update(stage_seconds=rec.finish_stages(), **rec.pending())
    run_fail(run_id=run_id, reason=reason, error=message,
             status=GenerationRun.Status.CANCELLED if cancelled else GenerationRun.Status.FAILED,
             from_status=(GenerationRun.Status.RUNNING,) if rec.claim else None,
             still={"job_id": rec.claim} if rec.claim else None)


def _append_log(run_id: int, note: str) -> None:
    run = GenerationRun.objects.filter(pk=run_id).values_list("log", flat=True).first() or ""
    stamp = timezone.now().strftime("%H:%M:%S")
    GenerationRun.objects.filter(pk=run_id).update(log=(run + f"{stamp} {note}\n")[-MAX_LOG_CHARS:])


# -- the two stages of a campaign run ---------------------------------------------------------


def materialise_job_id(run_id: int, requeues: int) -> str:
    # One id per attempt: a re-queued run never shares a job id with its dead predecessor.
    return f"generation-run-{run_id}-m{requeues}"


def enqueue_materialise(items: list[tuple[int, str]]) -> None:
    """Put (run id, job id) pairs on the sandbox queue in one Redis round trip per 500.

    A failure is only logged: the runs stay QUEUED with their job ids, and the sweep finds
    those jobs missing and queues them again.
    """
    if not items:
        return
    try:
        from rq import Queue

        queue = get_queue(JUDGING_QUEUE)
        # settings.RQ_QUEUES: each DEFAULT_TIMEOUT is an int (env_int)
        timeout = cast(int, settings.RQ_QUEUES.get(JUDGING_QUEUE, {}).get("DEFAULT_TIMEOUT", 3600))
        for start in range(0, len(items), 500):
            with queue.connection.pipeline() as pipe:
                queue.enqueue_many([
                    Queue.prepare_data(MATERIALISE_JOB, args=(run_id,), job_id=job_id, timeout=timeout,
                                       result_ttl=3600, failure_ttl=7 * 24 * 3600)
                    for run_id, job_id in items[start:start + 500]
                ], pipeline=pipe)
                pipe.execute()
    except Exception:  # noqa: BLE001 - see the docstring
        log.exception("could not queue %d materialisation job(s); the sweep will retry", len(items))


def llm_stage_claim(*, claim: str, limit: int) -> list[int]:
    """Take up to `limit` runs waiting for the LLM stage; two queries whatever the queue length."""
    if limit <= 0:
        return []
    now = timezone.now()
    ids = list(GenerationRun.objects.filter(
        status=GenerationRun.Status.QUEUED, job_id="", kit__isnull=True, mode=GenerationRun.Mode.FROM_SCRATCH,
        campaign__status=Campaign.Status.RUNNING,
    ).exclude(not_before__gt=now).order_by("id").values_list("pk", flat=True)[:limit])
    if not ids:
        return []
    GenerationRun.objects.filter(pk__in=ids, status=GenerationRun.Status.QUEUED, job_id="").update(
        status=GenerationRun.Status.RUNNING, job_id=claim, heartbeat_at=now, started_at=now)
    return list(GenerationRun.objects.filter(pk__in=ids, status=GenerationRun.Status.RUNNING, job_id=claim)
                .values_list("pk", flat=True))


def run_llm_backoff(*, run: GenerationRun, rec: RunRecorder, claim: str, delay_s: float,
                    since: Any) -> bool:
    """RUNNING -> QUEUED for the LLM stage again after `delay_s` (the endpoint is unavailable)."""
    now = timezone.now()
    return bool(GenerationRun.objects.filter(pk=run.pk, status=GenerationRun.Status.RUNNING, job_id=claim).update(
        status=GenerationRun.Status.QUEUED, stage=GenerationRun.Stage.QUEUED, job_id="",
        not_before=now + timedelta(seconds=delay_s), llm_wait_since=since,
        requeues=F("requeues") + 1, heartbeat_at=now, stage_seconds=rec.finish_stages(), **rec.pending()))


def run_to_materialise(*, run_id: int, from_status: str = GenerationRun.Status.RUNNING, note: str = "",
                       rec: RunRecorder | None = None, **still: Any) -> bool:
    """Move a run whose kit is saved to the sandbox queue (parked, no job, while its campaign is paused).

    With `rec` (the LLM stage), its buffered log and stage timings go in the same update.
    """
    row: Mapping[str, Any] = (
        GenerationRun.objects.filter(pk=run_id).values("campaign__status", "requeues").first() or {})
    status = row.get("campaign__status")
    if status == Campaign.Status.CANCELLED:
        if rec is not None:
            rec.flush()
        return run_fail(run_id=run_id, reason=FailureReason.CANCELLED, error="the campaign was cancelled",
                        from_status=(from_status,), status=GenerationRun.Status.CANCELLED)
    job_id = materialise_job_id(run_id, row.get("requeues") or 0) if status in (None, Campaign.Status.RUNNING) else ""
    note = note or ("queued for materialisation on the sandbox queue" if job_id
                    else "kit saved; materialisation waits for the campaign to resume")
    extra: dict[str, object] = {}
    if rec is not None:
        rec.log(note)
        extra = {**rec.pending(), "stage_seconds": rec.finish_stages()}
    moved = GenerationRun.objects.filter(pk=run_id, status=from_status, **still).update(
        status=GenerationRun.Status.QUEUED, stage=GenerationRun.Stage.QUEUED, job_id=job_id,
        heartbeat_at=timezone.now(), not_before=None, llm_wait_since=None, **extra)
    if moved and job_id:
        # Inside a caller's transaction (the sweep) the job is queued once the move is committed.
        transaction.on_commit(lambda: enqueue_materialise([(run_id, job_id)]))
    if moved and rec is None:
        _append_log(run_id, note)
    return bool(moved)


def run_requeue_dead(*, run_id: int, reason: str, from_status: str, **still: Any) -> bool:
    """A campaign run whose worker died goes back to its queue (the sweep); its saved kit is kept."""
    run_account_calls(run_id=run_id)  # calls made before the crash still count
    row = GenerationRun.objects.filter(pk=run_id, status=from_status, **still).values("kit_id", "requeues").first()
    if row is None:
        return False
    with transaction.atomic():
        for suite in TestSuite.objects.filter(generation_run__pk=run_id, status=TestSuite.Status.BUILDING):
            suite_fail(suite=suite, note=f"generation run #{run_id}: worker died ({reason}); run queued again")
        GenerationRun.objects.filter(pk=run_id).update(requeues=F("requeues") + 1)
        if row["kit_id"] is None:
            moved = bool(GenerationRun.objects.filter(pk=run_id, status=from_status, **still).update(
                status=GenerationRun.Status.QUEUED, stage=GenerationRun.Stage.QUEUED, job_id="",
                heartbeat_at=timezone.now()))
            if moved:
                _append_log(run_id, f"worker died ({reason}); back on the LLM queue")
        else:
            moved = run_to_materialise(run_id=run_id, from_status=from_status,
                                       note=f"worker died ({reason}); kit kept, back on the sandbox queue", **still)
        if not moved:
            transaction.set_rollback(True)
        return moved


# -- runs whose worker died: the janitor's sweep ---------------------------------------------

SWEEP_BATCH = 500
LOST_QUEUED_S = 60.0
# An LLM-stage worker (generation.campaigns.llmworker) refreshes this key while it lives.
LLM_WORKER_KEY = "hardtests:llm-worker:{token}"


def _held_by_llm_worker(job_id: str) -> str | None:
    """The liveness key of the LLM-stage worker holding a run ("llm:<token>"); None: an RQ job."""
    return LLM_WORKER_KEY.format(token=job_id[4:]) if job_id.startswith("llm:") else None


def _job_states(job_ids: list[str]) -> dict[str, str]:
    """'alive', 'dead' or 'unknown' (Redis unreachable) for many job ids, in one Redis round trip
    (core.joblife.job_states; runs held by an LLM-stage worker by the worker's liveness key)."""
    return joblife.job_states(job_ids, held=_held_by_llm_worker)


def _dead(run_id: int, campaign_id: int | None, reason: str, from_status: str, **still: Any) -> bool:
    """A run whose worker or job is gone: a campaign run goes back to its queue, any other fails."""
    if campaign_id is not None:
        return run_requeue_dead(run_id=run_id, reason=reason, from_status=from_status, **still)
    with transaction.atomic():
        if not GenerationRun.objects.filter(pk=run_id, status=from_status, **still).exists():
            return False
        return run_fail(run_id=run_id, reason=FailureReason.WORKER_DIED, error=f"worker died: {reason}",
                        from_status=(from_status,), note=f"worker died: {reason}")


def stale_runs_sweep(*, batch: int = SWEEP_BATCH) -> int:
    """Deal with runs whose worker died or whose queued job was lost; returns how many.

    Called by the janitor only (hardtests_web/ops/janitor.py's dead_jobs, every
    HARDTESTS_JANITOR_FAST_S, through core.joblife.sweep).
    Cost is bounded by `batch`, never by the queue length: RUNNING runs are as many as the
    workers can hold; QUEUED runs are checked oldest-check-first, `batch` at a time, each
    check moving its heartbeat_at forward so that the next sweep looks at the next ones;
    all job states of a batch come from one Redis round trip.
    A campaign run goes back to its queue (its saved kit kept); any other run fails as
    worker_died. The previous active suite is untouched: only a BUILDING suite is failed.
    """
    now = timezone.now()
    stale_before = now - timedelta(seconds=stale_after_s())
    swept = 0
    running = list(GenerationRun.objects.filter(status=GenerationRun.Status.RUNNING).order_by("heartbeat_at")
                   .values_list("pk", "job_id", "heartbeat_at", "started_at", "campaign_id")[:batch])
    states = _job_states([job_id for _, job_id, *_ in running if job_id])
    for pk, job_id, heartbeat_at, started_at, campaign_id in running:
        beat = heartbeat_at or started_at
        if job_id and states.get(job_id) == "dead":
            if _dead(pk, campaign_id, "its job or worker ended or vanished while the run was running "
                                      "(killed?)", GenerationRun.Status.RUNNING, job_id=job_id):
                swept += 1
        elif beat is not None and beat < stale_before and _dead(
            pk, campaign_id, f"no heartbeat since {beat:%Y-%m-%d %H:%M:%S} UTC", GenerationRun.Status.RUNNING,
            job_id=job_id, heartbeat_at=heartbeat_at,
        ):
            swept += 1
    # A queued run whose RQ job vanished (Redis flushed or restarted) would wait forever.
    lost_before = now - timedelta(seconds=LOST_QUEUED_S)
    queued = GenerationRun.objects.filter(status=GenerationRun.Status.QUEUED).exclude(job_id="")
    rows = list(queued.filter(heartbeat_at__lt=lost_before).order_by("heartbeat_at")
                .values_list("pk", "job_id", "campaign_id")[:batch])
    if len(rows) < batch:  # rows queued before heartbeat_at was set on queueing
        rows += list(queued.filter(heartbeat_at__isnull=True, created_at__lt=lost_before)
                     .values_list("pk", "job_id", "campaign_id")[: batch - len(rows)])
    queued_states = _job_states([job_id for _, job_id, _ in rows])
    alive = [pk for pk, job_id, _ in rows if queued_states.get(job_id) != "dead"]
    if alive:
        GenerationRun.objects.filter(pk__in=alive, status=GenerationRun.Status.QUEUED).update(heartbeat_at=now)
    for pk, job_id, campaign_id in rows:
        if queued_states.get(job_id) == "dead" and _dead(pk, campaign_id, "the queued job was lost from Redis",
                                                         GenerationRun.Status.QUEUED, job_id=job_id):
            swept += 1
    # A campaign run whose kit is saved, queued with no job while its campaign runs, waits for no
    # one: the LLM stage takes only runs without a kit, and only a paused campaign parks runs (its
    # resume queues them). It is queued for materialisation. (Before RunLost, a worker taken for
    # dead could save its kit after the sweep had put its run back, and leave it so.)
    stranded = list(GenerationRun.objects.filter(
        Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True, created_at__lt=stale_before),
        status=GenerationRun.Status.QUEUED, job_id="", kit__isnull=False, campaign__status=Campaign.Status.RUNNING,
    ).values_list("pk", flat=True)[:batch])
    for pk in stranded:
        if run_to_materialise(run_id=pk, from_status=GenerationRun.Status.QUEUED, job_id="",
                              note="kit saved but no job: queued for materialisation by the sweep"):
            swept += 1
    return swept
