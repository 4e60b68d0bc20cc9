"""A worker that cannot reach PostgreSQL takes jobs again within seconds of its return.

With the shipped HARDTESTS_WORKER_CHECK_S (30 s) a worker whose check failed used to wait a
whole period before checking again (46 `workers_unhealthy` answers in the 18 s after
PostgreSQL came back); now it checks again after 1, 2, 4, 4 ... s. Real PostgreSQL, real Redis,
a real CheckedWorker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, checked_worker_argv
from tests.deploy.faults import stack_env
from tests.deploy.services import PostgresCluster, RedisServer

pytestmark = [pytest.mark.slow]


@pytest.mark.heavy(seconds=50)
def test_a_worker_heals_within_seconds_of_postgresql_returning(tmp_path: Path) -> None:
    import redis

    with PostgresCluster() as pg, RedisServer("recheck") as redis_server:
        env = stack_env(tmp_path, DATABASE_URL=pg.url, REDIS_URL=redis_server.url)
        for name in ("HARDTESTS_WORKER_CHECK_S", "HARDTESTS_WORKER_BEAT_S", "HARDTESTS_WORKER_DEAD_S"):
            env.pop(name)  # the shipped defaults
        subprocess.run([sys.executable, str(REPO / "manage.py"), "migrate", "--noinput"], env=env, cwd=REPO,
                       check=True, capture_output=True, timeout=300)
        log = tmp_path / "worker.log"
        worker = subprocess.Popen(
            checked_worker_argv("api", name="recheck"),
            env=env, cwd=REPO, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
        connection = redis.Redis.from_url(redis_server.url)

        def ok() -> bool | None:
            raw = connection.hget("hardtests:worker-health", "recheck")
            return None if raw is None else bool(json.loads(raw)["ok"])

        def until(predicate: Any, what: str, timeout: float) -> float:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if predicate():
                    return time.monotonic()
                time.sleep(0.05)
            raise AssertionError(f"no {what} within {timeout} s:\n{log.read_text()[-3000:]}")

        try:
            until(lambda: ok() is True, "a healthy worker", timeout=90)
            pg.stop()
            until(lambda: ok() is False, "the worker noticing the outage", timeout=45)  # one period at most
            time.sleep(7)  # a few failed checks: its backoff has reached its cap
            pg.start()
            back = time.monotonic()
            healed = until(lambda: ok() is True, "the worker healing", timeout=40)
            assert healed - back <= 4.0 + 1.5, log.read_text()[-3000:]
            print(f"\nworker healed {healed - back:.1f} s after PostgreSQL returned")
        finally:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)
