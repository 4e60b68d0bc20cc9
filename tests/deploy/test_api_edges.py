"""The API's answers at its edges: outages are 503 with a reason and Retry-After (never 500),
the token check never fails a request for want of a write, shutting down is said, bodies
without a length are read, `true` is not a suite, a batch over the limit is 413, and
migrate_storage without credentials says why in one line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.db import OperationalError
from django.test import Client, override_settings
from django.utils import timezone
from redis.exceptions import ConnectionError as RedisConnectionError

from api.models import ApiToken
from api.tokens import token_create
from core import lifecycle
from tests.api.conftest import make_suite
from tests.conftest import REPO, worker_env
from tests.factories import ProblemFactory, UserFactory

pytestmark = pytest.mark.django_db

ITEM = {"problem": "edge:ab", "language": "python3", "code": "print(3)"}


@pytest.fixture
def client() -> Client:
    problem = ProblemFactory(source="edge", pid="ab", title="A+B", time_limit_ms=1000)
    make_suite(problem)
    token = token_create(user=UserFactory(username="edge"), name="t").secret
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


def _post(client: Client, body: Any, path: str = "/api/v1/verify") -> Any:
    return client.post(path, json.dumps(body), content_type="application/json")


def test_a_database_outage_is_503_with_retry_after(client: Client) -> None:
    with mock.patch("api.tokens.fetch_all", side_effect=OperationalError("server closed the connection")):
        response = _post(client, ITEM)
    assert response.status_code == 503, response.content
    assert response.json()["code"] == "database_unavailable" and response["Retry-After"]


def test_a_redis_outage_is_503_with_retry_after(client: Client) -> None:
    with mock.patch("api.verification.verification_queue",
                    side_effect=RedisConnectionError("Connection refused")):
        response = _post(client, ITEM)
    assert response.status_code == 503, response.content
    assert response.json()["code"] == "redis_unavailable" and response["Retry-After"]


def test_a_read_only_database_does_not_fail_the_token_check(client: Client) -> None:
    token = ApiToken.objects.get()
    stale = timezone.now() - timedelta(hours=1)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=stale)
    # every write refused, as a read-only replica or a database in recovery does
    with mock.patch("api.tokens._last_used_update", side_effect=OperationalError("read-only transaction")):
        response = client.get("/api/v1/problems")
    assert response.status_code == 200, response.content
    assert ApiToken.objects.get().last_used_at == stale
    client.get("/api/v1/problems")
    assert ApiToken.objects.get().last_used_at > stale  # recorded again once writes work


def test_a_request_read_while_shutting_down_is_503_shutting_down(client: Client) -> None:
    lifecycle.shutdown_begin()
    try:
        response = _post(client, ITEM)
    finally:
        lifecycle._stopping.clear()
    assert response.status_code == 503 and response.json()["code"] == "shutting_down"
    assert response["Retry-After"]


def test_a_chunked_body_without_content_length_is_read(client: Client) -> None:
    body = json.dumps({**ITEM, "suite": "x"}).encode()
    response = _post_chunked(client, body)
    # read, so the field is found and refused by name (an empty body would say the body is missing)
    assert response.status_code == 400, response.content
    assert "suite" in response.json()["detail"]


@override_settings(HARDTESTS_API_MAX_BODY_KB=1)
def test_a_chunked_body_over_the_limit_is_413(client: Client) -> None:
    body = json.dumps({**ITEM, "code": "#" * 4000}).encode()
    response = _post_chunked(client, body)
    assert response.status_code == 413


def _post_chunked(client: Client, body: bytes) -> Any:
    # as gunicorn hands a chunked body over: a stream that reads what there is, and no length
    return client.generic("POST", "/api/v1/verify", CONTENT_TYPE="application/json", HTTP_TRANSFER_ENCODING="chunked",
                          **{"wsgi.input": io.BytesIO(body)})


@pytest.mark.parametrize("suite", [True, False, "1", 1.5])
def test_suite_must_be_an_integer_not_a_bool_or_string(client: Client, suite: Any) -> None:
    response = _post(client, {**ITEM, "suite": suite})
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid" and "suite" in response.json()["detail"]


def test_a_batch_over_the_limit_is_413(client: Client) -> None:
    from django.conf import settings

    response = _post(client, {"items": [ITEM] * (settings.HARDTESTS_API_BATCH_MAX + 1)}, "/api/v1/verify/batch")
    assert response.status_code == 413, response.content
    assert response.json()["code"] == "batch_too_large"


@pytest.mark.django_db(transaction=True)
def test_migrate_storage_without_credentials_says_why_in_one_line(tmp_path: Any) -> None:
    env = {k: v for k, v in worker_env().items() if not k.startswith("AWS_")}
    env.update(AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"), AWS_CONFIG_FILE=str(tmp_path / "none"),
               AWS_EC2_METADATA_DISABLED="true", AWS_S3_ENDPOINT_URL="http://127.0.0.1:9")
    done = subprocess.run([sys.executable, str(REPO / "manage.py"), "migrate_storage", "--to", "s3://bucket/x"],
                          env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "s3://bucket/x" in lines[0], done.stderr


@pytest.mark.parametrize("extra", [{"rewardd": 1}, {"wait": "yes"}])
def test_an_unknown_field_of_a_verification_is_422_naming_it(client: Client, extra: dict[str, Any]) -> None:
    [name] = extra
    for path, body, field in (("/api/v1/verify", {**ITEM, **extra}, name),
                              ("/api/v1/verify/batch", {"items": [ITEM], **extra}, name),
                              ("/api/v1/verify/batch", {"items": [{**ITEM, **extra}]}, f"items.0.{name}")):
        response = _post(client, body, path)
        assert response.status_code == 422, response.content
        answer = response.json()
        assert answer["code"] == "unknown_field" and f"unknown field {field!r}:" in answer["detail"], answer
        assert [e["type"] for e in answer["errors"]] == ["extra_forbidden"]


def test_the_compatible_endpoints_accept_what_their_clients_send(client: Client) -> None:
    """SandboxFusion's and OpenRLHF's clients send fields this server has no use for (SandboxFusion's
    TestConfig has a dozen; its own server ignores what it does not know): accepted, not refused.
    No worker runs here, so an accepted request is 503 no_workers."""
    config = {"dataset_type": "CommonOJDataset", "language": "python", "locale": "en", "is_fewshot": False,
              "compile_timeout": 10, "run_timeout": 10, "provided_data": None, "extra": {},
              "custom_extract_logic": None}
    calls = [
        ("/sandboxfusion/submit", {"dataset": "hardtests", "id": "edge:ab", "config": config,
                                   "completion": "```python\nprint(3)\n```", "future_field": 1}),
        ("/sandboxfusion/run_code", {"code": "print(1)", "language": "python", "stdin": "", "compile_timeout": 10,
                                     "run_timeout": 10, "memory_limit_MB": None, "files": {}, "fetch_files": [],
                                     "future_field": 1}),
        ("/api/v1/openrlhf/reward", {"query": ["```python\nprint(3)\n```"], "prompts": [""], "labels": ["edge:ab"],
                                     "future_field": 1}),
    ]
    _reap_workers_of_earlier_tests()
    for path, body in calls:
        response = _post(client, body, path)
        assert response.status_code in (200, 503), (path, response.content)
        assert response.json().get("code") in (None, "no_workers"), (path, response.content)


def _reap_workers_of_earlier_tests() -> None:
    """A worker an earlier test of this process killed can stay listed, its beat not yet expired:
    the API would take it for alive and wait for it. Its process is gone, so it goes here."""
    from rq.worker import Worker

    from core.queues import redis_connection
    from hardtests_web.ops.reaper import worker_reap
    from tests.deploy.conftest import pid_alive

    connection = redis_connection()
    for worker in Worker.all(connection=connection):
        if not worker.pid or not pid_alive(worker.pid):
            worker_reap(connection, worker.name, reason="its process is gone (an earlier test's)")


@pytest.mark.slow
def test_gunicorns_own_refusals_are_in_the_json_error_shape(tmp_path: Any) -> None:
    import socket
    import time

    from tests.conftest import process_group_stop
    from tests.deploy.conftest import free_port

    port = free_port()
    env = {**worker_env(), "HARDTESTS_WEB_WORKERS": "1", "HARDTESTS_WEB_BIND": f"127.0.0.1:{port}"}
    child = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:hardtests_web.ops.gunicorn",
                              "hardtests_web.wsgi"], cwd=REPO, env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

    def ask(raw: bytes) -> tuple[int, dict[str, str], Any]:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
            conn.sendall(raw)
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        return int(lines[0].split()[1]), headers, json.loads(body)

    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert child.poll() is None and time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        status, headers, body = ask(f"GET /api/v1/jobs/{'j' * 5000} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert (status, headers["content-type"], body["code"]) == (400, "application/json", "request_line_too_long")
        assert "4094" in body["detail"]
        many = "".join(f"X-H{i}: v\r\n" for i in range(150))
        status, headers, body = ask(f"GET /healthz HTTP/1.1\r\nHost: x\r\n{many}\r\n".encode())
        assert (status, body["code"]) == (431, "headers_too_large") and body["detail"]
        status, _, body = ask(b"G\x01T / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (status, body["code"]) == (400, "bad_request")
    finally:
        process_group_stop(child)
