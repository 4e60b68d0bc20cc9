"""`serve --role verify`: a verification node starts only what verification needs (the web server
and sandbox workers taking verifications) and serves verifications."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rq.worker import Worker

from api.tokens import token_create
from core.queues import verification_queue
from tests.api.conftest import GOOD, WRONG, make_suite
from tests.conftest import REPO, worker_env
from tests.deploy.conftest import free_port, http, pid_alive, wait_http
from tests.factories import ProblemFactory, UserFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            children = [int(c) for c in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]
        except OSError:
            continue
        found.update(children)
        todo.extend(children)
    return found


@pytest.mark.heavy(seconds=16)
def test_a_verification_node_runs_the_web_server_and_sandbox_workers_only(tmp_path: Path) -> None:
    problem = ProblemFactory(source="imported", pid="ab/1", title="A+B", time_limit_ms=2000)
    make_suite(problem)
    token = token_create(user=UserFactory(username="operator"), name="t").secret
    port = free_port()
    env = dict(worker_env(), HARDTESTS_SANDBOX_WORKERS="2", HARDTESTS_GENERATION_WORKERS="1",
               HARDTESTS_LLM_WORKERS="1")
    env.pop("HARDTESTS_WEB_WORKERS", None)
    log = tmp_path / "serve.log"
    serve = subprocess.Popen([sys.executable, str(REPO / "manage.py"), "serve", "--role", "verify", "--port",
                              str(port)], env=env, cwd=REPO, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                             start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", alive=lambda: serve.poll() is None)
        queue = verification_queue()

        def ours() -> list[Worker]:
            # this node's workers only: the test process's Redis may still list an earlier
            # test's worker that died without saying so
            mine = _descendants(serve.pid)
            return [w for w in Worker.all(connection=queue.connection) if w.pid in mine]

        deadline = time.monotonic() + 120
        while len(ours()) < 2 and time.monotonic() < deadline:
            assert serve.poll() is None, log.read_text()
            time.sleep(0.2)
        # every worker of the node takes verifications, and nothing else
        workers = ours()
        assert sorted(w.queue_names() for w in workers) == [[queue.name], [queue.name]], workers
        body = {"problem": "imported:ab/1", "language": "python3", "code": GOOD}
        status, good = http("POST", f"http://127.0.0.1:{port}/api/v1/verify", body, token=token)
        assert (status, good["verdict"], good["reward"], good["passed"]) == (200, "AC", 1, 4), good
        status, wrong = http("POST", f"http://127.0.0.1:{port}/api/v1/verify", {**body, "code": WRONG}, token=token)
        assert (status, wrong["verdict"], wrong["reward"]) == (200, "WA", 0)
        output = log.read_text()
        children = {name: int(pid) for name, pid in re.findall(r"started (\S+) \(pid (\d+)\)", output)}
        assert set(children) == {"sandbox-worker-0", "sandbox-worker-1", "web"}, output[-3000:]
        # gunicorn's master and its two workers (not one per CPU up to four)
        gunicorn = [pid for pid in [children["web"], *_descendants(children["web"])]
                    if b"gunicorn" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(gunicorn) == 3, gunicorn
        # no process of the node that serves no page loads what only pages and Django's system
        # checks import (numpy, through the LLM client): ~60 MiB each
        for pid in (serve.pid, children["sandbox-worker-0"], children["sandbox-worker-1"]):
            assert b"numpy" not in Path(f"/proc/{pid}/maps").read_bytes(), pid
    finally:
        if serve.poll() is None:
            serve.send_signal(signal.SIGTERM)
        code = serve.wait(timeout=60)
    assert code == 0, log.read_text()[-3000:]
    assert not [pid for pid in children.values() if pid_alive(pid)]


def test_a_verification_node_loads_no_demo() -> None:
    done = subprocess.run([sys.executable, str(REPO / "manage.py"), "serve", "--role", "verify", "--load-demo"],
                          env=worker_env(), cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "--role verify loads no demo" in done.stderr, done.stderr[-2000:]


# What a sandbox worker (and its judging job) imports, and what it must not: the generation
# stage (reply parsing, pydantic) and the HTTP client (httpx, with rich and click for its command
# line) cost a verification node's every worker about 0.4 s of CPU at start and their memory.
WORKER_IMPORTS = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
import django
django.setup()
from rq.utils import import_attribute
import_attribute("hardtests_web.ops.worker.CheckedWorker")
import problems.jobs, problems.judging, core.pysource
print(sorted(m for m in ("generation.worker", "generation.parsing", "pydantic", "httpx", "rich") if m in sys.modules))
generation = import_attribute("hardtests_web.ops.worker.CheckedGenerationWorker")
print(generation.__module__, [c.__name__ for c in generation.__mro__[1:3]])
"""


def test_a_sandbox_worker_loads_neither_the_generation_stage_nor_an_http_client() -> None:
    done = subprocess.run([sys.executable, "-c", WORKER_IMPORTS], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env=worker_env())
    assert done.returncode == 0, done.stderr[-2000:]
    loaded, generation = done.stdout.splitlines()
    assert loaded == "[]"
    # the generation worker's documented path still names it, loaded when asked for
    assert generation == "hardtests_web.ops.worker ['InfrastructureChecks', 'GenerationWorker']"
