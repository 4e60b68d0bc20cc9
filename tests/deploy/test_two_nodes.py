"""Two machines on one: nothing shared but PostgreSQL, Redis (TCP, password) and S3 storage.

Node A runs the web server and the janitor; node B runs the sandbox workers with its own
HARDTESTS_VAR_DIR (and sandbox cache). Test bodies over the inline size are objects in the
S3-compatible server (moto's server mode), so node B must read them from there. Stopping
the storage must turn into 503s with the reason and a deep health naming the storage,
never into reward 0.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.deploy.conftest import free_port, http, wait_http
from tests.deploy.faults import stack_dir
from tests.deploy.services import MotoS3, postgres_server, redis_tcp

pytestmark = [pytest.mark.slow]

BUCKET = "hardtests-bodies"
HEALTH_TOKEN = "health-secret-for-tests"
SUM_GOOD = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"
SUM_WRONG = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])) + 1)\n"
# Two problems whose tests are sums of many random numbers: far over the inline limit set below.
SEED = """
import random
from problems.models import Problem
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
rng = random.Random(7)
for pid in ("big/1", "big/2"):
    problem = Problem.objects.create(source="deploy", pid=pid, title=pid, time_limit_ms=3000, memory_limit_mb=256)
    tests = []
    for i in range(3):
        numbers = [rng.randrange(10**9) for _ in range(4000 + i)]
        tests.append(NewTest(input=f"{len(numbers)}\\n{' '.join(map(str, numbers))}\\n", output=f"{sum(numbers)}\\n",
                             kind="regular"))
    suite = suite_create(problem=problem, origin="generated")
    suite_add_tests(suite=suite, tests=tests)
    suite_activate(suite=suite)
"""


def _env(node_dir: Path, shared: dict[str, str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HARDTESTS_", "DATABASE_URL", "REDIS_URL", "AWS_", "DJANGO_"))}
    env.update(shared, HARDTESTS_VAR_DIR=str(node_dir / "var"), HARDTESTS_MEDIA_ROOT=str(node_dir / "var" / "media"),
               HARDTESTS_SANDBOX_CACHE=str(node_dir / "sandbox-cache"), PYTHONUNBUFFERED="1", **extra)
    return env


def _manage(env: dict[str, str], *args: str, timeout: float = 300) -> str:
    done = subprocess.run([sys.executable, str(REPO / "manage.py"), *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.fixture
def layout() -> Iterator[dict[str, Any]]:
    moto = MotoS3()
    with (postgres_server() as database_url, redis_tcp("s3cret-redis") as redis_url,
          stack_dir("hardtests-nodeA-") as a_dir, stack_dir("hardtests-nodeB-") as b_dir):
        moto.start()
        procs: list[subprocess.Popen[bytes]] = []
        try:
            moto.client().create_bucket(Bucket=BUCKET)
            shared = {
                "DATABASE_URL": database_url, "REDIS_URL": redis_url, "DEBUG": "0",
                "SECRET_KEY": "two-node-test-key", "HARDTESTS_STORAGE_URL": f"s3://{BUCKET}/bodies",
                "AWS_S3_ENDPOINT_URL": moto.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing", "AWS_S3_REGION_NAME": "us-east-1",
                "AWS_S3_ADDRESSING_STYLE": "path", "HARDTESTS_BLOB_INLINE_MAX": "1024",
                "HARDTESTS_HEALTH_TOKEN": HEALTH_TOKEN, "HARDTESTS_API_SYNC_TIMEOUT_S": "20",
                "HARDTESTS_WORKER_CHECK_S": "2", "HARDTESTS_JANITOR_PERIOD_S": "5",
            }
            env_a = _env(a_dir, shared, HARDTESTS_SANDBOX_WORKERS="0", HARDTESTS_GENERATION_WORKERS="0",
                         HARDTESTS_WEB_WORKERS="1")
            env_b = _env(b_dir, shared, HARDTESTS_SANDBOX_WORKERS="1", HARDTESTS_GENERATION_WORKERS="0")
            _manage(env_a, "migrate", "--noinput")
            _manage(env_a, "shell", "-c", SEED)
            _manage(env_a, "shell", "-c",
                    "from django.contrib.auth.models import User; User.objects.create_user('trainer')")
            token = _manage(env_a, "create_api_token", "trainer").strip().splitlines()[-1]
            port = free_port()
            log_a, log_b = a_dir / "serve.log", b_dir / "serve.log"
            node_a = subprocess.Popen(
                [sys.executable, str(REPO / "manage.py"), "serve", "--port", str(port), "--no-demo"],
                env=env_a, cwd=REPO, stdout=log_a.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
            procs.append(node_a)
            node_b = subprocess.Popen(
                [sys.executable, str(REPO / "manage.py"), "serve", "--no-web", "--no-demo"],
                env=env_b, cwd=REPO, stdout=log_b.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
            procs.append(node_b)
            base = f"http://127.0.0.1:{port}"
            wait_http(f"{base}/healthz", alive=lambda: node_a.poll() is None)
            yield {"base": base, "token": token, "moto": moto, "a_dir": a_dir, "b_dir": b_dir,
                   "logs": (log_a, log_b), "nodes": (node_a, node_b)}
        finally:
            for proc in procs:
                _stop(proc)
            moto.close()


def _deep(base: str) -> tuple[int, Any]:
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"{base}/healthz/deep", headers={"Authorization": f"Bearer {HEALTH_TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _wait_deep(base: str, predicate: Any, what: str, nodes: Any, timeout: float = 180) -> Any:
    deadline = time.monotonic() + timeout
    status, body = None, None
    while time.monotonic() < deadline:
        assert all(node.poll() is None for node in nodes), "a node exited"
        status, body = _deep(base)
        if predicate(status, body):
            return body
        time.sleep(0.5)
    raise AssertionError(f"deep health never showed {what}: {status} {body}")


@pytest.mark.heavy(seconds=33)
def test_two_nodes_share_only_database_redis_and_s3(layout: dict[str, Any]) -> None:
    base, token, nodes = layout["base"], layout["token"], layout["nodes"]
    logs = "\n".join(log.read_text()[-3000:] for log in layout["logs"])
    # Bodies over the inline size are objects in S3, not files on either node.
    keys = [o["Key"] for o in layout["moto"].client().list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    assert len([k for k in keys if k.startswith("bodies/blobs/")]) >= 6, keys
    body = _wait_deep(base, lambda s, b: s == 200 and b["workers"]["api"] and b.get("janitor"),
                      "a worker on node B and a janitor pass", nodes)
    assert body["checks"]["storage_write"]["ok"] and body["checks"]["storage_read"]["ok"]
    [worker] = body["workers"]["api"]
    assert worker["can_judge"] is True

    verify = f"{base}/api/v1/verify"
    for pid in ("deploy:big/1", "deploy:big/2"):
        status, good = http("POST", verify, {"problem": pid, "language": "python3", "code": SUM_GOOD}, token=token)
        assert status == 200, (good, logs)
        assert (good["verdict"], good["reward"], good["passed"], good["total"]) == ("AC", 1, 3, 3)
        status, wrong = http("POST", verify, {"problem": pid, "language": "python3", "code": SUM_WRONG}, token=token)
        assert (status, wrong["verdict"], wrong["reward"]) == (200, "WA", 0)
    for node_dir in (layout["a_dir"], layout["b_dir"]):
        assert not list((node_dir / "var").rglob("*.z")), "a body was stored on a node's own disk"

    layout["moto"].stop()
    body = _wait_deep(base, lambda s, b: s == 503 and any("storage" in p for p in b["problems"]),
                      "the storage as the failing part", nodes)
    assert body["checks"]["storage_write"]["ok"] is False
    assert "s3://hardtests-bodies/bodies" in " ".join(body["problems"])
    # Node B's worker found it too and takes no job: the API says why instead of judging.
    _wait_deep(base, lambda s, b: b["workers"]["api"] and b["workers"]["api"][0]["can_judge"] is False,
               "the worker refusing to judge", nodes)
    answers = []
    for pid in ("deploy:big/1", "deploy:big/2"):
        status, answer = http("POST", verify, {"problem": pid, "language": "python3", "code": SUM_GOOD}, token=token)
        answers.append((status, answer))
    status, batch = http("POST", f"{base}/api/v1/verify/batch",
                         {"items": [{"problem": "deploy:big/1", "language": "python3", "code": SUM_GOOD}]}, token=token)
    answers.append((status, batch))
    for status, answer in answers:
        assert status == 503, answer
        assert answer["code"] == "workers_unhealthy" and "storage" in answer["detail"], answer
        assert "reward" not in str(answer)
