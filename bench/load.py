#!/usr/bin/env python3
"""Load on a whole node: `serve` (gunicorn, sandbox workers, janitor, embedded Redis) driven by
1, 8, 32 and 64 clients, first with single verifications, then with batches.

    .venv/bin/python bench/load.py                       # 60 s per level, its own node
    .venv/bin/python bench/load.py --seconds 10 --clients 1,8
    .venv/bin/python bench/load.py --url http://host:8000 --token htk_...   # a running node

Each level prints verifications/s, tests/s, p50/p95/p99 latency, answers by status and code,
and the node's RSS, open fds, processes, Redis keys and temporary files at its start, middle and
end. At the end a second table shows, at the start, middle and end of the whole run, the RSS of
each kind of process (serve's children by name; their own children by command) and the Redis
keys by pattern with Redis's own memory: what grows from the middle to the end is a leak, what
grows only at first is a high-water mark (Python's allocator keeps the arenas it has used; a
worker starts its spare sandboxes on first use). `--repeat 3` runs the levels three times. Half the programs are right (AC), half wrong (WA); any other
verdict is counted as `wrong_verdict`. A verification answered 429/503 is not retried within
its slot: it counts as an error by its code, and the client waits its Retry-After (capped).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, cast

REPO = Path(__file__).resolve().parent.parent
GOOD = "a, b = map(int, input().split())\nprint(a + b)\n"
WRONG = "a, b = map(int, input().split())\nprint(a - b)\n"
SEED = """
from django.contrib.auth.models import User
from api.tokens import token_create
from problems.models import Problem
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
p = Problem.objects.create(source="load", pid="ab", title="A+B", time_limit_ms=2000, memory_limit_mb=256)
s = suite_create(problem=p, origin="generated")
suite_add_tests(suite=s, tests=[NewTest(input=f"{i} {i * 7}\\n", output=f"{i * 8}\\n", kind="regular")
                                for i in range(8)])
suite_activate(suite=s)
print("TOKEN", token_create(user=User.objects.create_user("load"), name="load", rate_limit_per_minute=10**6).secret)
"""


def post(url: str, body: Any, token: str, timeout: float = 180) -> tuple[int, dict[str, Any], str | None]:
    request = urllib.request.Request(url, data=json.dumps(body).encode() if body is not None else None,
                                     method="POST" if body is not None else "GET",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read()), response.headers.get("Retry-After")
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw), exc.headers.get("Retry-After")
        except ValueError:
            return exc.code, {"code": "not_json"}, exc.headers.get("Retry-After")


class Node:
    """A `serve` of its own in a temporary directory (SQLite, embedded Redis)."""

    def __init__(self, workers: int) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="hardtests-load-"))
        self.root.chmod(0o755)
        (self.root / "tmp").mkdir(mode=0o1777)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("HARDTESTS_", "DATABASE_URL", "REDIS_URL", "DJANGO_"))}
        self.env = {**keep, "HARDTESTS_VAR_DIR": str(self.root / "var"),
                    "HARDTESTS_MEDIA_ROOT": str(self.root / "var" / "media"),
                    "HARDTESTS_SANDBOX_CACHE": str(self.root / "sandbox-cache"), "TMPDIR": str(self.root / "tmp"),
                    "DATABASE_URL": f"sqlite:///{self.root / 'db.sqlite3'}", "DEBUG": "0", "SECRET_KEY": "load",
                    "HARDTESTS_SANDBOX_WORKERS": str(workers), "HARDTESTS_GENERATION_WORKERS": "0",
                    "HARDTESTS_LLM_WORKERS": "0", "PYTHONUNBUFFERED": "1",
                    # every request judged: the load is the sandbox's, not the verdict cache's
                    "HARDTESTS_API_VERDICT_CACHE_S": "0"}
        self.proc: subprocess.Popen[bytes] | None = None

    def manage(self, *args: str) -> str:
        done = subprocess.run([sys.executable, str(REPO / "manage.py"), *args], env=self.env, cwd=REPO,
                              capture_output=True, text=True, timeout=600)
        if done.returncode:
            raise SystemExit(f"manage.py {args[0]} failed: {done.stderr[-2000:]}")
        return done.stdout

    def start(self) -> str:
        self.manage("migrate", "--noinput")
        token = str(re.findall(r"TOKEN (\S+)", self.manage("shell", "-c", SEED))[-1])
        log = (self.root / "serve.log").open("wb")
        self.proc = subprocess.Popen([sys.executable, str(REPO / "manage.py"), "serve", "--port", str(self.port),
                                      "--no-demo"], env=self.env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"serve exited: {(self.root / 'serve.log').read_text()[-3000:]}")
            try:
                status, _, _ = post(f"{self.url}/api/v1/verify", {"problem": "load:ab", "language": "python3",
                                                                  "code": GOOD}, token, timeout=30)
                if status == 200:
                    return token
            except OSError:
                pass
            time.sleep(0.5)
        raise SystemExit("the node did not answer a verification within 300 s")

    def stop(self) -> int:
        code = -1
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            code = self.proc.wait(timeout=300)
        shutil.rmtree(self.root, ignore_errors=True)
        return code

    def names(self) -> dict[int, str]:
        """serve's children by pid, as its log names them (the latest of each name)."""
        text = (self.root / "serve.log").read_text(errors="replace")
        return {int(pid): name for name, pid in re.findall(r"started (\S+) \(pid (\d+)\)", text)}

    def resources(self, detail: bool = False) -> dict[str, Any]:
        """Totals; with `detail`, also RSS (MB) and count per kind of process and Redis keys by pattern."""
        assert self.proc is not None
        pids, parents = _tree(self.proc.pid)
        names = {self.proc.pid: "serve", **self.names()}
        rss = fds = 0
        kinds: dict[str, list[float]] = {}
        for pid in pids:
            try:
                kb = int(re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text()).group(1))  # type: ignore[union-attr]
                fds += len(os.listdir(f"/proc/{pid}/fd"))
            except (OSError, AttributeError):
                continue
            rss += kb
            kind = _kind(pid, parents, names)
            entry = kinds.setdefault(kind, [0.0, 0])
            entry[0] += kb / 1024
            entry[1] += 1
        keys, memory = -1, -1
        patterns: dict[str, Any] = {}
        try:
            import redis

            connection = redis.Redis(unix_socket_path=str(self.root / "var" / "redis" / "redis.sock"))
            keys = int(cast(int, connection.dbsize()))
            if detail:
                memory = int(cast(dict[str, Any], connection.info("memory"))["used_memory"]) // 1024
                samples: dict[str, list[bytes]] = {}
                for key in connection.scan_iter(count=1000):
                    pattern = _pattern(key.decode("utf-8", "replace"))
                    patterns[pattern] = patterns.get(pattern, 0) + 1
                    if len(samples.setdefault(pattern, [])) < 20:
                        samples[pattern].append(key)
                # each pattern's memory: its count times the mean MEMORY USAGE of up to 20 of its keys
                for pattern, some in samples.items():
                    sizes = [int(cast(int, connection.memory_usage(key)) or 0) for key in some]
                    sizes = [size for size in sizes if size]
                    kb = patterns[pattern] * sum(sizes) / max(1, len(sizes)) / 1024
                    patterns[pattern] = f"{patterns[pattern]} ({kb:.0f} KB)"
        except Exception:  # noqa: BLE001 - a measurement, not the node's health
            pass
        temp = sum(1 for _ in (self.root / "tmp").rglob("*"))
        out: dict[str, Any] = {"rss_mb": rss // 1024, "fds": fds, "processes": len(pids), "redis_keys": keys,
                               "temp_files": temp}
        if detail:
            out.update(rss_by_kind={k: [round(v[0], 1), v[1]] for k, v in sorted(kinds.items())},
                       redis_patterns=dict(sorted(patterns.items())), redis_used_kb=memory)
        return out


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tree(root: int) -> tuple[list[int], dict[int, int]]:
    """The pids of `root`'s tree, and each one's parent."""
    children: dict[int, list[int]] = {}
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
            parents[int(entry.name)] = ppid
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out, parents


def _command(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    return os.path.basename(argv[0].decode("utf-8", "replace")) or "?"


def _kind(pid: int, parents: dict[int, int], names: dict[int, str]) -> str:
    """serve's child by its name (workers' numbers dropped); a descendant as the nearest named
    ancestor's kind / its own command ("sandbox-worker / bwrap")."""
    if pid in names:
        return re.sub(r"-\d+$", "", names[pid])
    ancestor = parents.get(pid)
    while ancestor is not None and ancestor not in names:
        ancestor = parents.get(ancestor)
    owner = re.sub(r"-\d+$", "", names[ancestor]) if ancestor is not None else "?"
    return f"{owner} / {_command(pid)}"


def _pattern(key: str) -> str:
    """A Redis key with its ids replaced (rq:job:<id>, hardtests:api:batch:<id>)."""
    key = re.sub(r"[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<id>", key)
    return re.sub(r"\d{3,}", "<n>", key)


def tests_run(result: dict[str, Any]) -> int:
    return int(result.get("total", 0)) if result.get("verdict") == "AC" else int(result.get("passed", 0)) + 1


class Level:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.answers: dict[str, int] = {}
        self.verifications = self.tests = 0
        self.middle: dict[str, Any] = {}

    def count(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.answers[key] = self.answers.get(key, 0) + n


def _judge(level: Level, result: dict[str, Any], expected: str) -> None:
    with level.lock:
        level.verifications += 1
        level.tests += tests_run(result)
    level.count("200 ok" if result.get("verdict") == expected else "200 wrong_verdict")


def client_single(url: str, token: str, level: Level, until: float, index: int) -> None:
    n = index
    while time.monotonic() < until:
        code, expected = (GOOD, "AC") if n % 2 == 0 else (WRONG, "WA")
        n += 1
        started = time.monotonic()
        try:
            status, body, retry = post(f"{url}/api/v1/verify", {"problem": "load:ab", "language": "python3",
                                                                "code": code}, token)
        except OSError as exc:
            level.count(f"no answer ({type(exc).__name__})")
            continue
        if status == 200:
            with level.lock:
                level.latencies.append(time.monotonic() - started)
            _judge(level, body, expected)
        else:
            level.count(f"{status} {body.get('code')}{'' if retry else ' (no Retry-After)'}")
            time.sleep(min(2.0, float(retry or 1)))


def client_batch(url: str, token: str, level: Level, until: float, size: int) -> None:
    items = [{"problem": "load:ab", "language": "python3", "code": GOOD if i % 2 == 0 else WRONG} for i in range(size)]
    expected = ["AC" if i % 2 == 0 else "WA" for i in range(size)]
    while time.monotonic() < until:
        started = time.monotonic()
        try:
            status, body, retry = post(f"{url}/api/v1/verify/batch", {"items": items}, token)
            while status == 202 and body.get("status") != "finished":
                time.sleep(0.5)
                status2, body, retry = post(f"{url}/api/v1/jobs/{body['job_id']}", None, token)
                if status2 != 200:
                    status = status2
                    break
        except OSError as exc:
            level.count(f"no answer ({type(exc).__name__})")
            continue
        if status in (200, 202) and body.get("status") == "finished":
            with level.lock:
                level.latencies.append(time.monotonic() - started)
            for item, want in zip(body["items"], expected, strict=True):
                if item["status"] == "finished":
                    _judge(level, item["result"], want)
                else:
                    level.count(f"item {item['status']}")
        else:
            level.count(f"{status} {body.get('code')}{'' if retry else ' (no Retry-After)'}")
            time.sleep(min(2.0, float(retry or 1)))


def run_level(url: str, token: str, clients: int, seconds: float, batch: int,
              middle: Any = None) -> Level:
    """`clients` threads for `seconds`; `middle()` is called half way (a measurement)."""
    level = Level()
    until = time.monotonic() + seconds
    threads = [threading.Thread(target=client_batch if batch else client_single,
                                args=(url, token, level, until, batch if batch else i), daemon=True)
               for i in range(clients)]
    for thread in threads:
        thread.start()
    if middle is not None:
        time.sleep(seconds / 2)
        level.middle = middle()
    for thread in threads:
        thread.join()
    return level


def pct(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:.0f}"


def print_snapshots(snapshots: list[tuple[str, dict[str, Any]]]) -> None:
    """RSS per kind of process and Redis keys per pattern at the run's start, middle and end."""
    names = [name for name, _ in snapshots]
    print(f"\n| process (count) | RSS MB: {' → '.join(names)} |\n|---|---|")
    kinds = sorted({k for _, snap in snapshots for k in snap.get("rss_by_kind", {})})
    for kind in kinds:
        cells = [snap.get("rss_by_kind", {}).get(kind) for _, snap in snapshots]
        shown = " → ".join(f"{c[0]:.0f} ({c[1]})" if c else "-" for c in cells)
        print(f"| {kind} | {shown} |")
    print(f"| **all** | {' → '.join(str(snap.get('rss_mb', '-')) for _, snap in snapshots)} |")
    print(f"\n| Redis key pattern | keys: {' → '.join(names)} |\n|---|---|")
    patterns = sorted({k for _, snap in snapshots for k in snap.get("redis_patterns", {})})
    for pattern in patterns:
        print(f"| `{pattern}` | {' → '.join(str(snap.get('redis_patterns', {}).get(pattern, 0)) for _, snap in snapshots)} |")
    totals = [f"{snap.get('redis_keys', '-')} ({snap.get('redis_used_kb', '-')} KB)" for _, snap in snapshots]
    print(f"| **all** (Redis used_memory) | {' → '.join(totals)} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="1,8,32,64", help="client counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds per level")
    parser.add_argument("--batch", type=int, default=8, help="programs per batch in the batch levels (0: none)")
    parser.add_argument("--workers", type=int, default=2, help="sandbox workers of the node this starts")
    parser.add_argument("--warmup", type=float, default=5.0,
                        help="seconds of load before the first level (the workers' spare sandboxes start)")
    parser.add_argument("--repeat", type=int, default=1, help="run the levels this many times (a leak grows "
                        "from one round to the next; a high-water mark does not)")
    parser.add_argument("--url", help="a running node instead of one of its own")
    parser.add_argument("--token", help="an API token of that node")
    args = parser.parse_args()
    node = None
    if args.url:
        if not args.token:
            parser.error("--url needs --token")
        url, token = args.url.rstrip("/"), args.token
    else:
        node = Node(args.workers)
        print(f"starting a node in {node.root} ({args.workers} sandbox workers) ...", flush=True)
        token = node.start()
        url = node.url
    rows: list[dict[str, Any]] = []
    snapshots: list[tuple[str, dict[str, Any]]] = []
    try:
        if args.warmup > 0:
            run_level(url, token, 2, args.warmup, 0)
        modes = [("single", 0)] + ([("batch", args.batch)] if args.batch else [])
        levels = [(r, clients, mode, size) for r in range(1, args.repeat + 1)
                  for clients in [int(c) for c in args.clients.split(",")] for mode, size in modes]
        half = len(levels) // 2
        if node:
            snapshots.append(("start", node.resources(detail=True)))
        for i, (round_, clients, mode, size) in enumerate(levels):
            before = node.resources() if node else {}
            started = time.monotonic()
            middle = None
            if node:
                def middle(i: int = i) -> dict[str, Any]:
                    # the run's middle snapshot is taken in the middle of its middle level
                    return node.resources(detail=i == half)
            level = run_level(url, token, clients, args.seconds, size, middle)
            elapsed = time.monotonic() - started
            time.sleep(2)  # let the last results' bookkeeping settle before measuring
            after = node.resources() if node else {}
            if node and i == half:
                snapshots.append(("middle", level.middle))
            row = {
                "round": round_, "mode": f"{mode}{f' x{size}' if size else ''}", "clients": clients,
                "verifications_per_s": round(level.verifications / elapsed, 1),
                "tests_per_s": round(level.tests / elapsed, 1),
                "p50_ms": pct(level.latencies, 0.50), "p95_ms": pct(level.latencies, 0.95),
                "p99_ms": pct(level.latencies, 0.99), "answers": level.answers,
                "before": before, "middle": {k: v for k, v in level.middle.items() if not isinstance(v, dict)},
                "after": after,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
        if node:
            snapshots.append(("end", node.resources(detail=True)))
            print(json.dumps({"snapshots": dict(snapshots)}), flush=True)
    finally:
        code = node.stop() if node else 0
    print("\n| round | mode | clients | verif/s | tests/s | p50 ms | p95 ms | p99 ms | answers | "
          "RSS MB | fds | procs | Redis keys | temp files |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        b, m, a = r["before"], r["middle"], r["after"]

        def bma(key: str, b: dict[str, int] = b, m: dict[str, int] = m, a: dict[str, int] = a) -> str:
            return f"{b.get(key, '-')} → {m.get(key, '-')} → {a.get(key, '-')}"

        answers = ", ".join(f"{k}: {v}" for k, v in sorted(r["answers"].items()))
        print(f"| {r['round']} | {r['mode']} | {r['clients']} | {r['verifications_per_s']} | {r['tests_per_s']} | "
              f"{r['p50_ms']} | {r['p95_ms']} | {r['p99_ms']} | {answers} | {bma('rss_mb')} | {bma('fds')} | "
              f"{bma('processes')} | {bma('redis_keys')} | {bma('temp_files')} |")
    if snapshots:
        print_snapshots(snapshots)
    if node:
        print(f"\nnode stopped with exit code {code}")
    bad = sum(v for r in rows for k, v in r["answers"].items()
              if "wrong_verdict" in k or k.startswith(("500", "no answer")) or "no Retry-After" in k)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
