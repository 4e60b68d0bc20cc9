"""One verification, four ways, side by side in one run, on the same 40-test suites.

    .venv/bin/python bench/verify.py [--rounds 15] [--concurrent 8] [--workers 2] [--per-client 6]
        [--only newtext,memory,breakdown,table,all,throughput] [--clients 64] [--batch 256]
        [--newtext-languages python3,cpp,java] [--throughput-tests 1]

Sections (all by default; --only picks some):

- **newtext**: every call in one interleaved run, each beside its bare run: new-text calls
  (every call a program text never seen, as an RL policy's completions are: no cache answers)
  and repeated-text calls, on a 1-test and the 40-test suite, for --newtext-languages
  (python3, cpp; java when named), p50 and p90 of the client's latency, of the judge's own
  time (the worker's judge_ms) and of bare: `python3 -I main.py < in` per test; for C++
  `g++ -O2` (the judge's flags, no precompiled header) once for a new text, then the binary
  per test; for Java `javac` once for a new text, then `java` per test (the judge's flags);
- **memory**: `manage.py serve` started as an operator starts it (--no-demo, against the bench's
  Redis and database), for each --memory-roles layout (full: every worker, the janitor, the LLM
  stage; verify: `serve --role verify`), once the web answers and every worker has registered
  and after --memory-idle-s seconds idle: its processes, RSS and PSS (smaps_rollup) summed over
  the whole tree and per part (serve itself, the web server, sandbox workers, the rest), then
  once more after one verification of a new Python and a new C++ program (the sandbox workers'
  spare sandboxes up);
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
  bare capacity (CPUs x bare tests/s of the same program, one process per CPU), on the 40-test
  suite or (--throughput-tests 1) the 1-test one, where every verification is a new program's
  first test under sustained load;

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


JAVA_GOOD = ("import java.io.*;\nimport java.util.*;\npublic class Main {\n  public static void main(String[] a)"
             " throws IOException {\n    StreamTokenizer t = new StreamTokenizer(new BufferedInputStream(System.in));\n"
             "    t.nextToken(); int n = (int) t.nval; long s = 0;\n    for (int i = 0; i < n; i++) { t.nextToken();"
             " s += (long) t.nval; }\n    System.out.println(s);\n  }\n}\n")
NEW_COMMENT = {"python3": "# {tag}\n", "cpp": "// {tag}\n", "java": "// {tag}\n"}


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.9 * len(ordered)) - 1))] * 1000


def bare_new(language: str, code: str, tests: list[tuple[str, str, str]], *, compile_it: bool,
             work: Path) -> float:
    """Bare, as a user runs a program by hand: compiled (a new text) with the judge's flags and no
    precompiled header, then run per test (stopping at the first wrong answer)."""
    from sandbox import languages

    started = time.perf_counter()
    if language == "python3":
        (work / "main.py").write_text(code)
        argv = [languages.PYTHON, "-I", str(work / "main.py")]
    elif language == "cpp":
        if compile_it:
            (work / "main.cpp").write_text(code)
            subprocess.run([languages.GXX, *languages.cpp_flags("c++17"), "-o", str(work / "main"),
                            str(work / "main.cpp")], check=True, capture_output=True)
        argv = [str(work / "main")]
    else:
        if compile_it:
            (work / "Main.java").write_text(code)
            subprocess.run([languages.JAVAC, "-J-XX:+UseSerialGC", "-encoding", "UTF-8", "-nowarn", "-d",
                            str(work / "classes"), str(work / "Main.java")], check=True, capture_output=True)
        argv = [arg.replace(f"{languages.PROG_DIR}/", f"{work}/") for arg in languages.run_argv("java", main_class="Main")]
    for _, given, wanted in tests:
        out = subprocess.run(argv, input=given.encode(), capture_output=True, check=False)
        if out.returncode != 0 or out.stdout.split() != wanted.encode().split():
            break
    return time.perf_counter() - started


def newtext(base: str, token: str, ordered: list[tuple[str, str, str]], rounds: int, languages_: list[str],
            errors: list[str]) -> None:
    """New-text and repeated-text calls, 1 test and 40, interleaved with their bare runs in one run."""
    import random
    import tempfile

    sources = {"python3": bench_api.PROGRAMS["python3"]["good"], "cpp": bench_api.PROGRAMS["cpp"]["good"],
               "java": JAVA_GOOD}
    cells = [(language, text, pid) for language in languages_ for text in ("new", "repeated")
             for pid in ("sum-1", "sum-n")]
    suites = {"sum-1": ordered[:1], "sum-n": ordered}
    taken: dict[tuple[str, str, str], dict[str, list[float]]] = {c: {"client": [], "judge": [], "bare": []}
                                                                  for c in cells}
    rng = random.Random()  # a fresh order each run: no cell always follows the same one
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="hts-bare-") as scratch:
        work = Path(scratch)
        # the repeated texts (and the C++ and Java binaries bare runs them from) are made once
        for language in languages_:
            (work / f"rep-{language}").mkdir()
            bare_new(language, sources[language], ordered[:1], compile_it=True, work=work / f"rep-{language}")
            for pid in suites:
                for _ in range(2):
                    timed_post(f"{base}/api/v1/verify", token, {"problem": pid, "language": language,
                                                                 "code": sources[language]})
        for _ in range(rounds):
            order = list(cells)
            rng.shuffle(order)  # no cell always follows the same one
            for cell in order:
                language, text, pid = cell
                new = text == "new"
                code = sources[language] + (NEW_COMMENT[language].format(tag=secrets.token_hex(8)) if new else "")
                where = work / (f"new-{secrets.token_hex(4)}" if new else f"rep-{language}")
                where.mkdir(exist_ok=True)
                taken[cell]["bare"].append(bare_new(language, code, suites[pid], compile_it=new, work=where))
                elapsed, status, data, _ = timed_post(f"{base}/api/v1/verify", token,
                                                      {"problem": pid, "language": language, "code": code})
                if status != 200 or data.get("reward") != 1:
                    errors.append(f"newtext {language} {text} {pid}: HTTP {status} {data.get('reward')} "
                                  f"{data.get('verdict')} {str(data.get('detail', ''))[:200]}")
                    continue
                taken[cell]["client"].append(elapsed)
                taken[cell]["judge"].append(data["judge_ms"] / 1000)
            loads.append(os.getloadavg()[0])
    print(f"NEW AND REPEATED PROGRAM TEXTS ({rounds} rounds, every cell once a round in a shuffled order, each call"
          f" beside its bare run; load {min(loads):.1f}-{max(loads):.1f})")
    print(f"  {'language':<8} {'text':<9} {'tests':>5} | {'client p50':>10} {'p90':>7} | {'judge p50':>9} {'p90':>7} | "
          f"{'bare p50':>8} {'p90':>7} | {'client/bare':>11} {'judge/bare':>10}")
    for cell in cells:
        language, text, pid = cell
        got = taken[cell]
        if not got["client"]:
            continue
        c, j, b = p50(got["client"]), p50(got["judge"]), p50(got["bare"])
        print(f"  {language:<8} {text:<9} {len(suites[pid]):>5} | {c:>10.1f} {p90(got['client']):>7.1f} | "
              f"{j:>9.1f} {p90(got['judge']):>7.1f} | {b:>8.1f} {p90(got['bare']):>7.1f} | {c / b:>11.2f} {j / b:>10.2f}")
    print("  client: POST /api/v1/verify on a kept-open connection; judge: the worker's judge_ms; bare: see --help\n")


def tree_memory(root: int) -> list[tuple[int, str, int, int]]:
    """(pid, command line, RSS KiB, PSS KiB) of `root` and every descendant (threads' children too)."""
    found: list[tuple[int, str, int, int]] = []
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            children: list[str] = []
            for task in os.listdir(f"/proc/{pid}/task"):
                children += Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        except OSError:
            continue  # ended while we looked
        sizes = {line.split(":")[0]: int(line.split()[1]) for line in rollup.splitlines()[1:] if line.endswith("kB")}
        found.append((pid, command, sizes.get("Rss", 0), sizes.get("Pss", 0)))
        pending += map(int, children)
    return found


def memory_part(command: str) -> str:
    """Which part of a node a process of its tree belongs to."""
    for needle, part in (("gunicorn", "web"), ("sandbox-worker", "sandbox workers"), ("bwrap", "sandbox workers"),
                         ("hts-runner", "sandbox workers"), ("zygote.py", "sandbox workers"),
                         ("generation-worker", "generation worker"), ("llm_worker", "LLM worker"),
                         ("janitor", "janitor"), ("redis-server", "redis"), ("serve", "serve")):
        if needle in command:
            return part
    return "other"


def memory(base_env: dict[str, str], token: str, roles: list[str], idle_s: float, errors: list[str]) -> None:
    import signal
    import urllib.request

    print(f"NODE MEMORY (serve --no-demo; idle {idle_s:g} s after the web answers and the workers register; "
          f"{os.cpu_count()} CPUs)")
    print(f"  {'layout':<8} {'when':<22} {'procs':>5} {'RSS MiB':>8} {'PSS MiB':>8} | PSS MiB by part")
    for role in roles:
        port = bench_api.free_port()
        argv = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--host", "127.0.0.1",
                "--port", str(port), *(["--role", role] if role != "full" else [])]
        log = open(Path(base_env["HARDTESTS_VAR_DIR"]) / f"serve-{role}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(argv, env=base_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            from rq.worker import Worker

            from core.queues import verification_queue

            queue = verification_queue()
            before = Worker.count(queue=queue, connection=queue.connection)
            deadline = time.monotonic() + 180
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                        pass
                    if Worker.count(queue=queue, connection=queue.connection) >= before + 2:
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"serve --role {role} did not come up; see {log.name}")
                time.sleep(0.5)
            time.sleep(idle_s)
            shots = [("idle", tree_memory(proc.pid))]
            for language in ("python3", "cpp"):
                code = bench_api.PROGRAMS[language]["good"] + NEW_COMMENT[language].format(tag=secrets.token_hex(8))
                _, status, data, _ = timed_post(f"http://127.0.0.1:{port}/api/v1/verify", token,
                                                {"problem": "sum-n", "language": language, "code": code})
                if status != 200 or data.get("reward") != 1:
                    errors.append(f"memory {role} {language}: HTTP {status} {data.get('reward')}")
            time.sleep(2)  # the spares the calls asked for come up
            shots.append(("after 2 verifications", tree_memory(proc.pid)))
            for when, found in shots:
                parts: dict[str, int] = {}
                for _, command, _, pss in found:
                    parts[memory_part(command)] = parts.get(memory_part(command), 0) + pss
                by_part = ", ".join(f"{part} {kib / 1024:.0f}" for part, kib in sorted(parts.items(), key=lambda x: -x[1]))
                print(f"  {role:<8} {when:<22} {len(found):>5} {sum(f[2] for f in found) / 1024:>8.0f} "
                      f"{sum(f[3] for f in found) / 1024:>8.0f} | {by_part}  [{load()}]")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            log.close()
    print("  RSS counts a page shared by several processes in each; PSS shares it out (the node's real footprint)\n")


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
               errors: list[str], languages: list[str], problem: str = "sum-n") -> None:
    """`ordered`: the tests of `problem` (sum-n: the 40-test suite; sum-1: its first test)."""
    from concurrent.futures import ProcessPoolExecutor

    cpus = os.cpu_count() or 1
    print(f"THROUGHPUT ({clients} concurrent clients; /verify/batch of {batch}; {cpus} CPUs; "
          f"{problem}: {len(ordered)} test{'s' if len(ordered) != 1 else ''})")
    # Every program text is unique (as an RL policy's completions are): a C++ one is compiled per
    # verification, which the bare capacity (compiled once) does not pay.
    for language in languages:
        # two programs a client on the 40-test suite; on a 1-test one, as many tests in all
        singles = clients * max(2, 80 // len(ordered))
        codes = bench_api.programs(language, max(singles, batch), f"tp-{secrets.token_hex(4)}")
        if len(ordered) == 1:
            # sum-1's one test is a hacking test: only the program that overflows fails it
            early = bench_api.PROGRAMS[language]["wrong_early"]
            codes = [(code, 0 if code.startswith(early) else 1) for code, _ in codes]
        # the same programs' bare capacity: every CPU running them one test after another
        argvs = []
        for code, _ in codes[:4]:
            prog = sb.compile(language, code)
            argvs.append(bench_sandbox.bare_argv(language, prog.path))
        started = time.perf_counter()
        rounds = max(1, 40 // len(ordered))  # as much bare work for a 1-test suite as for the 40-test one
        with ProcessPoolExecutor(cpus) as pool:
            runs = list(pool.map(_bare_tests, [(argvs[i % len(argvs)], ordered * rounds) for i in range(cpus * 2)]))
        bare_tests_s = sum(runs) / (time.perf_counter() - started)
        # concurrent single verifications
        done: list[tuple[int, int]] = []
        lock = threading.Lock()
        todo = list(codes[:singles])
        threads = [threading.Thread(target=_client_loop, args=(base, token, language, todo, lock, done, errors,
                                                               problem)) for _ in range(clients)]
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
        items = [{"problem": problem, "language": language, "code": code} for code, _ in codes[:batch]]
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
                 done: list[tuple[int, int]], errors: list[str], problem: str = "sum-n") -> None:
    while True:
        with lock:
            if not todo:
                return
            code, expected = todo.pop()
        try:
            _, status, data, _ = timed_post(f"{base}/api/v1/verify", token,
                                            {"problem": problem, "language": language, "code": code})
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
    parser.add_argument("--only", default="newtext,memory,breakdown,table,all,throughput",
                        help="sections to run (comma-separated)")
    parser.add_argument("--memory-roles", default="full,verify",
                        help="serve layouts of the memory section (full, verify)")
    parser.add_argument("--memory-idle-s", type=float, default=10.0,
                        help="seconds the node stays idle before its memory is read")
    parser.add_argument("--newtext-languages", default="python3,cpp",
                        help="languages of the newtext section (python3, cpp, java)")
    parser.add_argument("--clients", type=int, default=64, help="concurrent clients of the throughput section")
    parser.add_argument("--batch", type=int, default=256, help="programs in the throughput section's batch")
    parser.add_argument("--languages", default="python3,cpp", help="languages of the throughput section")
    parser.add_argument("--throughput-tests", type=int, choices=(1, 40), default=40,
                        help="the throughput section's suite: the 40-test one, or the 1-test one (a new "
                             "program's first test, under sustained load)")
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

        if "memory" in sections:
            # before the bench's own workers start: the calls it makes go to the node measured
            memory(dict(os.environ), token, args.memory_roles.split(","), args.memory_idle_s, errors)
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
        if "newtext" in sections:
            newtext(base, token, ordered, args.rounds, args.newtext_languages.split(","), errors)
        if "breakdown" in sections:
            breakdown(base, token, sb, ordered, args.rounds, errors)
        if "throughput" in sections:
            on, tests_of = ("sum-1", ordered[:1]) if args.throughput_tests == 1 else ("sum-n", ordered)
            throughput(base, token, sb, tests_of, args.clients, args.batch, errors, args.languages.split(","), problem=on)
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
