"""`serve` as an operator runs it: no demo needed, and a failed start leaves nothing running."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rq.worker import Worker

from api.tokens import token_create
from core.queues import verification_queue
from tests.api.conftest import GOOD, WRONG, make_suite
from tests.conftest import REPO, worker_env
from tests.deploy.conftest import free_port, http, pid_alive, processes_mentioning, wait_http
from tests.factories import ProblemFactory, UserFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _started_pids(output: str) -> dict[str, int]:
    return {name: int(pid) for name, pid in re.findall(r"started (\S+) \(pid (\d+)\)", output)}


@pytest.mark.heavy(seconds=16)
def test_serve_without_demo_problems_serves_verifications(tmp_path: Path) -> None:
    from problems.models import Problem

    problem = ProblemFactory(source="imported", pid="ab/1", title="A+B", time_limit_ms=2000)
    make_suite(problem)
    token = token_create(user=UserFactory(username="operator"), name="t").secret
    assert not Problem.objects.filter(source="demo").exists()
    port = free_port()
    env = dict(worker_env(), HARDTESTS_SANDBOX_WORKERS="1", HARDTESTS_GENERATION_WORKERS="0")
    log = tmp_path / "serve.log"
    serve = subprocess.Popen([sys.executable, str(REPO / "manage.py"), "serve", "--port", str(port)], env=env,
                             cwd=REPO, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", alive=lambda: serve.poll() is None)
        queue = verification_queue()
        deadline = time.monotonic() + 120
        while not Worker.count(queue=queue, connection=queue.connection) and time.monotonic() < deadline:
            assert serve.poll() is None, log.read_text()
            time.sleep(0.2)
        body = {"problem": "imported:ab/1", "language": "python3", "code": GOOD}
        status, good = http("POST", f"http://127.0.0.1:{port}/api/v1/verify", body, token=token)
        assert status == 200, good
        assert (good["verdict"], good["reward"], good["passed"]) == ("AC", 1, 4)
        status, wrong = http("POST", f"http://127.0.0.1:{port}/api/v1/verify", {**body, "code": WRONG}, token=token)
        assert (status, wrong["verdict"], wrong["reward"]) == (200, "WA", 0)
        # serve ran Django's system checks; the children that do not fork per job skip them
        commands = {name: Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                    for name, pid in _started_pids(log.read_text()).items() if name != "web"}
        assert {"sandbox-worker-0", "janitor", "llm-worker-0"} == set(commands), commands
        assert all(b"--skip-checks" in argv for argv in commands.values()), commands
    finally:
        if serve.poll() is None:
            serve.send_signal(signal.SIGTERM)
        code = serve.wait(timeout=60)
    output = log.read_text()
    assert "no demo problems" not in output
    assert f"Listening at: http://127.0.0.1:{port}" in output  # gunicorn, not the development server
    assert code == 0, output[-3000:]
    children = _started_pids(output)
    assert {"sandbox-worker-0", "janitor", "web"} <= set(children), output[-3000:]
    assert not [name for name, pid in children.items() if pid_alive(pid)]


def test_failed_start_stops_every_child_and_the_embedded_redis(tmp_path: Path, django_db_setup: Any) -> None:
    var = tmp_path / "var"
    env = worker_env()
    env.pop("REDIS_URL")  # serve starts its own embedded Redis under HARDTESTS_VAR_DIR
    env.update(HARDTESTS_VAR_DIR=str(var), HARDTESTS_SANDBOX_WORKERS="1", HARDTESTS_GENERATION_WORKERS="1")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # Files, not pipes: children left running would hold a pipe open and hang the wait.
        out, err = tmp_path / "out.log", tmp_path / "err.log"
        done = subprocess.run([sys.executable, str(REPO / "manage.py"), "serve", "--port", str(port)], env=env,
                              cwd=REPO, stdout=out.open("wb"), stderr=err.open("wb"), timeout=180)
    output = out.read_text() + err.read_text()
    assert done.returncode != 0, output
    assert f"port {port} is already in use" in err.read_text()
    assert f"redis: embedded at {var / 'redis' / 'redis.sock'}" in output
    children = _started_pids(output)
    # The port is checked before any child starts (the embedded Redis excepted, stopped again).
    assert children == {}, output
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and processes_mentioning(var):
        time.sleep(0.2)
    assert processes_mentioning(var) == []
    assert not [name for name, pid in children.items() if pid_alive(pid)]
    redis_pid = int((var / "redis" / "redis.pid").read_text()) if (var / "redis" / "redis.pid").exists() else None
    assert redis_pid is None or not pid_alive(redis_pid)


def test_serve_starts_the_llm_stage_of_campaigns(tmp_path: Path) -> None:
    from generation.campaigns.services import campaign_create
    from generation.models import GenerationRun, LLMCall
    from tests.generation.campaign_fake import make_campaign_problems, start_campaign_llm

    fake, server = start_campaign_llm()
    ids = make_campaign_problems(2, source="serve")
    campaign = campaign_create(name="serve", problem_ids=ids).campaign
    # No RQ worker at all: only serve's llm_worker can take the runs through the LLM stage.
    env = dict(worker_env(), OPENAI_BASE_URL=fake.url, OPENAI_API_KEY="test", HARDTESTS_LLM_MODEL="fake-model",
               HARDTESTS_SANDBOX_WORKERS="0", HARDTESTS_GENERATION_WORKERS="0")
    env.pop("HARDTESTS_LLM_WORKERS", None)  # the default starts one
    log = tmp_path / "serve.log"
    serve = subprocess.Popen([sys.executable, str(REPO / "manage.py"), "serve", "--no-web"], env=env, cwd=REPO,
                             stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
    runs = GenerationRun.objects.filter(campaign=campaign)
    try:
        deadline = time.monotonic() + 120
        while runs.filter(kit__isnull=False).count() < 2:
            assert serve.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, f"the LLM stage never ran: {log.read_text()[-3000:]}"
            time.sleep(0.3)
    finally:
        if serve.poll() is None:
            serve.send_signal(signal.SIGTERM)
        code = serve.wait(timeout=60)
        server.shutdown()
        server.server_close()
    output = log.read_text()
    assert code == 0, output[-3000:]
    children = _started_pids(output)
    assert "llm-worker-0" in children, output[-3000:]
    assert not [name for name, pid in children.items() if pid_alive(pid)]
    # Both problems asked the fake LLM for both calls; the kits wait for the sandbox queue.
    assert sorted({pid for pid, kind, status, _ in fake.log if status == 200}) == ["c000000", "c000001"]
    assert LLMCall.objects.filter(run__campaign=campaign, error="").count() == 4
    assert sorted(runs.values_list("status", flat=True)) == ["queued", "queued"]
    assert all(job.startswith("generation-run-") for job in runs.values_list("job_id", flat=True))


def test_serve_prints_the_url_and_logins_again_once_the_demo_is_built(monkeypatch) -> None:
    import io

    from django.core.management.base import OutputWrapper

    import problems.demo
    from hardtests_web.management.commands.serve import Command

    command = Command(stdout=io.StringIO())
    out = command.stdout
    assert isinstance(out, OutputWrapper)
    command.url, command.demo_pending = "http://127.0.0.1:8000/", True
    monkeypatch.setattr(problems.demo, "first_run_summary", lambda url, **_: f"SUMMARY {url}")
    monkeypatch.setattr(problems.demo, "demo_build_status", lambda cached=True: object())  # still building
    command._demo_ready_check(100.0)
    assert "SUMMARY" not in out._out.getvalue()
    monkeypatch.setattr(problems.demo, "demo_build_status", lambda cached=True: None)  # built
    command._demo_ready_check(101.0)  # too soon after the last look
    assert "SUMMARY" not in out._out.getvalue()
    command._demo_ready_check(106.0)
    text = out._out.getvalue()
    assert "the site is ready" in text and text.count("SUMMARY http://127.0.0.1:8000/") == 1
    command._demo_ready_check(200.0)  # once only
    assert out._out.getvalue().count("SUMMARY") == 1
