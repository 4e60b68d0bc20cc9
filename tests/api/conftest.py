"""Fixtures of the API tests: users with tokens, a tiny a+b problem with a real active suite,
and a real RQ worker on the `sandbox` queue for the tests that judge programs."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client
from rq.queue import Queue
from rq.worker import Worker

from api.tokens import token_create
from core.queues import redis_connection, verification_queue
from problems.models import Problem, TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.conftest import REPO, checked_worker_argv, worker_env
from tests.factories import ProblemFactory, UserFactory

GOOD = "a, b = map(int, input().split())\nprint(a + b)\n"
# Right on small numbers, wrong on the large ones only a hacking test uses.
CAPPED = "a, b = map(int, input().split())\nprint(min(a + b, 10**9))\n"
WRONG = "a, b = map(int, input().split())\nprint(a - b)\n"

AB_TESTS = [
    NewTest(input="1 2\n", output="3\n", kind="direct"),
    NewTest(input="5 7\n", output="12\n", kind="regular"),
    NewTest(input="0 0\n", output="0\n", kind="direct"),
    NewTest(input="1000000000 1000000000\n", output="2000000000\n", kind="hacking", generator="gen_hacking_input_big"),
]


def make_suite(problem: Problem, tests: list[NewTest] | None = None, *, activate: bool = True,
               origin: str = TestSuite.Origin.GENERATED) -> TestSuite:
    suite = suite_create(problem=problem, origin=origin)
    suite_add_tests(suite=suite, tests=list(tests if tests is not None else AB_TESTS))
    return suite_activate(suite=suite) if activate else suite


@dataclass
class ApiClient:
    """A Django test client that sends a bearer token and JSON."""

    client: Client
    token: str

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        return {"HTTP_AUTHORIZATION": f"Bearer {self.token}", **(extra or {})}

    def get(self, path: str, params: dict[str, Any] | None = None, **extra: str) -> Any:
        return self.client.get(path, params or {}, **self._headers(extra))

    def post(self, path: str, body: Any, **extra: str) -> Any:
        data = body if isinstance(body, (str, bytes)) else json.dumps(body)
        return self.client.post(path, data=data, content_type="application/json", **self._headers(extra))


@pytest.fixture
def user() -> Any:
    return UserFactory(username="researcher")


@pytest.fixture
def api(user: Any) -> ApiClient:
    return ApiClient(Client(), token_create(user=user, name="test").secret)


@pytest.fixture
def make_api() -> Callable[..., ApiClient]:
    def make(username: str = "other", **kwargs: Any) -> ApiClient:
        return ApiClient(Client(), token_create(user=UserFactory(username=username), name="t", **kwargs).secret)

    return make


@pytest.fixture
def ab_problem() -> Problem:
    problem = ProblemFactory(source="test", pid="ab/sum", title="A+B", time_limit_ms=1000)
    make_suite(problem)
    return problem


@pytest.fixture(autouse=True)
def _clean_redis() -> Iterator[None]:
    """Each test starts with an empty sandbox queue and no API state in Redis."""
    connection = redis_connection()
    yield
    queue = verification_queue()
    queue.empty()
    for key in connection.scan_iter("hardtests:api:*"):
        connection.delete(key)


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many RQ jobs the web side enqueues (RQ's enqueue_many, counted as it runs)."""
    counted: list[int] = []
    real = Queue.enqueue_many

    def enqueue_many(self: Queue, job_datas: Any, *args: Any, **kwargs: Any) -> Any:
        counted.append(len(job_datas))
        return real(self, job_datas, *args, **kwargs)

    monkeypatch.setattr(Queue, "enqueue_many", enqueue_many)
    return counted


@pytest.fixture
def fake_worker() -> Iterator[Worker]:
    """A worker registered on the sandbox queue that never takes a job: the queue looks
    served, but nothing answers (for the queue-full and timeout paths)."""
    queue = verification_queue()
    worker = Worker([queue], connection=queue.connection, name=f"fake-{time.monotonic_ns()}")
    worker.register_birth()
    yield worker
    worker.register_death()


@pytest.fixture(scope="module")
def sandbox_worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[subprocess.Popen[bytes]]:
    """A real sandbox worker (`manage.py rqworker api sandbox`) on the test database, Redis and media root.

    Module-scoped: starting a worker costs about a second. Tests that use it must be
    transactional (django_db(transaction=True)) so the worker sees their rows.
    """
    with django_db_blocker.unblock():
        env = worker_env()
    queue = verification_queue()
    # A file, not a pipe: a worker logging into a full pipe nobody reads would block.
    log = tmp_path_factory.mktemp("worker") / "rqworker.log"
    # The worker `serve` runs (no fork per job, spare sandboxes, the infrastructure checks), without
    # Django's system checks, which serve runs once itself: a forking rq Worker paid a fork and
    # the job's imports on every job (a 1-test verification 85 ms p50 against 20 ms, 40 ms more CPU)
    child = subprocess.Popen(
        checked_worker_argv("api", "sandbox"),
        env=env, cwd=REPO, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    # This worker's own registration, by its pid: a count of the queue's workers also moves when
    # the new worker's start-up cleans away a dead worker an earlier test left registered.
    while not any(w.pid == child.pid for w in Worker.all(queue=queue, connection=queue.connection)):
        if child.poll() is not None:
            raise RuntimeError(f"rqworker exited: {log.read_text()[-2000:]}")
        if time.monotonic() > deadline:
            child.kill()
            raise RuntimeError(f"rqworker did not register within 60 s: {log.read_text()[-2000:]}")
        time.sleep(0.05)
    yield child
    child.terminate()
    try:
        child.wait(timeout=15)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
