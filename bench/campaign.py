"""Bench: a campaign over synthetic problems against a loopback LLM with latency and 429s.

    .venv/bin/python bench/campaign.py [--problems 5000] [--latency 1.0] [--refuse 0.05]
        [--in-flight 32] [--llm-workers 1] [--sandbox-workers 2] [--llm-only] [--database-url URL]

Uses a throwaway HARDTESTS_VAR_DIR (its own SQLite database, media and embedded Redis)
unless --database-url names a database to use. Prints:

- scheduler overhead per job with 100 and with 5,000 runs queued (claiming an LLM-stage
  run, handing it to the sandbox queue, taking the RQ job, and one sweep batch): it must
  not grow with the queue;
- problems per hour end to end, and through the LLM stage alone;
- LLM calls in flight (time-weighted mean over the LLM stage, peak) and 429s answered;
- peak memory of each worker process (largest RSS of the process and its work horses).

Each synthetic problem doubles an integer and has two trivial Python oracles; the fake
LLM answers with a one-line validator and three direct inputs, so materialisation is as
cheap as it gets (three sandbox batches a problem) and the numbers are about scheduling.
--llm-only runs no sandbox worker: the end-to-end figure is then not measured.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def rss_of_group(pgid: int) -> int:
    """Resident kB of every process in a process group (a worker and its forked work horses)."""
    worst = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != pgid:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    worst = max(worst, int(line.split()[1]))
        except (OSError, ValueError):
            continue
    return worst


def overhead(queued: int, reps: int = 60) -> dict[str, float]:
    """Milliseconds per job of the scheduling steps with `queued` runs waiting (medians: the
    machine is shared, and a mean follows whatever else runs)."""
    import statistics

    from django.db import transaction
    from rq import Queue

    from core.queues import JUDGING_QUEUE, get_queue
    from generation.campaigns.services import campaign_create
    from generation.models import Campaign, GenerationRun
    from generation.services import SWEEP_BATCH, enqueue_materialise, llm_stage_claim, stale_runs_sweep
    from problems.models import Problem
    from tests.generation.campaign_fake import make_campaign_problems

    source = f"overhead{queued}"
    ids = make_campaign_problems(queued, source=source)
    campaign = campaign_create(name=source, problem_ids=ids).campaign
    # Half the runs wait for the LLM, half (kit saved) wait on the sandbox queue with a job.
    queue = get_queue(JUDGING_QUEUE)
    half = list(campaign.runs.order_by("pk").values_list("pk", flat=True)[: queued // 2])
    from problems.models import TestKit
    kit = TestKit.objects.filter(problem__source="campaign").first()
    if kit is not None:
        GenerationRun.objects.filter(pk__in=half).update(kit=kit)
        items = [(pk, f"overhead-{pk}") for pk in half]
        for pk, job_id in items:
            GenerationRun.objects.filter(pk=pk).update(job_id=job_id)
        enqueue_materialise(items)
    claim_s: list[float] = []
    handoff_s: list[float] = []
    dequeue_s: list[float] = []
    for i in range(reps):
        t = time.perf_counter()
        got = llm_stage_claim(claim="llm:bench", limit=1)
        claim_s.append(time.perf_counter() - t)
        assert got, "nothing to claim"
        t = time.perf_counter()
        with transaction.atomic():
            GenerationRun.objects.filter(pk=got[0]).update(status="queued", job_id=f"overhead-x{i}-{queued}")
        enqueue_materialise([(got[0], f"overhead-x{i}-{queued}")])
        handoff_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        job = Queue.dequeue_any([queue], None, connection=queue.connection)
        dequeue_s.append(time.perf_counter() - t)
        if job:
            job[0].delete()
        # put the claimed run back so that the queue keeps its length
        GenerationRun.objects.filter(pk=got[0]).update(status="queued", job_id="", kit=None)
    sweep_s: list[float] = []
    checked = min(SWEEP_BATCH, len(half))
    for _ in range(5):
        GenerationRun.objects.filter(campaign=campaign, status="queued").exclude(job_id="").update(
            heartbeat_at="2000-01-01T00:00:00Z")  # every queued job due for a check
        t = time.perf_counter()
        stale_runs_sweep()
        sweep_s.append(time.perf_counter() - t)
    queue.empty()
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CANCELLED)
    GenerationRun.objects.filter(campaign=campaign).update(status="cancelled")
    Problem.objects.filter(source=source).delete()
    ms = statistics.median
    return {"claim_ms": round(1000 * ms(claim_s), 2), "handoff_ms": round(1000 * ms(handoff_s), 2),
            "dequeue_ms": round(1000 * ms(dequeue_s), 2),
            "per_job_ms": round(1000 * (ms(claim_s) + ms(handoff_s) + ms(dequeue_s)), 2),
            "sweep_ms": round(1000 * ms(sweep_s), 1), "sweep_runs_checked": checked,
            "sweep_ms_per_run_checked": round(1000 * ms(sweep_s) / max(1, checked), 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=5000)
    parser.add_argument("--latency", type=float, default=1.0, help="mean seconds per LLM call")
    parser.add_argument("--refuse", type=float, default=0.05, help="share of calls answered 429")
    parser.add_argument("--in-flight", type=int, default=32, help="LLM calls in flight in all (split between the LLM workers)")
    parser.add_argument("--llm-workers", type=int, default=1, help="llm_worker processes")
    parser.add_argument("--sandbox-workers", type=int, default=2)
    parser.add_argument("--llm-only", action="store_true", help="no sandbox workers (LLM stage only)")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--overhead-only", action="store_true")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory(prefix="hardtests-bench-campaign-")
    os.environ["HARDTESTS_VAR_DIR"] = scratch.name
    os.environ.pop("REDIS_URL", None)
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
    else:
        os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from core.embedded import ensure_redis, stop_redis
    from generation.campaigns.selectors import campaign_summary
    from generation.campaigns.services import campaign_create
    from generation.models import Campaign, GenerationRun, LLMCall
    from tests.generation.campaign_fake import make_campaign_problems, start_campaign_llm

    ensure_redis()
    results: dict[str, object] = {"problems": args.problems, "latency_s": args.latency, "refuse_share": args.refuse,
                                  "in_flight": args.in_flight, "llm_workers": args.llm_workers, "sandbox_workers": 0 if args.llm_only
                                  else args.sandbox_workers}
    fake, server = start_campaign_llm(latency_s=args.latency, refuse_share=args.refuse)
    procs: list[tuple[str, subprocess.Popen[bytes]]] = []
    try:
        make_campaign_problems(1, source="campaign", start=10**6 - 1)  # a kit source for the overhead runs
        if not args.skip_overhead:
            from problems.models import Problem, TestKit
            from problems.services import kit_create, validator_create
            from tests.generation.campaign_fake import VALIDATOR

            seed = Problem.objects.get(source="campaign", pid=f"c{10**6 - 1:06d}")
            if not TestKit.objects.filter(problem=seed).exists():
                validator = validator_create(problem=seed, code=VALIDATOR, origin="llm", model_name="fake")
                kit_create(problem=seed, origin="llm", validator=validator, output_judge=None, needs_output_judge=False,
                           direct_inputs=["1\n"], regular_generator="", hacking_generator="", model_name="fake")
            results["overhead_100"] = overhead(100)
            results["overhead_5000"] = overhead(5000)
            print(json.dumps({k: results[k] for k in ("overhead_100", "overhead_5000")}), flush=True)
            if args.overhead_only:
                return 0
        ids = make_campaign_problems(args.problems, source="bench")
        env = dict(os.environ, OPENAI_BASE_URL=fake.url, OPENAI_API_KEY="bench", HARDTESTS_LLM_MODEL="fake-model",
                   HARDTESTS_LLM_IN_FLIGHT=str(max(1, args.in_flight // args.llm_workers)),
                   HARDTESTS_LLM_CONCURRENCY=str(args.in_flight * 4),
                   HARDTESTS_LLM_MAX_RETRIES="0", HARDTESTS_CAMPAIGN_BACKOFF_S="2", PYTHONUNBUFFERED="1",
                   # Workers as deployed: with DEBUG Django also formats and keeps every query (about
                   # 15% of the LLM stage's CPU here).
                   DEBUG="0", SECRET_KEY="bench-only-not-a-secret")
        manage = [sys.executable, str(REPO / "manage.py")]
        for i in range(args.llm_workers):
            procs.append((f"llm_worker_{i + 1}" if args.llm_workers > 1 else "llm_worker", subprocess.Popen(
                [*manage, "llm_worker"], env=env, cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)))
        # The janitor, as `serve` runs it: the one sweeper of dead runs, which also ends campaigns.
        procs.append(("janitor", subprocess.Popen([*manage, "janitor"], env=env, cwd=REPO, start_new_session=True,
                                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
        for i in range(0 if args.llm_only else args.sandbox_workers):
            procs.append((f"sandbox_worker_{i + 1}", subprocess.Popen(
                [*manage, "rqworker", "sandbox"], env=env, cwd=REPO, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
        peak = {name: 0 for name, _ in procs}
        stop = threading.Event()
        loads: list[float] = []  # the machine's 1-minute load average, each second of the LLM stage

        def sample() -> None:
            while not stop.wait(1.0):
                if llm_done_at is None:
                    loads.append(os.getloadavg()[0])
                for name, proc in procs:
                    peak[name] = max(peak[name], rss_of_group(proc.pid))

        llm_done_at: float | None = None
        threading.Thread(target=sample, daemon=True).start()
        time.sleep(3)  # let the workers import Django before the clock starts
        fake.reset_meter()
        started = time.monotonic()
        campaign = campaign_create(name="bench", problem_ids=ids).campaign
        runs = GenerationRun.objects.filter(campaign=campaign)
        in_flight_llm = 0.0
        while True:
            time.sleep(5)
            left_llm = runs.filter(kit__isnull=True, status__in=("queued", "running")).count()
            if llm_done_at is None and left_llm == 0:
                llm_done_at = time.monotonic() - started
                in_flight_llm = fake.mean_in_flight()
                if args.llm_only:
                    break
            done = runs.filter(status__in=GenerationRun.FINISHED).count()
            print(f"{time.monotonic() - started:7.0f} s: {args.problems - left_llm} kits, {done} ended, "
                  f"{fake.in_flight} calls in flight", flush=True)
            if Campaign.objects.get(pk=campaign.pk).status == Campaign.Status.FINISHED:
                break
        elapsed = time.monotonic() - started
        summary = campaign_summary(campaign=Campaign.objects.get(pk=campaign.pk), examples=1)
        answered = [s for _, _, s, _ in fake.log]
        stage_totals: dict[str, float] = {}
        for seconds in runs.values_list("stage_seconds", flat=True):
            for stage, value in (seconds or {}).items():
                stage_totals[stage] = stage_totals.get(stage, 0.0) + value
        results.update({
            "load_average_llm_stage": {"mean": round(sum(loads) / max(1, len(loads)), 1),
                                       "max": round(max(loads, default=0.0), 1)},
            "llm_stage_s": round(llm_done_at or elapsed, 1),
            "llm_stage_problems_per_hour": round(args.problems * 3600 / (llm_done_at or elapsed)),
            "end_to_end_s": None if args.llm_only else round(elapsed, 1),
            "end_to_end_problems_per_hour": None if args.llm_only else round(args.problems * 3600 / elapsed),
            "llm_calls_in_flight_mean": round(in_flight_llm, 1), "llm_calls_in_flight_peak": fake.peak_in_flight,
            "llm_requests": len(answered), "llm_429s": answered.count(429),
            "llm_calls_recorded": LLMCall.objects.filter(run__campaign=campaign).count(),
            "counts": summary["counts"], "failure_reasons": {r["reason"]: r["count"] for r in summary["failure_reasons"]},
            "tokens": {"prompt": summary["prompt_tokens"], "completion": summary["completion_tokens"]},
            "mean_stage_s": {k: round(v / max(1, args.problems), 3) for k, v in sorted(stage_totals.items())},
            "peak_rss_mb": {name: round(kb / 1024, 1) for name, kb in peak.items()},
        })
        print(json.dumps(results, indent=1))
    finally:
        for _, proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for _, proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        server.shutdown()
        stop_redis()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
