"""Verification API throughput and latency, beside the same judging done in one process.

    .venv/bin/python bench/api.py [--clients 4] [--requests 50] [--workers N] [--language python3]
                                  [--simple-workers]

Starts everything on 127.0.0.1 in a throwaway HARDTESTS_VAR_DIR (database, media, a
private redis-server): gunicorn serving the app, N `manage.py rqworker sandbox` workers
(default: one per CPU), builds a 40-test suite (10 each of hacking, stratified, regular,
direct), then runs bounded concurrent clients that POST /api/v1/verify with correct and
wrong programs (half each; every program text is unique, so nothing is served from the
compile cache that a training loop would not also miss). Every answer is checked:
a correct program must earn reward 1 and a wrong one reward 0; anything else, or any
non-200 status, is an error.

The baseline runs the same programs through problems.judging.judge_code sequentially in
this one process (the sandbox called directly, no HTTP, no queue). Two ratios are
printed: throughput (API with N workers vs one process) and the latency of a single
verification (API with one client vs direct, measured in back-to-back pairs so that the
machine's changing load hits both alike), whose difference is the API's per-call overhead.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import numpy

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

TESTS_PER_KIND = 10
KINDS = ("hacking", "stratified", "regular", "direct")

# Sum of n integers. The wrong programs fail different tests: one on the (first-run)
# hacking tests, one only on the last direct test, so fail-fast stops early or late.
PROGRAMS = {
    "python3": {
        "good": "import sys\nd = sys.stdin.buffer.read().split()\nn = int(d[0])\nprint(sum(map(int, d[1:n + 1])))\n",
        "wrong_early": "import sys\nd = sys.stdin.buffer.read().split()\nn = int(d[0])\n"
        "print(sum(map(int, d[1:n + 1])) % (2**31))\n",
        "wrong_late": "import sys\nd = sys.stdin.buffer.read().split()\nn = int(d[0])\n"
        "print(sum(map(int, d[1:n + 1])) + (1 if n == 7 else 0))\n",
    },
    "cpp": {
        "good": "#include <bits/stdc++.h>\nint main(){long long n,s=0,x;std::cin>>n;for(int i=0;i<n;i++){std::cin>>x;s+=x;}"
        "std::cout<<s<<'\\n';}\n",
        "wrong_early": "#include <bits/stdc++.h>\nint main(){int n,s=0,x;std::cin>>n;for(int i=0;i<n;i++){std::cin>>x;s+=x;}"
        "std::cout<<s<<'\\n';}\n",
        "wrong_late": "#include <bits/stdc++.h>\nint main(){long long n,s=0,x;std::cin>>n;for(int i=0;i<n;i++){std::cin>>x;s+=x;}"
        "std::cout<<s+(n==7)<<'\\n';}\n",
    },
}
COMMENT = {"python3": "# {tag}\n", "cpp": "// {tag}\n"}


def suite_tests() -> list[tuple[str, str, str]]:
    """(kind, input, output): hacking tests overflow 32 bits; one direct test has n = 7."""
    import random

    rng = random.Random(7)
    tests = []
    for kind in KINDS:
        for i in range(TESTS_PER_KIND):
            if kind == "hacking":
                values = [rng.randint(10**9, 2 * 10**9) for _ in range(rng.choice((3, 20, 300, 2000)))]
            elif kind == "direct" and i == TESTS_PER_KIND - 1:
                values = [rng.randint(-100, 100) for _ in range(7)]
            else:
                values = [rng.randint(-1000, 1000) for _ in range(rng.choice((1, 2, 5, 50, 500, 3000)))]
                if len(values) == 7:
                    values.append(0)
            text = f"{len(values)}\n{' '.join(map(str, values))}\n"
            tests.append((kind, text, f"{sum(values)}\n"))
    return tests


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    return float(numpy.percentile(values, q * 100, method="nearest"))


def programs(language: str, count: int, seed: str) -> list[tuple[str, int]]:
    """(code, expected reward): alternating good / wrong, every text unique."""
    variants = PROGRAMS[language]
    out = []
    for i in range(count):
        key = ("good", "wrong_early", "good", "wrong_late")[i % 4]
        code = variants[key] + COMMENT[language].format(tag=f"{seed}-{i}")
        out.append((code, 1 if key == "good" else 0))
    return out


class Stack:
    """gunicorn, the RQ workers and redis-server, stopped in reverse order."""

    def __init__(self, env: dict[str, str], var: Path) -> None:
        self.env = env
        self.var = var
        self.children: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.var / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        child = subprocess.Popen(argv, env=self.env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        self.children.append((name, child))
        return child

    def start_api(self, *, workers: int, threads: int, worker_args: list[str], timeout_s: float) -> str:
        """`workers` RQ sandbox workers and gunicorn (2 processes x `threads`); the base URL once
        gunicorn answers and every worker has registered."""
        port = free_port()
        manage = [sys.executable, str(REPO / "manage.py")]
        for i in range(workers):
            self.start(f"worker-{i}", [*manage, "rqworker", "api", "sandbox", *worker_args])
        self.start("gunicorn", [
            str(Path(sys.executable).parent / "gunicorn"), "hardtests_web.wsgi:application",
            "--bind", f"127.0.0.1:{port}", "--workers", "2", "--worker-class", "gthread",
            "--threads", str(threads), "--timeout", "180",
        ])
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn did not answer; see {self.var / 'gunicorn.log'}") from None
                time.sleep(0.2)
        from rq.worker import Worker

        from core.queues import verification_queue

        while Worker.count(queue=verification_queue(), connection=verification_queue().connection) < workers:
            if time.monotonic() > deadline:
                raise RuntimeError(f"workers did not register; see {self.var}/worker-*.log")
            time.sleep(0.2)
        return base

    def stop(self) -> None:
        for _, child in reversed(self.children):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for name, child in reversed(self.children):
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                print(f"  {name} did not stop; killing it", file=sys.stderr)
                child.kill()
                child.wait()


class World:
    """A throwaway installation for one benchmark run: a temporary HARDTESTS_VAR_DIR with SQLite,
    a private redis-server on a unix socket, settings as `serve --no-demo` has them (DEBUG off, no
    rate limit, no verdict cache: a bench asks the same questions again to time their judging)
    plus `env`, and a Stack for gunicorn and the workers. `populate()` (inside the
    caller's try) makes the user, its token and the 40-test suite of `suite_tests()`; `close()`
    (in its finally) stops everything and removes the directory unless kept."""

    def __init__(self, prefix: str, **env: str) -> None:
        self.var = Path(tempfile.mkdtemp(prefix=prefix))
        redis_dir = self.var / "redis"
        os.environ.update(
            HARDTESTS_VAR_DIR=str(self.var), REDIS_URL=f"unix://{redis_dir / 'redis.sock'}?db=0", DEBUG="0",
            SECRET_KEY=secrets.token_urlsafe(40), HARDTESTS_DEMO="0", HARDTESTS_API_RATE_LIMIT="1000000",
            LOG_LEVEL="WARNING", **{"HARDTESTS_API_VERDICT_CACHE_S": "0", **env},
        )
        os.environ.pop("DATABASE_URL", None)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
        import django

        django.setup()
        from core.embedded import start_redis_server

        self.redis_child = start_redis_server(redis_dir, daemonize=False)
        self.stack = Stack(dict(os.environ, PYTHONUNBUFFERED="1"), self.var)

    def populate(self) -> tuple[str, Any]:
        """(the bench user's API token, the problem `sum-n`'s active suite)."""
        from django.contrib.auth import get_user_model
        from django.core.management import call_command

        from api.tokens import token_create
        from problems.models import Problem, TestSuite
        from problems.services import NewTest, suite_activate, suite_add_tests, suite_create

        call_command("migrate", verbosity=0)
        user = get_user_model().objects.create_user("bench", password=secrets.token_urlsafe(16))
        token = token_create(user=user, name="bench").secret
        problem = Problem.objects.create(source="bench", pid="sum-n", title="Sum of n integers",
                                         statement="Print the sum.", time_limit_ms=2000, memory_limit_mb=256)
        suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED)
        suite_add_tests(suite=suite, tests=[NewTest(input=i, output=o, kind=k) for k, i, o in suite_tests()])
        return token, suite_activate(suite=suite)

    def close(self, keep: bool) -> None:
        self.stack.stop()
        if self.redis_child is not None:
            self.redis_child.terminate()
            self.redis_child.wait(timeout=10)
        if keep:
            print(f"kept {self.var}")
        else:
            shutil.rmtree(self.var, ignore_errors=True)


def post(url: str, token: str, body: dict[str, Any], timeout: float = 120) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read())
        except ValueError:
            return exc.code, {}


def run_clients(url: str, token: str, pid: str, language: str, clients: int, per_client: int,
                seed: str) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def client(index: int) -> None:
        for code, expected in programs(language, per_client, f"{seed}-c{index}"):
            started = time.perf_counter()
            status, data = post(url, token, {"problem": pid, "language": language, "code": code})
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                if status != 200:
                    errors.append(f"HTTP {status}: {data.get('code')} {data.get('detail')}")
                elif data["reward"] != expected:
                    errors.append(f"reward {data['reward']} (verdict {data['verdict']}), expected {expected}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    return {"n": len(latencies), "wall": wall, "latencies": latencies, "errors": errors}


def report(label: str, result: dict[str, Any]) -> None:
    lat = result["latencies"]
    print(
        f"{label:<34} {result['n']:>4} verifications  {result['n'] / result['wall']:>7.1f}/s  "
        f"p50 {percentile(lat, 0.5) * 1000:>6.0f} ms  p95 {percentile(lat, 0.95) * 1000:>6.0f} ms  "
        f"errors {len(result['errors'])}"
    )
    for error in sorted(set(result["errors"]))[:5]:
        print(f"    {error}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--requests", type=int, default=50, help="requests per client")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="sandbox RQ workers")
    parser.add_argument("--language", choices=sorted(PROGRAMS), default="python3")
    parser.add_argument("--forking-workers", action="store_true",
                        help="RQ's forking Worker instead of the SimpleWorker `make run` uses (a fresh process, "
                             "and an empty suite cache, per job)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs)")
    args = parser.parse_args()

    world = World("hardtests-bench-api-")
    stack = world.stack
    from problems.judging import judge_code

    try:
        token, suite = world.populate()
        problem = suite.problem
        print(f"suite: {suite.test_count} tests ({', '.join(f'{k} {v}' for k, v in suite.counts_by_kind.items())}); "
              f"language {args.language}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at start")

        threads = max(8, args.clients * 2)
        extra = ["--worker-class", "rq.worker.SimpleWorker"] if not args.forking_workers else []
        base = stack.start_api(workers=args.workers, threads=threads, worker_args=extra, timeout_s=60)
        print(f"server: gunicorn 2 processes x {threads} threads; sandbox workers: {args.workers}"
              f"{' (SimpleWorker)' if not args.forking_workers else ' (forking Worker)'}\n")

        url = f"{base}/api/v1/verify"
        total = args.clients * args.requests
        # Warm-up: interpreters, the PCH for C++, page cache of the blobs.
        warm = run_clients(url, token, "sum-n", args.language, 1, 4, "warm")
        if warm["errors"]:
            report("warm-up (errors!)", warm)

        def direct_run(codes: list[tuple[str, int]]) -> dict[str, Any]:
            latencies: list[float] = []
            errors: list[str] = []
            started = time.perf_counter()
            for code, expected in codes:
                t0 = time.perf_counter()
                result = judge_code(problem=problem, suite=suite, language=args.language, code=code, mode="fail_fast")
                latencies.append(time.perf_counter() - t0)
                if result.reward != expected:
                    errors.append(f"reward {result.reward} (verdict {result.verdict}), expected {expected}")
            return {"n": len(codes), "wall": time.perf_counter() - started, "latencies": latencies, "errors": errors}

        # The machine's load drifts, so the direct run is split around the API run (half
        # before, half after), and the per-call overhead is measured in pairs: each program
        # through the API, then at once the same program judged directly.
        direct_codes = programs(args.language, total, "direct")
        before = direct_run(direct_codes[: total // 2])
        api_conc = run_clients(url, token, "sum-n", args.language, args.clients, args.requests, "conc")
        after = direct_run(direct_codes[total // 2 :])
        direct = {key: before[key] + after[key] for key in ("n", "wall", "latencies", "errors")}

        pairs = max(20, args.requests // 2)
        api_seq = {"n": 0, "wall": 0.0, "latencies": [], "errors": []}
        direct_seq = {"n": 0, "wall": 0.0, "latencies": [], "errors": []}
        for i, (code, expected) in enumerate(programs(args.language, pairs, "pair")):
            one = run_clients(url, token, "sum-n", args.language, 1, 1, f"pair-{i}")
            two = direct_run([(code + COMMENT[args.language].format(tag="direct"), expected)])
            for total_run, part in ((api_seq, one), (direct_seq, two)):
                for key in ("n", "wall", "latencies", "errors"):
                    total_run[key] += part[key]
        differences = [a - d for a, d in zip(api_seq["latencies"], direct_seq["latencies"], strict=True)]

        report(f"API, {args.clients} clients x {args.requests}", api_conc)
        report("direct judge_code, 1 process", direct)
        report("API, 1 client, paired", api_seq)
        report("direct judge_code, paired", direct_seq)
        throughput = (api_conc["n"] / api_conc["wall"]) / (direct["n"] / direct["wall"])
        print(f"\nthroughput ratio API/direct: {throughput:.2f}  "
              f"({args.workers} workers vs 1 process on {os.cpu_count()} CPUs)")
        print(f"latency ratio API/direct (p50 of {pairs} pairs, one at a time): "
              f"{percentile(api_seq['latencies'], 0.5) / percentile(direct_seq['latencies'], 0.5):.2f}  "
              f"(API overhead per call: median {percentile(differences, 0.5) * 1000:.0f} ms)")
        print("HardTests paper reference: 5.1 s per verification on one CPU")
        print(f"load average {os.getloadavg()[0]:.1f} at the end (other work on this machine skews all figures)")
        errors = sum(len(r["errors"]) for r in (api_conc, direct, api_seq, direct_seq))
        return 1 if errors else 0
    finally:
        world.close(args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
