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
