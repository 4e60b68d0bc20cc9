"""How fast a `serve` node answers, heals and stops after a fault, with the shipped defaults.

    .venv/bin/python bench/faults.py [--only stop,no_workers,postgres,boot] [--runs N]

Each measurement starts its own node (tests/deploy/faults.py: `serve` in a throwaway directory,
a private PostgreSQL (boot and no_workers: SQLite), the embedded Redis), with the shipped
HARDTESTS_WORKER_* and HARDTESTS_JANITOR_* settings, and prints one line of numbers:

- stop: seconds from SIGTERM to `serve`'s exit, idle, and busy (6 clients verifying a program of
  about a second of CPU each: what is in flight is answered first);
- no_workers: the embedded Redis is killed (serve restarts it), the workers register again,
  then every RQ worker is stopped (SIGSTOP: a hung machine): seconds until the API answers
  `no_workers`, and whether it still does after the janitor's next reaping (not `timeout`);
- postgres: PostgreSQL stopped 15 s under 4 clients: seconds from its return to the first right
  answer, to the last refusal, and to the janitor's first clean full pass;
- boot: a gunicorn worker SIGKILLed under its master: seconds until the node answers again,
  with the app preloaded in the master (shipped) and without.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.deploy.conftest import free_port, processes_mentioning  # noqa: E402
from tests.deploy.faults import SLOW_PY, WRONG_PY, Load, Stack, seed, stack_env  # noqa: E402
from tests.deploy.services import PostgresCluster  # noqa: E402

SHIPPED = ("HARDTESTS_WORKER_BEAT_S", "HARDTESTS_WORKER_DEAD_S", "HARDTESTS_WORKER_CHECK_S",
           "HARDTESTS_JANITOR_FAST_S", "HARDTESTS_JANITOR_PERIOD_S")


def _root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="hardtests-bench-faults-"))
    root.chmod(0o755)  # the sandbox runs programs as nobody from the node's sandbox cache
    return root


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = stack_env(root, **extra)
    for name in SHIPPED:
        env.pop(name, None)
    env["HARDTESTS_API_SYNC_TIMEOUT_S"] = extra.get("HARDTESTS_API_SYNC_TIMEOUT_S", "60")
    return env


def _pids(root: Path, needle: bytes) -> list[int]:
    return [pid for pid in processes_mentioning(root) if needle in Path(f"/proc/{pid}/cmdline").read_bytes()]


def bench_stop() -> dict[str, float]:
    root = _root()
    with PostgresCluster() as pg:
        env = _env(root, DATABASE_URL=pg.url)
        stack = Stack(root, env)
        stack.token = seed(env)
        stack.start()
        time.sleep(2)
        began = time.monotonic()
        assert stack.stop() == 0
        idle = time.monotonic() - began
        stack.start()
        load = Load(stack, clients=6, programs=((SLOW_PY, "AC"), (WRONG_PY, "WA"))).start()
        time.sleep(3)
        began = time.monotonic()
        assert stack.stop() == 0
        busy = time.monotonic() - began
        answers = load.stop()
    in_flight = [a for a in answers if a.at < began]
    return {"idle_stop_s": round(idle, 2), "busy_stop_s": round(busy, 2), "busy_in_flight": len(in_flight),
            "busy_in_flight_answered": sum(1 for a in in_flight if a.status is not None),
            "busy_in_flight_verdicts": sum(1 for a in in_flight if a.status == 200)}


def bench_no_workers() -> dict[str, Any]:
    root = _root()
    env = _env(root)
    stack = Stack(root, env)
    stack.token = seed(env)
    stack.start()
    try:
        [redis_pid] = _pids(root, b"redis-server")
        os.kill(redis_pid, signal.SIGKILL)
        stack.wait_for(lambda: stack.verify(WRONG_PY)[0] == 200, "a verdict after the Redis restart", timeout=120)
        workers = _pids(root, b"rqworker")
        for pid in workers:
            os.kill(pid, signal.SIGSTOP)
        stopped = time.monotonic()
        answers = []
        while time.monotonic() - stopped < 60:
            status, body = stack.verify(WRONG_PY, timeout=90)
            answers.append((round(time.monotonic() - stopped, 1), status, body.get("code")))
            if body.get("code") == "no_workers":
                break
        first = time.monotonic() - stopped
        time.sleep(12)  # the janitor's fast pass (10 s) reaps the dead workers
        after = stack.verify(WRONG_PY)[1].get("code")
        for pid in workers:
            os.kill(pid, signal.SIGCONT)
    finally:
        stack.stop(signal.SIGKILL)
    seen: dict[str, int] = {}
    for _, status, code in answers:
        seen[f"{status} {code or ''}".strip()] = seen.get(f"{status} {code or ''}".strip(), 0) + 1
    # (a question asked before is answered by the verdict cache while the stopped workers still
    # count: 200 until then)
    return {"no_workers_after_s": round(first, 1), "answers_until_then": seen, "after_reaping": after}


def bench_postgres() -> dict[str, Any]:
    import redis

    root = _root()
    with PostgresCluster() as pg:
        env = _env(root, DATABASE_URL=pg.url)
        stack = Stack(root, env)
        stack.token = seed(env)
        stack.start()
        load = Load(stack, clients=4).start()
        try:
            time.sleep(3)
            pg.stop()
            time.sleep(15)
            pg.start()
            back_at = time.monotonic()
            first_right = load.right_answer_after(back_at)
            time.sleep(25)
            answers = load.since(back_at)
            refusals = [a for a in answers if a.status != 200]
            last_refusal = max((a.at - back_at for a in refusals), default=0.0)
            client = redis.Redis(unix_socket_path=str(root / "var" / "redis" / "redis.sock"))
            raw = client.get("hardtests:janitor:last")
            janitor = json.loads(raw) if raw else {}
        finally:
            load.stop()
            stack.stop()
    codes: dict[str, int] = {}
    for a in refusals:
        codes[str(a.body.get("code"))] = codes.get(str(a.body.get("code")), 0) + 1
    return {"first_right_answer_s": round(first_right, 1), "last_refusal_s": round(last_refusal, 1),
            "refusals_after_return": codes, "janitor_errors_now": janitor.get("errors")}


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=2).close()
        return True
    except OSError:
        return False


def bench_boot(preload: bool) -> dict[str, float]:
    root = _root()
    env = _env(root)
    seed(env)
    port = free_port()
    config = root / "gunicorn_bench.py"
    config.write_text(f"from hardtests_web.ops.gunicorn import *  # noqa\npreload_app = {preload}\n")
    env.update(HARDTESTS_WEB_WORKERS="1", HARDTESTS_WEB_BIND=f"127.0.0.1:{port}", PYTHONPATH=str(root))
    url = f"http://127.0.0.1:{port}/healthz"
    began = time.monotonic()
    master = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:gunicorn_bench", "hardtests_web.wsgi"],
                              cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        while not _answers(url):
            time.sleep(0.05)
        start_s = time.monotonic() - began
        [worker] = [int(p) for p in subprocess.check_output(["pgrep", "-P", str(master.pid)]).split()]
        os.kill(worker, signal.SIGKILL)
        killed = time.monotonic()
        time.sleep(0.05)
        while not _answers(url):
            time.sleep(0.05)
        again_s = time.monotonic() - killed
    finally:
        os.killpg(master.pid, signal.SIGKILL)
        master.wait()
    return {"start_s": round(start_s, 2), "serving_again_after_worker_kill_s": round(again_s, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="stop,no_workers,postgres,boot")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    wanted = args.only.split(",")
    for run in range(args.runs):
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        if "stop" in wanted:
            print(json.dumps({"run": run, "load": load, "stop": bench_stop()}), flush=True)
        if "no_workers" in wanted:
            print(json.dumps({"run": run, "load": load, "no_workers": bench_no_workers()}), flush=True)
        if "postgres" in wanted:
            print(json.dumps({"run": run, "load": load, "postgres": bench_postgres()}), flush=True)
        if "boot" in wanted:
            for preload in (True, False):
                print(json.dumps({"run": run, "load": load, "preload": preload, "boot": bench_boot(preload)}),
                      flush=True)


if __name__ == "__main__":
    main()
