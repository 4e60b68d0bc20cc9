"""Curation verification throughput beside the verification API's, on the same machine and workers.

    .venv/bin/python bench/curation.py [--programs 48] [--workers 2] [--clients 8] [--rounds 2] [--language python3]

Starts everything on 127.0.0.1 in a throwaway HARDTESTS_VAR_DIR (bench/api.py's stack:
gunicorn, N `rqworker api sandbox` workers as `make run` starts them, a private redis-server),
builds bench/api.py's 40-test suite (10 each of hacking, stratified, regular, direct), then, in
alternating rounds so the machine's drifting load hits both alike:

- **API**: `--clients` concurrent clients POST /api/v1/verify with `mode=all` (every test runs,
  the same work a curation job does per completion) for `--programs` unique programs (half
  right, half wrong); tests/s = tests the replies report / wall time;
- **curation**: the same number of unique programs as a JSON lines file of completions
  (fenced code in prose), imported and verified by a curation job on the same workers (chunk
  chains on the sandbox queue); tests/s = tests run / wall time from start to verified.

Every answer is checked (API: reward 1 for right, 0 for wrong; curation: pass fraction 1 for
right, < 1 for wrong); anything else is an error and the exit status is 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _load(name: str, path: Path) -> Any:
    # bench/ is not a package, and bench/api.py's module name would shadow the `api` app.
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


bench_api = _load("bench_api", REPO / "bench" / "api.py")
FENCE = {"python3": "python", "cpp": "cpp"}


def api_round(base: str, token: str, language: str, count: int, clients: int, seed: str,
              errors: list[str]) -> tuple[int, float]:
    """(tests run, wall seconds) of `count` mode=all verifications by `clients` concurrent clients."""
    todo = bench_api.programs(language, count, seed)
    lock = threading.Lock()
    tests = [0]

    def client(index: int) -> None:
        for code, expected in todo[index::clients]:
            status, data = bench_api.post(f"{base}/api/v1/verify", token,
                                          {"problem": "sum-n", "language": language, "code": code, "mode": "all"})
            with lock:
                if status != 200:
                    errors.append(f"API HTTP {status}: {data.get('code')} {data.get('detail')}")
                    continue
                if data["reward"] != expected:
                    errors.append(f"API reward {data['reward']} ({data['verdict']}), expected {expected}")
                tests[0] += len(data.get("tests") or []) or int(data.get("total") or 0)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tests[0], time.perf_counter() - started


def curation_round(var: Path, language: str, count: int, seed: str, errors: list[str]) -> tuple[int, float]:
    from django.db.models import Sum

    from curation.models import Completion, CurationJob
    from curation.services import curation_job_import, curation_job_start

    todo = bench_api.programs(language, count, seed)
    path = var / f"completions-{seed}.jsonl"
    with path.open("w") as handle:
        for index, (code, _) in enumerate(todo):
            handle.write(json.dumps({"problem_id": "sum-n", "model": "bench", "sample_index": index,
                                     "completion": f"Sum them.\n\n```{FENCE[language]}\n{code}```\n"}) + "\n")
    job = curation_job_import(path=path, name=seed)
    started = time.perf_counter()
    curation_job_start(job=job)  # on_commit runs at once outside a transaction: chains queued now
    deadline = time.monotonic() + 3600
    while True:
        job.refresh_from_db()
        if job.finished or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    wall = time.perf_counter() - started
    if job.status != CurationJob.Status.VERIFIED:
        errors.append(f"curation job ended {job.status}: {job.error}")
    rows = {c.sample_index: c for c in Completion.objects.filter(job=job)}
    for index, (_, expected) in enumerate(todo):
        c = rows[index]
        if c.status != Completion.Status.DONE or (c.pass_fraction == 1.0) != bool(expected):
            errors.append(f"curation #{index}: {c.status} {c.passed}/{c.total}, expected reward {expected} {c.message}")
    tests = Completion.objects.filter(job=job).aggregate(n=Sum("tests_run"))["n"] or 0
    return tests, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=48, help="programs per round and side")
    parser.add_argument("--workers", type=int, default=2, help="sandbox RQ workers (shared by both sides)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent API clients")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--language", default="python3", choices=sorted(FENCE))
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs)")
    args = parser.parse_args()

    world = bench_api.World("hardtests-bench-curation-", HARDTESTS_CURATION_CHAINS=str(args.workers))
    stack, var = world.stack, world.var
    errors: list[str] = []
    try:
        token, _suite = world.populate()
        base = stack.start_api(workers=args.workers, threads=max(8, args.clients * 2),
                               worker_args=["--worker-class", "hardtests_web.ops.worker.CheckedWorker"], timeout_s=120)
        print(f"suite: 40 tests; {os.cpu_count()} CPUs; {args.workers} sandbox workers (both sides); "
              f"{args.programs} {args.language} programs per round and side (half wrong), every test run; "
              f"curation chunk {os.environ.get('HARDTESTS_CURATION_CHUNK', '16 (default)')}; "
              f"load {os.getloadavg()[0]:.1f}\n")
        # One warm-up verification each way (compile cache, suite cache of the workers).
        api_round(base, token, args.language, 2, 1, "warm", [])
        api_tps: list[float] = []
        cur_tps: list[float] = []
        print(f"{'round':<6} {'side':<10} {'tests':>7} {'wall s':>8} {'tests/s':>9}  load")
        for r in range(args.rounds):
            for side in ("api", "curation") if r % 2 == 0 else ("curation", "api"):
                if side == "api":
                    tests, wall = api_round(base, token, args.language, args.programs, args.clients, f"a{r}", errors)
                    api_tps.append(tests / wall)
                else:
                    tests, wall = curation_round(var, args.language, args.programs, f"c{r}", errors)
                    cur_tps.append(tests / wall)
                print(f"{r:<6} {side:<10} {tests:>7} {wall:>8.1f} {tests / wall:>9.1f}  {os.getloadavg()[0]:.1f}",
                      flush=True)
        api_m, cur_m = statistics.median(api_tps), statistics.median(cur_tps)
        print(f"\nmedian tests/s: verification API {api_m:.1f}, curation job {cur_m:.1f} "
              f"(curation / API = {cur_m / api_m:.2f})")
        for error in sorted(set(errors))[:10]:
            print(f"error: {error}")
    finally:
        world.close(args.keep)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
