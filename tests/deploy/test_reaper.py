"""A SIGKILLed worker, found dead by its beat: the API stops counting it at once, /healthz/deep
names it, the janitor's sweep takes it off RQ's lists and runs its job again (once; a second
death fails the job with the reason), and a worker restarted under its name is not refused."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from django.test import Client, override_settings
from rq.job import Job, JobStatus
from rq.results import Result

from api.tokens import token_create
from core.queues import WORKER_HEALTH_HASH, redis_connection, redis_now, verification_queue, workers_alive
from hardtests_web.ops.reaper import REQUEUED_META, dead_workers_sweep
from tests.api.conftest import make_suite
from tests.conftest import REPO, checked_worker_argv, forget_gone_workers, worker_env
from tests.factories import ProblemFactory, UserFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BEAT_S, DEAD_S = 0.5, 3.0


def _worker(name: str, log: Path) -> subprocess.Popen[bytes]:
    env = dict(worker_env(), HARDTESTS_WORKER_BEAT_S=str(BEAT_S), HARDTESTS_WORKER_DEAD_S=str(DEAD_S))
    return subprocess.Popen(
        checked_worker_argv("api", name=name),
        env=env, cwd=REPO, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)


def _alive(name: str) -> bool:
    connection = redis_connection()
    with connection.pipeline(transaction=False) as pipe:
        pipe.hgetall(WORKER_HEALTH_HASH)
        pipe.time()
        health, now = pipe.execute()
    return name.encode() in health and workers_alive(health, [name], redis_now(now)) == [name]


def _until(predicate: Any, what: str, timeout: float = 60) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"no {what} within {timeout} s")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


@override_settings(HARDTESTS_API_SYNC_TIMEOUT_S=1, HARDTESTS_HEALTH_TOKEN="health-token")
def test_a_killed_worker_is_found_by_its_beat_and_its_job_runs_again_once(tmp_path: Path) -> None:
    problem = ProblemFactory(source="reap", pid="ab", title="A+B", time_limit_ms=1000)
    make_suite(problem)
    token = token_create(user=UserFactory(username="reaper"), name="t").secret
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    name, log = f"reap-{time.monotonic_ns()}", tmp_path / "worker.log"
    connection, queue = redis_connection(), verification_queue()
    first = _worker(name, log)
    try:
        _until(lambda: _alive(name), "first beat", timeout=90)
        job = queue.enqueue("time.sleep", 120, job_timeout=300)
        _until(lambda: job.get_status(refresh=True) == JobStatus.STARTED, "the job started")
        # it beats while the job runs (the job holds the worker's main thread)
        time.sleep(DEAD_S + 1)
        assert _alive(name), log.read_text()[-2000:]
        # a worker an earlier test in this process killed (its process is gone) is forgotten, and
        # one silent for DEAD_S is swept: the counts below are of this test's worker alone
        forget_gone_workers(connection)
        dead_workers_sweep(connection)
        assert _alive(name)

        _kill(first)
        # RQ still lists it; the API stops counting it once the beat is DEAD_S old, and says so at once
        waited = _until(lambda: not _alive(name), "the beat to go stale", timeout=DEAD_S + 10)
        assert waited <= DEAD_S + 5
        response = client.post("/api/v1/verify", {"problem": "reap:ab", "language": "python3", "code": "print(3)"},
                               content_type="application/json")
        # refused before anything is queued (not `timeout`: nobody waits for a dead worker)
        assert response.status_code == 503 and response.json()["code"] == "no_workers", response.content
        assert response["Retry-After"]
        deep = client.get("/healthz/deep", HTTP_AUTHORIZATION="Bearer health-token").json()
        assert any("dead on the api queue" in p and name in p for p in deep["problems"]), deep["problems"]
        assert [w for w in deep["workers"]["api"] if w["name"] == name][0]["alive"] is False

        # the janitor's sweep: off RQ's lists, the job at the front of its queue again
        assert dead_workers_sweep(connection) == 1
        assert not connection.exists(f"rq:worker:{name}")
        job = Job.fetch(job.id, connection=connection)
        assert job.get_status() == JobStatus.QUEUED and job.meta[REQUEUED_META] == 1
        assert queue.job_ids[0] == job.id
        assert dead_workers_sweep(connection) == 0

        # a worker restarted under the same name is not refused, and takes the job
        second = _worker(name, log)
        try:
            _until(lambda: job.get_status(refresh=True) == JobStatus.STARTED, "the job started again", timeout=90)
            _kill(second)
            _until(lambda: not _alive(name), "the second beat to go stale", timeout=DEAD_S + 10)
            assert dead_workers_sweep(connection) == 1
        finally:
            if second.poll() is None:
                _kill(second)
        # its worker died twice: the job fails with the reason, so a caller gets an error, not a verdict
        job = Job.fetch(job.id, connection=connection)
        assert job.get_status() == JobStatus.FAILED
        result = Result.fetch_latest(job)
        assert result is not None and result.type == Result.Type.FAILED
        assert "WorkerDied" in (result.exc_string or "")
    finally:
        if first.poll() is None:
            _kill(first)
    assert "There exists an active worker" not in log.read_text()


@override_settings(HARDTESTS_HEALTH_TOKEN="health-token")
def test_a_handed_off_verification_whose_worker_dies_is_judged_by_another_and_answered(tmp_path: Path) -> None:
    """The hand-off's item held by a worker SIGKILLed mid-judging goes back to the list when the
    sweep finds the worker dead; another worker judges it, and the caller, still waiting, gets
    the verdict (problems/verify_contract.py, "the hand-off")."""
    import threading

    from django.db import connection as db_connection

    from problems.verify_contract import HANDOFF_HELD_KEY, HANDOFF_KEY
    from tests.api.conftest import AB_TESTS

    problem = ProblemFactory(source="reap", pid="slow", title="A+B, slowly", time_limit_ms=10000)
    make_suite(problem, AB_TESTS[:1])
    token = token_create(user=UserFactory(username="handoff"), name="t").secret
    slow = "import time\ntime.sleep(2)\na, b = map(int, input().split())\nprint(a + b)\n"
    connection = redis_connection()
    forget_gone_workers(connection)
    stamp = time.monotonic_ns()
    first_name, second_name, log = f"hand-a-{stamp}", f"hand-b-{stamp}", tmp_path / "worker.log"
    answers: list[Any] = []

    def call() -> None:
        try:
            answers.append(Client(HTTP_AUTHORIZATION=f"Bearer {token}").post(
                "/api/v1/verify", {"problem": "reap:slow", "language": "python3", "code": slow},
                content_type="application/json"))
        finally:
            db_connection.close()

    first = _worker(first_name, log)
    second = None
    caller = threading.Thread(target=call)
    try:
        _until(lambda: _alive(first_name), "first beat", timeout=90)
        caller.start()
        _until(lambda: connection.exists(HANDOFF_HELD_KEY.format(worker=first_name)), "the item held")
        assert connection.llen(HANDOFF_KEY) == 0
        _kill(first)
        second = _worker(second_name, log)
        _until(lambda: _alive(second_name) and not _alive(first_name), "the first beat stale, the second up",
               timeout=DEAD_S + 90)
        assert dead_workers_sweep(connection) == 1
        assert not connection.exists(HANDOFF_HELD_KEY.format(worker=first_name))
        caller.join(timeout=60)
        assert not caller.is_alive()
        [response] = answers
        assert response.status_code == 200, response.content
        assert (response.json()["verdict"], response.json()["passed"]) == ("AC", 1)
        _until(lambda: not connection.exists(HANDOFF_HELD_KEY.format(worker=second_name)), "the second's hold let go")
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                _kill(proc)
        caller.join(timeout=60)
