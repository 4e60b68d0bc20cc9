"""A killed test run leaves nothing behind: a pytest run (with xdist, as `make test` runs) whose
test started an RQ worker and a helper is SIGKILLed, as a CI timeout does; within seconds no
process it started is left (before, the worker lived on and could take the next run's jobs
from a Redis at the same socket path)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.deploy.conftest import pid_alive, processes_mentioning

pytestmark = [pytest.mark.slow]

INNER = '''
import os, subprocess, sys, time
from pathlib import Path
from tests.conftest import REPO, worker_env

def test_starts_children_and_waits():
    env = dict(worker_env(), KILLED_RUNNER_MARK=os.environ["KILLED_RUNNER_MARK"])
    subprocess.Popen([sys.executable, str(REPO / "manage.py"), "rqworker", "api"], env=env, cwd=REPO,
                     start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    subprocess.Popen(["sleep", "600"], env=env, start_new_session=True)
    time.sleep(3)  # the worker has started
    Path(os.environ["KILLED_RUNNER_MARK"], "ready").write_text("ready")
    time.sleep(600)
'''


@pytest.mark.heavy(seconds=30)
def test_a_sigkilled_test_run_leaves_no_process_behind(tmp_path: Path) -> None:
    inner = tmp_path / "test_inner.py"
    inner.write_text(INNER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["KILLED_RUNNER_MARK"] = str(tmp_path)
    runner = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", "-n", "1",
         "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"), "--basetemp", str(tmp_path / "base"),
         str(inner)],
        cwd=REPO, env=env, stdout=(tmp_path / "runner.log").open("wb"), stderr=subprocess.STDOUT,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not (tmp_path / "ready").exists():
            assert runner.poll() is None, (tmp_path / "runner.log").read_text()[-3000:]
            assert time.monotonic() < deadline, (tmp_path / "runner.log").read_text()[-3000:]
            time.sleep(0.2)
        started = [pid for pid in processes_mentioning(tmp_path) if pid_alive(pid)]
        assert len(started) >= 4  # the runner, its xdist worker, the RQ worker, the helper (and Redis)
        os.kill(runner.pid, signal.SIGKILL)  # the runner only, as a CI timeout kills it
        runner.wait(timeout=10)
        killed = time.monotonic()
        while [pid for pid in processes_mentioning(tmp_path) if pid_alive(pid)] and time.monotonic() - killed < 10:
            time.sleep(0.1)
        left = [pid for pid in processes_mentioning(tmp_path) if pid_alive(pid)]
        gone_s = time.monotonic() - killed
    finally:
        for pid in processes_mentioning(tmp_path):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    commands = [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120] for pid in left
                if Path(f"/proc/{pid}").exists()]
    assert left == [], f"{len(left)} of {len(started)} processes outlived the killed run: {commands}"
    assert gone_s < 5
