"""Nothing outlives what started it: a one-off command that starts the embedded Redis stops it
as it exits, even when killed; one that finds it running leaves it be; a `serve` that shared a
command's Redis starts its own when that command ends."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.deploy.conftest import pid_alive, processes_mentioning

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow]


def _env(var: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL", "DEBUG", "SECRET_KEY")}
    return {**env, "DJANGO_SETTINGS_MODULE": "hardtests_web.settings", "HARDTESTS_VAR_DIR": str(var),
            "DATABASE_URL": f"sqlite:///{var / 'db.sqlite3'}", "PYTHONUNBUFFERED": "1"}


def _redis_servers(var: Path, *, settle_s: float = 5.0) -> list[int]:
    """redis-server processes of this var dir still alive after up to settle_s."""
    deadline = time.monotonic() + settle_s
    while True:
        found = [pid for pid in processes_mentioning(var) if pid_alive(pid)
                 and b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _manage(var: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "manage.py"), *args], cwd=REPO, env=_env(var),
                          capture_output=True, text=True, timeout=300)


def test_a_one_off_command_stops_the_embedded_redis_it_started(tmp_path: Path) -> None:
    done = _manage(tmp_path, "janitor", "--once")  # it uses Redis: it starts the embedded one
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"counts"' in done.stdout
    assert _redis_servers(tmp_path) == []
    assert not (tmp_path / "redis" / "redis.sock").exists()


def test_a_killed_command_takes_the_redis_it_started_with_it(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import django, time; django.setup()\n"
         "from core.queues import redis_connection; redis_connection().ping(); print('READY', flush=True)\n"
         "time.sleep(600)\n"], cwd=REPO, env=_env(tmp_path), stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "READY"
    assert len(_redis_servers(tmp_path, settle_s=0)) == 1
    holder.kill()
    holder.wait(timeout=10)
    killed = time.monotonic()
    assert _redis_servers(tmp_path, settle_s=3) == []
    assert time.monotonic() - killed < 3


def test_a_command_leaves_a_running_redis_be(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import django, sys; django.setup()\n"
         "from core.queues import redis_connection; redis_connection().ping(); print('READY', flush=True)\n"
         "sys.stdin.read()\n"], cwd=REPO, env=_env(tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "READY"
        [server] = _redis_servers(tmp_path, settle_s=0)
        assert _manage(tmp_path, "janitor", "--once").returncode == 0
        assert _redis_servers(tmp_path, settle_s=0) == [server]  # the holder's, still running
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert _redis_servers(tmp_path) == []
