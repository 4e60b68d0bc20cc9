"""Worker presence from one source of truth: a worker takes API jobs while its own beat is fresh.

After a Redis restart a worker is listed again by its beat; once it stops (SIGSTOP: a hung
machine) the API answers `no_workers` within HARDTESTS_WORKER_DEAD_S, and the janitor's
reaping leaves no ghost on any list, whatever survived of the worker's RQ hash.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings

from api.tokens import token_create
from core.queues import WORKER_HEALTH_HASH, queue_workers_alive, redis_connection
from hardtests_web.ops.reaper import dead_workers_sweep, worker_reap
from tests.api.conftest import make_suite
from tests.conftest import REPO, checked_worker_argv, worker_env
from tests.deploy.services import RedisServer
from tests.factories import ProblemFactory, UserFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BEAT_S, DEAD_S = 0.5, 3.0


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    """A Redis of this test's own, which it kills and starts again (not the session's)."""
    with RedisServer("presence") as server:
        queues = {name: {**conf, "URL": server.url} for name, conf in settings.RQ_QUEUES.items()}
        with override_settings(REDIS_URL=server.url, REDIS_URL_FROM_ENV=server.url, RQ_QUEUES=queues):
            yield server


def _worker(name: str, url: str, log: Path) -> subprocess.Popen[bytes]:
    env = dict(worker_env(), REDIS_URL=url, HARDTESTS_WORKER_BEAT_S=str(BEAT_S), HARDTESTS_WORKER_DEAD_S=str(DEAD_S))
    return subprocess.Popen(
        checked_worker_argv("api", name=name),
        env=env, cwd=REPO, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)


def _until(predicate: Any, what: str, timeout: float = 60) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"no {what} within {timeout} s")


def _lists_naming(name: str) -> list[str]:
    connection = redis_connection()
    key = f"rq:worker:{name}".encode()
    return sorted(k.decode() for k in connection.scan_iter(match="rq:workers*") if connection.sismember(k, key))


def _verify(client: Client) -> tuple[int, str]:
    response = client.post("/api/v1/verify", {"problem": "presence:ab", "language": "python3", "code": "print(3)"},
                           content_type="application/json")
    return response.status_code, response.json().get("code", "")


@override_settings(HARDTESTS_API_SYNC_TIMEOUT_S=1)
def test_after_a_redis_restart_a_stopped_worker_leaves_no_ghost(private_redis: RedisServer, tmp_path: Path) -> None:
    make_suite(ProblemFactory(source="presence", pid="ab", title="A+B", time_limit_ms=1000))
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=UserFactory(username='p'), name='t').secret}")
    name, log = f"presence-{time.monotonic_ns()}", tmp_path / "worker.log"
    worker = _worker(name, private_redis.url, log)
    try:
        connection = redis_connection()
        _until(lambda: queue_workers_alive(connection, "api") == [name], "first beat", timeout=90)

        private_redis.kill()
        private_redis.start()  # an empty Redis on the same address
        # the worker is listed again by its beat, with RQ's hash (which names its queues)
        _until(lambda: queue_workers_alive(connection, "api") == [name], "the beat after the restart", timeout=30)
        _until(lambda: connection.hget(f"rq:worker:{name}", "queues") == b"api", "RQ's hash written again", timeout=10)

        os.killpg(worker.pid, signal.SIGSTOP)  # a hung worker: listed, silent
        stopped = time.monotonic()
        _until(lambda: _verify(client) == (503, "no_workers"), "no_workers", timeout=DEAD_S + 10)
        assert time.monotonic() - stopped <= DEAD_S + 3, log.read_text()[-2000:]

        assert dead_workers_sweep(connection) == 1
        assert _lists_naming(name) == [] and not connection.hexists(WORKER_HEALTH_HASH, name)
        assert _verify(client) == (503, "no_workers")
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)


@override_settings(HARDTESTS_API_SYNC_TIMEOUT_S=1)
def test_a_listed_name_with_no_beat_and_no_hash_is_not_a_worker(private_redis: RedisServer) -> None:
    """What a Redis restart and a partial reaping left: a name on the API queue's list and nothing
    else. The API answers at once instead of waiting its whole timeout for it."""
    make_suite(ProblemFactory(source="presence", pid="ab", title="A+B", time_limit_ms=1000))
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=UserFactory(username='g'), name='t').secret}")
    connection = redis_connection()
    connection.sadd("rq:workers:api", "rq:worker:ghost")
    connection.sadd("rq:workers", "rq:worker:ghost")
    started = time.monotonic()
    assert _verify(client) == (503, "no_workers")
    assert time.monotonic() - started < 1.0
    # the janitor takes it off every list
    assert dead_workers_sweep(connection) == 1
    assert _lists_naming("ghost") == []


def test_reaping_clears_every_list_without_the_workers_hash(private_redis: RedisServer) -> None:
    connection = redis_connection()
    for listing in ("rq:workers", "rq:workers:api", "rq:workers:sandbox"):
        connection.sadd(listing, "rq:worker:lost")
    connection.hset(WORKER_HEALTH_HASH, "lost", '{"ok": true, "expires_at": 1}')
    assert worker_reap(connection, "lost", reason="test") is None
    assert _lists_naming("lost") == [] and not connection.hexists(WORKER_HEALTH_HASH, "lost")
