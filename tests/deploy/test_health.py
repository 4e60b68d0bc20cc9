"""/healthz/deep says which part is broken; a worker that cannot read the storage refuses to start."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import pytest
from django.conf import settings
from django.core.files.storage import default_storage
from django.test import override_settings

from tests.conftest import REPO, checked_worker_argv, worker_env
from tests.factories import UserFactory


def _deep(client, **headers):
    return client.get("/healthz/deep", **headers)


@pytest.mark.django_db
def test_deep_health_needs_staff_or_the_token(client) -> None:
    from rq.worker import Worker

    from core.queues import WORKER_HEALTH_HASH, redis_connection
    from hardtests_web.ops.janitor import LAST_RUN_KEY

    # this test process's Redis may hold an earlier test's janitor pass, and the registration and
    # health of an earlier test's worker that was killed (its fixture stops it with SIGKILL)
    connection = redis_connection()
    connection.delete(LAST_RUN_KEY, WORKER_HEALTH_HASH)
    for worker in Worker.all(connection=connection):
        worker.register_death()
    assert _deep(client).status_code == 403
    time.sleep(1.1)  # Redis up longer than the janitor's grace below
    with override_settings(HARDTESTS_HEALTH_TOKEN="tok", HARDTESTS_JANITOR_PERIOD_S=0.5, HARDTESTS_JANITOR_FAST_S=0.1):
        assert _deep(client, HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
        response = _deep(client, HTTP_AUTHORIZATION="Bearer tok")
    body = response.json()
    assert {name: c["ok"] for name, c in body["checks"].items()} == {
        "database": True, "redis": True, "storage_write": True, "storage_read": True}
    # Nothing else runs in this test: no worker on the api queue, no janitor pass.
    assert response.status_code == 503
    assert "workers: none alive listens on the api queue" in body["problems"]
    assert any(p.startswith("janitor:") for p in body["problems"])
    client.force_login(UserFactory(is_staff=True))
    assert _deep(client).json()["checks"]["database"]["ok"] is True


@pytest.mark.django_db
def test_deep_health_names_a_broken_storage(client, tmp_path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    broken = {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(blocker / "m")}}
    client.force_login(UserFactory(is_staff=True))
    with override_settings(STORAGES={**settings.STORAGES, "default": broken}):
        response = _deep(client)
    body = response.json()
    assert response.status_code == 503
    assert body["checks"]["storage_write"]["ok"] is False
    assert any(p.startswith("storage ") for p in body["problems"]), body["problems"]


@pytest.mark.django_db(transaction=True)
def test_worker_refuses_to_start_when_it_cannot_read_stored_bodies() -> None:
    from problems.blobs import blob_path, blobs_put

    with override_settings(HARDTESTS_BLOB_INLINE_MAX=0):
        [(sha, _)] = blobs_put([b"1 2 3\n" * 1000])
    # As on a second machine with its own disk: the database lists the body, the disk lacks it.
    default_storage.delete(blob_path(sha))
    done = subprocess.run(
        checked_worker_argv("api", "sandbox"),
        env=worker_env(), cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "refusing to start" in done.stderr + done.stdout
    assert sha[:16] in done.stderr + done.stdout


@pytest.mark.django_db
def test_the_storage_check_reads_the_first_body_stored_as_a_file(settings: Any) -> None:
    """A worker started before any body was stored as a file must check the first one that is,
    not keep "nothing to read" forever (a node without the shared storage looked healthy)."""
    import os

    from hardtests_web.ops import checks
    from problems.blobs import blob_path, blob_put

    checks._sample.clear()
    settings.HARDTESTS_BLOB_INLINE_MAX = 16
    assert checks.storage_read_check() is None  # nothing stored as a file yet: nothing to prove
    sha, _ = blob_put(os.urandom(4096))  # incompressible: a file, not inline
    assert default_storage.exists(blob_path(sha))
    default_storage.delete(blob_path(sha))  # this node cannot see it (another machine's disk)
    problem = checks.storage_read_check()
    assert problem is not None and "storage" in problem


@pytest.mark.django_db
@pytest.mark.parametrize("where", ["publishing its health", "between checks"])
def test_a_worker_waiting_out_a_failing_check_stops_when_asked(monkeypatch: Any, where: str) -> None:
    """RQ's SIGTERM handler raises StopRequested in whatever an idle worker runs. A worker that
    takes no job while a check fails (a full disk) must stop then, not wait on: it swallowed the
    stop when it came while the worker published its health, and was killed at shutdown."""
    import threading

    from rq.exceptions import StopRequested

    from core.queues import redis_connection, verification_queue
    from hardtests_web.ops import worker as worker_module

    monkeypatch.setattr(worker_module, "worker_checks", lambda: ["the disk is full"])
    worker = worker_module.CheckedWorker([verification_queue()], connection=redis_connection())
    published: list[float] = []

    def publish() -> None:
        published.append(time.monotonic())
        if where == "publishing its health" and len(published) == 2:
            worker._stop_requested = True
            raise StopRequested()

    monkeypatch.setattr(worker, "_publish", publish)
    monkeypatch.setattr(settings, "HARDTESTS_WORKER_CHECK_S", 0.5)
    outcome: list[BaseException | None] = []

    def wait() -> None:
        try:
            worker._wait_until_healthy()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - what ended the wait is the test's subject
            outcome.append(exc)

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    if where == "between checks":
        while len(published) < 2:
            time.sleep(0.05)
        worker._stop_requested = True
    thread.join(timeout=20)
    assert not thread.is_alive(), "the worker went on waiting for its checks after it was asked to stop"
    assert len(outcome) == 1 and isinstance(outcome[0], StopRequested)
    assert len(published) <= 3


# A worker whose check is under way when SIGTERM comes (a query to a slow database). The stand-in
# check catches Exception as database_check does: a failure of any kind is the database's problem.
_STOP_IN_A_CHECK = """
import os, sys, time
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
import django

django.setup()
from core.queues import redis_connection, verification_queue
from hardtests_web.ops import worker as worker_module

marker, calls = Path(sys.argv[1]), []


def checks():
    calls.append(time.monotonic())
    if len(calls) == 2:  # the first check between jobs (the first is the start's)
        marker.write_text("in a check")
        try:
            time.sleep(60)
        except Exception as exc:
            return [f"database: {type(exc).__name__}: {exc}"]
    return []


worker_module.worker_checks = checks
worker = worker_module.CheckedWorker([verification_queue()], connection=redis_connection(), name=sys.argv[2])
worker.work()
"""


@pytest.mark.django_db
def test_a_stop_that_comes_during_a_check_stops_the_worker(tmp_path) -> None:
    """RQ's SIGTERM handler raises StopRequested in whatever an idle worker runs, and remembers
    nothing. A check that catches Exception (the database's) took it for a failure of the
    database; the checks passed again a second later and the worker took jobs on past its stop,
    until `serve` killed it 60 s later (a fault test saw it, as a hand-off verification's worker)."""
    import os
    import signal
    import sys
    import uuid

    marker = tmp_path / "in-check"
    name = f"stop-in-check-{uuid.uuid4().hex[:8]}"
    # The check's period only decides how soon the check under way comes (the shipped 30 s would
    # make the test wait for it); the stop is what is tested.
    env = dict(worker_env(), HARDTESTS_WORKER_CHECK_S="1")
    proc = subprocess.Popen([sys.executable, "-c", _STOP_IN_A_CHECK, str(marker), name], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), proc.communicate(timeout=30)[0][-3000:] if proc.poll() is not None else "no check came"
        os.kill(proc.pid, signal.SIGTERM)
        try:
            output, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate(timeout=10)
            pytest.fail(f"the worker took jobs on after its stop came during a check:\n{output[-3000:]}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert proc.returncode == 0, output[-3000:]
    assert "warm shut down requested" in output, output[-3000:]
    assert "takes jobs again" not in output and "stops taking jobs" not in output, output[-3000:]
