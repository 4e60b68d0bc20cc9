"""One verification, four ways, side by side in one run, on the same 40-test suites.

    .venv/bin/python bench/verify.py [--rounds 15] [--concurrent 8] [--workers 2] [--per-client 6]
        [--only breakdown,table,all,throughput] [--clients 64] [--batch 256]

Sections (all by default; --only picks some):

- **breakdown**: one verification's steps, medians over --rounds calls, read from the
  Server-Timing header the API sends (api/verification.py: server_timing), each call on a
  connection kept open (as hardtests_client keeps its own): HTTP + auth + parse + render (the
  client's time minus the view's), resolve (problem and suite, one
  query), enqueue (the capacity check and the job, one round trip each), pick-up (RQ's
  enqueued_at to the job's start on the worker), load (suite bodies: the worker's cache),
  compile (C++: the compile cache's hit; Python's syntax check runs beside the tests), tests
  (spare sandboxes taken, the lanes), job other (the job's own handling), back (the job's
  return to the web side reading it) and the rest of the wait; beside bare sequential, for
  the 40-test suite and a 1-test suite;
- **table**: the four ways below;
- **all**: mode=all and the sandbox's throughput;
- **throughput**: --clients concurrent clients (accepted and wrong programs alternating) and
  one /verify/batch of --batch programs: verifications/s and tests/s against the machine's
  bare capacity (CPUs x bare tests/s of the same program, one process per CPU).

For a Python and a C++ program, accepted and wrong (wrong on the hacking tests, which run
first), the same 40-test suite (bench/api.py's: 10 each of hacking, stratified, regular,
direct) is run:

- **bare**: the compiled program (or `python3 -I main.py`) as a plain subprocess, one test
  after another, no sandbox, stopping at the first wrong answer like fail-fast judging;
- **in-process**: problems.judging.judge_code in this process (the sandbox called directly);
- **API x1**: POST /api/v1/verify end to end (gunicorn, Redis, an RQ sandbox worker), one
  request at a time, each paired with an in-process call of the same program so the
  machine's drifting load hits both alike; the median of the differences is the API's
  added cost ("API-inproc"); "API-judge" is the median of each call's latency minus the
  judge_ms the worker reported for it (HTTP, auth, Redis, RQ, the worker's job handling);
- **API x8**: 8 concurrent clients.

Programs are compiled once (the compile cache is warm, as the bare run excludes
compiling too). Then `mode=all` for the wrong programs, and Python sandbox throughput
with two worker processes (bench/sandbox.py's measure, the README's 143-147 tests/s
before this change) beside the tests/s the API sustained with 8 clients.

The API is called through hardtests_client (the project's client) when it is importable,
else through a small urllib adapter with the same verify(problem, code, language) shape.
Every answer is checked (reward 1 for accepted, 0 for wrong); any other answer is an error.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import statistics
import subprocess
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
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_api = _load("bench_api", REPO / "bench" / "api.py")
bench_sandbox = _load("bench_sandbox", REPO / "bench" / "sandbox.py")

PROGRAMS = {
    (lang, kind): bench_api.PROGRAMS[lang][src]
    for lang in ("python3", "cpp")
    for kind, src in (("accepted", "good"), ("wrong", "wrong_early"))
}
ORDER = {"hacking": 0, "stratified": 1, "regular": 2, "direct": 3}


class UrllibClient:
    """The shape of hardtests_client.HardTestsClient.verify, over urllib (used when the client is absent)."""

    def __init__(self, base_url: str, token: str) -> None:
        self.url = f"{base_url}/api/v1/verify"
        self.token = token

    def verify(self, problem: str, code: str, language: str = "python3", *, mode: str = "fail_fast") -> Any:
        status, data = bench_api.post(self.url, self.token, {"problem": problem, "language": language,
                                                              "code": code, "mode": mode})
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {data.get('code')} {data.get('detail')}")
        return type("Verification", (), {"reward": data["reward"], "verdict": data["verdict"],
                                          "raw": data})()

    def close(self) -> None:
        pass


def make_client(base_url: str, token: str) -> Any:
    try:
        from hardtests_client import HardTestsClient
    except ImportError:
        return UrllibClient(base_url, token)
    return HardTestsClient(base_url, token)


def _sandbox_worker(args: tuple[str, str, int, int]) -> int:
    # module level of __main__, so that multiprocessing's spawn can find it
    return bench_sandbox.worker(args)


def sandbox_throughput(workers: int, count: int) -> float:
    """bench/sandbox.py's measure: `workers` processes each running batches of `count` a+b
    tests (5 batches a round, the best of 3 rounds)."""
    return bench_sandbox.throughput("bwrap", "python3", workers, count, 5, 3, work=_sandbox_worker)


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def bare_run(argv: list[str], tests: list[tuple[str, str, str]]) -> float:
    started = time.perf_counter()
    for _, given, wanted in tests:
        out = subprocess.run(argv, input=given.encode(), capture_output=True, check=False)
        if out.returncode != 0 or out.stdout.split() != wanted.encode().split():
            break
    return time.perf_counter() - started


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


_connections: dict[tuple[int, str], Any] = {}


def timed_post(url: str, token: str, body: dict[str, Any]) -> tuple[float, int, dict[str, Any], dict[str, float]]:
    """(seconds, status, JSON, Server-Timing steps in ms) of one POST, on a connection this
    thread keeps open (as hardtests_client's httpx pool does: a training loop does not connect
    for every call); a connection the server closed is opened again, outside the timing."""
    import http.client
    import json
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    key = (threading.get_ident(), parts.netloc)
    data = json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    for attempt in range(2):
        connection = _connections.get(key)
        if connection is None:
            connection = _connections[key] = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
            connection.connect()
        started = time.perf_counter()
        try:
            connection.request("POST", parts.path, body=data, headers=headers)
            response = connection.getresponse()
            raw, status, header = response.read(), response.status, response.getheader("Server-Timing", "")
        except (http.client.HTTPException, ConnectionError):
            connection.close()
            del _connections[key]
            if attempt:
                raise
            continue
        elapsed = time.perf_counter() - started
        break
    steps = {}
    for part in filter(None, (p.strip() for p in header.split(","))):
        name, _, dur = part.partition(";dur=")
        steps[name] = float(dur)
    return elapsed, status, json.loads(raw or b"{}"), steps


STEPS = ("http", "prepare", "enqueue", "queue", "load", "compile", "tests", "job_other", "back", "wait_other")


def breakdown(base: str, token: str, sb: Any, ordered: list[tuple[str, str, str]], rounds: int,
              errors: list[str]) -> None:
    print("ONE VERIFICATION, STEP BY STEP (ms, medians; Server-Timing of each call; bare beside it)")
    print(f"  {'program':<22} {'client':>7} {'bare':>7} {'ratio':>6} {'over':>6} | "
          + " ".join(f"{name:>8}" for name in STEPS))
    for pid, tests in (("sum-n", ordered), ("sum-1", ordered[:1])):
        for (language, kind), code in PROGRAMS.items():
            if pid == "sum-1" and kind != "accepted":
                continue
            expected = 1 if kind == "accepted" else 0
            prog = sb.compile(language, code)
            argv = bench_sandbox.bare_argv(language, prog.path)
            body = {"problem": pid, "language": language, "code": code}
            for _ in range(2):
                timed_post(f"{base}/api/v1/verify", token, body)
            clients, bares, per_step = [], [], {name: [] for name in STEPS}
            for _ in range(rounds):
                bares.append(bare_run(argv, tests))
                elapsed, status, data, st = timed_post(f"{base}/api/v1/verify", token, body)
                if status != 200 or data.get("reward") != expected:
                    errors.append(f"breakdown {pid} {language} {kind}: HTTP {status} {data.get('reward')} "
                                  f"{data.get('code', '')} {str(data.get('detail', ''))[:300]}")
                    continue
                clients.append(elapsed)
                view = st.get("prepare", 0) + st.get("enqueue", 0) + st.get("wait", 0)
                job = st.get("job", 0)
                values = {
                    "http": elapsed * 1000 - view, "prepare": st.get("prepare", 0), "enqueue": st.get("enqueue", 0),
                    "queue": st.get("queue", 0), "load": st.get("load", 0), "compile": st.get("compile", 0),
                    "tests": st.get("tests", 0),
                    "job_other": job - st.get("load", 0) - st.get("compile", 0) - st.get("tests", 0),
                    "back": st.get("back", 0),
                    "wait_other": st.get("wait", 0) - st.get("queue", 0) - job - st.get("back", 0),
                }
                for name, value in values.items():
                    per_step[name].append(value / 1000)
            if not clients:
                continue
            c, b = p50(clients), p50(bares)
            print(f"  {pid + ' ' + language + ' ' + kind:<22} {c:>7.1f} {b:>7.1f} {c / b:>6.2f} {c - b:>6.1f} | "
                  + " ".join(f"{p50(per_step[name]):>8.2f}" for name in STEPS) + f"  [{load()}]")
    print("  http: client time minus the view's (HTTP on a kept-open connection, gunicorn, auth, parsing, rendering,"
          " the client);"
          " queue: pick-up; wait_other: the wait not explained by pick-up, job and back (clocks, the enqueue's own"
          " timestamp)\n")


def throughput(base: str, token: str, sb: Any, ordered: list[tuple[str, str, str]], clients: int, batch: int,
               errors: list[str], languages: list[str]) -> None:
    from concurrent.futures import ProcessPoolExecutor

    cpus = os.cpu_count() or 1
    print(f"THROUGHPUT ({clients} concurrent clients; /verify/batch of {batch}; {cpus} CPUs)")
    # Every program text is unique (as an RL policy's completions are): a C++ one is compiled per
    # verification, which the bare capacity (compiled once) does not pay.
    for language in languages:
        codes = bench_api.programs(language, max(clients * 2, batch), f"tp-{secrets.token_hex(4)}")
        # the same programs' bare capacity: every CPU running them one test after another
        argvs = []
        for code, _ in codes[:4]:
            prog = sb.compile(language, code)
            argvs.append(bench_sandbox.bare_argv(language, prog.path))
        started = time.perf_counter()
        with ProcessPoolExecutor(cpus) as pool:
            runs = list(pool.map(_bare_tests, [(argvs[i % len(argvs)], ordered) for i in range(cpus * 2)]))
        bare_tests_s = sum(runs) / (time.perf_counter() - started)
        # concurrent single verifications
        done: list[tuple[int, int]] = []
        lock = threading.Lock()
        todo = list(codes[: clients * 2])
        threads = [threading.Thread(target=_client_loop, args=(base, token, language, todo, lock, done, errors))
                   for _ in range(clients)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - started
        tests_s = sum(n for _, n in done) / seconds
        print(f"  {language:<8} {clients} clients: {len(done) / seconds:7.1f} verifications/s, {tests_s:7.0f} tests/s"
              f" = {tests_s / bare_tests_s:.2f} x bare capacity ({bare_tests_s:.0f} tests/s)  [{load()}]")
        # one batch
        items = [{"problem": "sum-n", "language": language, "code": code} for code, _ in codes[:batch]]
        started = time.perf_counter()
        status, data = bench_api.post(f"{base}/api/v1/verify/batch", token, {"items": items}, timeout=600)
        while status == 202 or data.get("status") == "pending":
            time.sleep(0.2)
            status, data = _get(f"{base}/api/v1/jobs/{data['job_id']}", token)
        seconds = time.perf_counter() - started
        results = [i.get("result") or {} for i in data.get("items", [])]
        # an item in status "error" (the worker could not judge it: infrastructure) has no reward
        # and is not a wrong one
        failed = [i.get("error") for i in data.get("items", []) if i.get("status") == "error"]
        wrong = [(r.get("verdict"), e) for r, (_, e) in zip(results, codes[:batch], strict=False)
                 if r and r.get("reward") != e]
        if status != 200 or wrong or failed or len(results) != len(items):
            errors.append(f"batch {language}: HTTP {status}, {len(results)} results; wrong rewards "
                          f"(verdict, expected) {wrong[:5]}; not judged {len(failed)}: {failed[:2]}")
        tests = sum(len(r.get("tests", [])) for r in results)
        print(f"  {language:<8} batch of {len(items)}: {len(results) / seconds:7.1f} verifications/s, "
              f"{tests / seconds:7.0f} tests/s = {tests / seconds / bare_tests_s:.2f} x bare capacity  [{load()}]")
    print()


def _client_loop(base: str, token: str, language: str, todo: list[tuple[str, int]], lock: threading.Lock,
                 done: list[tuple[int, int]], errors: list[str]) -> None:
    while True:
        with lock:
            if not todo:
                return
            code, expected = todo.pop()
        try:
            _, status, data, _ = timed_post(f"{base}/api/v1/verify", token,
                                            {"problem": "sum-n", "language": language, "code": code})
        except OSError as exc:  # a timeout: counted, and the client goes on
            with lock:
                errors.append(f"throughput {language}: {exc}")
            continue
        with lock:
            if status != 200 or data.get("reward") != expected:
                errors.append(f"throughput {language}: HTTP {status} {data.get('reward')}")
            else:
                done.append((1, len(data["tests"])))


def _get(url: str, token: str) -> tuple[int, dict[str, Any]]:
    import json
    import urllib.request

    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.status, json.loads(response.read())


def _bare_tests(item: tuple[list[str], list[tuple[str, str, str]]]) -> int:
    argv, tests = item
    for _, given, _wanted in tests:
        subprocess.run(argv, input=given.encode(), capture_output=True, check=False)
    return len(tests)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15, help="samples per program for bare, in-process, API x1")
    parser.add_argument("--concurrent", type=int, default=8, help="concurrent API clients")
    parser.add_argument("--per-client", type=int, default=6, help="requests per concurrent client")
    parser.add_argument("--workers", type=int, default=2, help="sandbox RQ workers")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs)")
    parser.add_argument("--only", default="breakdown,table,all,throughput", help="sections to run (comma-separated)")
    parser.add_argument("--clients", type=int, default=64, help="concurrent clients of the throughput section")
    parser.add_argument("--batch", type=int, default=256, help="programs in the throughput section's batch")
    parser.add_argument("--languages", default="python3,cpp", help="languages of the throughput section")
    parser.add_argument("--verdict-cache-s", type=int, default=0,
                        help="HARDTESTS_API_VERDICT_CACHE_S of the server (default 0: every call is judged; "
                             "with it on, the breakdown's repeated calls time the cache's answers)")
    args = parser.parse_args()
    sections = set(args.only.split(","))

    world = bench_api.World("hardtests-bench-verify-", HARDTESTS_API_BATCH_MAX=str(max(32, args.batch)),
                            HARDTESTS_API_VERDICT_CACHE_S=str(args.verdict_cache_s))
    stack = world.stack
    from problems.judging import judge_code
    from problems.models import Problem, TestSuite
    from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
    from sandbox import get_sandbox

    errors: list[str] = []
    try:
        token, suite = world.populate()
        problem = suite.problem
        tests = bench_api.suite_tests()
        ordered = sorted(tests, key=lambda t: ORDER[t[0]])  # judging order, hacking first (stable)
        one = Problem.objects.create(source="bench", pid="sum-1", title="Sum, one test", statement="Print the sum.",
                                     time_limit_ms=2000, memory_limit_mb=256)
        one_suite = suite_create(problem=one, origin=TestSuite.Origin.GENERATED)
        suite_add_tests(suite=one_suite, tests=[NewTest(input=ordered[0][1], output=ordered[0][2], kind="hacking")])
        suite_activate(suite=one_suite)

        base = stack.start_api(workers=args.workers, threads=max(8, args.concurrent * 2, args.clients // 2),
                               worker_args=["--worker-class", "hardtests_web.ops.worker.CheckedWorker"], timeout_s=90)
        client = make_client(base, token)
        print(f"suite: {len(tests)} tests; {os.cpu_count()} CPUs; {args.workers} sandbox workers (CheckedWorker, as `make run`: spare sandboxes on); "
              f"client: {type(client).__module__}.{type(client).__name__}; "
              f"HARDTESTS_JUDGE_PARALLEL={os.environ.get('HARDTESTS_JUDGE_PARALLEL', '(default)')}; {load()}\n")

        transport: list[float] = []  # of the last api_call: client latency - the worker's judge_ms

        def api_call(language: str, code: str, expected: int, mode: str = "fail_fast") -> float:
            started = time.perf_counter()
            try:
                got = client.verify("sum-n", code, language, mode=mode)
                elapsed = time.perf_counter() - started
                transport.append(elapsed - got.raw["judge_ms"] / 1000)
                if got.reward != expected:
                    errors.append(f"API {language}: reward {got.reward} ({got.verdict}), expected {expected}")
            except Exception as exc:  # noqa: BLE001 - a bench counts every failure as an error
                errors.append(f"API {language}: {exc}")
            return time.perf_counter() - started

        def direct_call(language: str, code: str, expected: int, mode: str = "fail_fast") -> float:
            started = time.perf_counter()
            result = judge_code(problem=problem, suite=suite, language=language, code=code, mode=mode)
            if result.reward != expected:
                errors.append(f"in-process {language}: reward {result.reward} ({result.verdict}), expected {expected}")
            return time.perf_counter() - started

        sb = get_sandbox()
        if "breakdown" in sections:
            breakdown(base, token, sb, ordered, args.rounds, errors)
        if "throughput" in sections:
            throughput(base, token, sb, ordered, args.clients, args.batch, errors, args.languages.split(","))
        if not sections & {"table", "all"}:
            client.close()
            for error in sorted(set(errors))[:10]:
                print(f"error: {error}")
            return 1 if errors else 0
        sb.keep_warm()  # in-process judging keeps spare sandboxes as a sandbox worker does
        header = (f"{'program':<18} {'bare seq':>9} {'in-process':>11} {'API x1':>8} {'API-inproc':>11} {'API-judge':>10} "
                  f"{'API/bare':>9} {'API x8 p50':>11} {'API x8 /s':>10}  (ms, p50)")
        print(header)
        rows: dict[tuple[str, str], dict[str, float]] = {}
        for (language, kind), code in PROGRAMS.items():
            expected = 1 if kind == "accepted" else 0
            prog = sb.compile(language, code)
            assert prog.ok, prog.message
            argv = bench_sandbox.bare_argv(language, prog.path)
            for _ in range(2):  # warm-up: caches on every path
                api_call(language, code, expected)
                direct_call(language, code, expected)
            bare, direct, api, diff = [], [], [], []
            transport.clear()
            for _ in range(args.rounds):
                # each leg starts with this process's spares up, so that none of them is still
                # starting (for the in-process leg) while the next leg runs: a client of the API
                # keeps no sandboxes. The workers' own spares are theirs, and count.
                sb.settle_warm()
                bare.append(bare_run(argv, ordered))
                sb.settle_warm()
                a = api_call(language, code, expected)
                sb.settle_warm()
                d = direct_call(language, code, expected)
                api.append(a)
                direct.append(d)
                diff.append(a - d)
            around_judge = p50(transport)
            conc: list[float] = []
            lock = threading.Lock()

            def one_client(language: str = language, code: str = code, expected: int = expected,
                           conc: list[float] = conc, lock: threading.Lock = lock) -> None:
                for _ in range(args.per_client):
                    elapsed = api_call(language, code, expected)
                    with lock:
                        conc.append(elapsed)

            workers = [threading.Thread(target=one_client) for _ in range(args.concurrent)]
            started = time.perf_counter()
            for t in workers:
                t.start()
            for t in workers:
                t.join()
            rate = len(conc) / (time.perf_counter() - started)
            row = {"bare": p50(bare), "direct": p50(direct), "api": p50(api), "diff": p50(diff),
                   "conc": p50(conc), "rate": rate, "around": around_judge}
            rows[(language, kind)] = row
            print(f"{language + ' ' + kind:<18} {row['bare']:>9.0f} {row['direct']:>11.0f} {row['api']:>8.0f} "
                  f"{row['diff']:>11.0f} {row['around']:>10.0f} {row['api'] / row['bare']:>9.2f} {row['conc']:>11.0f} {rate:>10.1f}  "
                  f"[{load()}]")

        print("\nmode=all, wrong programs (every test run; fail-fast beside it):")
        for language in ("python3", "cpp"):
            code = PROGRAMS[(language, "wrong")]
            every = [direct_call(language, code, 0, mode="all") for _ in range(max(3, args.rounds // 3))]
            api_every = [api_call(language, code, 0, mode="all") for _ in range(max(3, args.rounds // 3))]
            print(f"  {language:<8} in-process all {p50(every):6.0f} ms, API all {p50(api_every):6.0f} ms, "
                  f"fail-fast in-process {rows[(language, 'wrong')]['direct']:6.0f} ms  [{load()}]")

        accepted = rows[("python3", "accepted")]
        api_tests_s = accepted["rate"] * len(tests)
        print("\nPython throughput with two workers:")
        print(f"  API, {args.concurrent} clients, accepted program: {api_tests_s:6.0f} tests/s  [{load()}]")
        sandbox_tests_s = sandbox_throughput(2, len(tests))
        print(f"  sandbox, 2 processes x 40-test batches (bench/sandbox.py): {sandbox_tests_s:6.0f} tests/s "
              f"(README before: 143-147; target >= 3 x)  [{load()}]")
        added = ", ".join(f"{lang} {kind} {v['diff']:.0f} / {v['around']:.0f}" for (lang, kind), v in rows.items())
        print("\ntargets: API x1 p50 <= 0.7 x bare for Python accepted "
              f"({accepted['api'] / accepted['bare']:.2f}), <= 1.5 x for C++ accepted "
              f"({rows[('cpp', 'accepted')]['api'] / rows[('cpp', 'accepted')]['bare']:.2f}); "
              f"API adds <= 15 ms median (API-inproc / API-judge: {added})")
        if errors:
            print(f"\n{len(errors)} errors:")
            for error in sorted(set(errors))[:10]:
                print(f"  {error}")
        client.close()
        return 1 if errors else 0
    finally:
        world.close(args.keep)


if __name__ == "__main__":
    raise SystemExit(main())
