"""`serve` stops in seconds: an idle node within 10 s, a busy one within its drain deadline
(docs/operations.md: HARDTESTS_API_SYNC_TIMEOUT_S + 15 s for the web server to answer what it
holds), and a SIGKILLed `serve` leaves no child (gunicorn's workers included) alive for more
than a few seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.conftest import pid_alive, processes_mentioning
from tests.deploy.faults import SLOW_PY, WRONG_PY, Load, Stack, assert_truthful, seed, stack_env, summary
from tests.deploy.services import RedisServer

pytestmark = [pytest.mark.slow]

IDLE_STOP_S = 10.0


@pytest.fixture
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hardtests-stop-"))
    path.chmod(0o755)  # the sandbox runs programs as nobody from the stack's sandbox cache
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


@pytest.mark.heavy(seconds=25)
def test_an_idle_node_stops_within_10_s_and_a_busy_one_within_its_drain_deadline(root: Path) -> None:
    env = stack_env(root)
    stack = Stack(root, env)
    stack.token = seed(env)
    stack.start()
    time.sleep(1)
    began = time.monotonic()
    assert stack.stop(signal.SIGTERM) == 0, stack.text()[-3000:]
    idle_s = time.monotonic() - began
    assert idle_s <= IDLE_STOP_S, stack.text()[-3000:]
    assert stack.left_running(timeout=2) == []

    stack.start()
    load = Load(stack, clients=6, programs=((SLOW_PY, "AC"), (WRONG_PY, "WA"))).start()
    time.sleep(3)
    began = time.monotonic()
    code = stack.stop(signal.SIGTERM)
    busy_s = time.monotonic() - began
    answers = load.stop()
    assert code == 0, stack.text()[-3000:]
    deadline = int(env["HARDTESTS_API_SYNC_TIMEOUT_S"]) + 15
    assert busy_s <= deadline, stack.text()[-3000:]
    in_flight = [a for a in answers if a.at < began]
    assert in_flight and all(a.status is not None for a in in_flight), summary(in_flight)
    assert_truthful(in_flight)
    assert stack.left_running(timeout=2) == []
    print(f"\nidle node stopped in {idle_s:.1f} s; busy node in {busy_s:.1f} s (deadline {deadline} s)")


@pytest.mark.heavy(seconds=20)
def test_no_child_outlives_a_sigkilled_serve_by_more_than_a_few_seconds(root: Path) -> None:
    # A Redis that outlives serve (as in production): requests in flight keep waiting for their
    # answers, so an orphaned gunicorn worker would hold them (and the port) up to their timeout.
    with RedisServer("sigkill") as redis_server:
        env = stack_env(root, REDIS_URL=redis_server.url)
        stack = Stack(root, env)
        stack.token = seed(env)
        stack.start()
        load = Load(stack, clients=6, programs=((SLOW_PY, "AC"),)).start()
        time.sleep(3)
        assert stack.proc is not None
        os.kill(stack.proc.pid, signal.SIGKILL)
        stack.proc.wait(timeout=10)
        killed = time.monotonic()
        while processes_mentioning(root) and time.monotonic() - killed < 30:
            time.sleep(0.1)
        gone_s = time.monotonic() - killed
        left = [pid for pid in processes_mentioning(root) if pid_alive(pid)]
        load.stop()
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    print(f"\nevery child of a SIGKILLed serve gone {gone_s:.1f} s after it")
    assert left == [] and gone_s <= 3.0, f"{len(left)} left; the last went {gone_s:.1f} s after serve"
