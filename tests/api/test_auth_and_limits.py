from __future__ import annotations

import logging

import pytest
from django.test import Client, override_settings

from api.models import ApiToken
from api.throttle import rate_limit_hit
from api.tokens import token_authenticate, token_create, token_revoke
from core.queues import redis_connection
from tests.api.conftest import GOOD

# postgres: NUL bytes and lone surrogates are what PostgreSQL refuses and SQLite accepts.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.mark.parametrize(
    "header",
    [None, "", "Bearer", "Bearer nope", "Basic dXNlcjpwdw==", "Bearer htk_0123456789ab_wrongsecret",
     "Bearer htk_\x00\x00_x", "Token htk_0123456789ab_x"],
)
def test_requests_without_a_valid_token_are_401(header):
    extra = {} if header is None else {"HTTP_AUTHORIZATION": header}
    response = Client().get("/api/v1/problems", **extra)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["code"] == "unauthorized"


def test_revoked_token_stops_working_at_once(api, user):
    assert api.get("/api/v1/problems").status_code == 200
    token = ApiToken.objects.get(user=user)
    assert token_revoke(token=token) is True
    assert token_revoke(token=token) is False
    assert api.get("/api/v1/problems").status_code == 401


def test_inactive_user_token_is_refused(api, user):
    user.is_active = False
    user.save()
    assert api.get("/api/v1/problems").status_code == 401


def test_token_is_stored_hashed_and_last_use_is_recorded(user, django_assert_num_queries):
    new = token_create(user=user, name="x", rate_limit_per_minute=7)
    row = ApiToken.objects.get(pk=new.token.pk)
    assert new.secret not in (row.secret_sha256, row.prefix, row.name)
    assert row.prefix in new.secret and len(row.secret_sha256) == 64
    assert row.last_used_at is None
    assert token_authenticate(new.secret) == row
    used = ApiToken.objects.get(pk=row.pk)
    assert used.last_used_at is not None
    with django_assert_num_queries(1):  # last use is recent: the lookup only, no write
        again = token_authenticate(new.secret)
    # the hand-written lookup builds the token as the ORM does (aware datetimes, every field)
    fields = [f.attname for f in ApiToken._meta.concrete_fields]
    assert [getattr(again, f) for f in fields] == [getattr(used, f) for f in fields]
    assert again.created_at.tzinfo is not None and again.rate_limit_per_minute == 7
    assert token_authenticate(new.secret[:-1] + ("A" if new.secret[-1] != "A" else "B")) is None


def test_token_never_appears_in_logs(api, caplog):
    caplog.set_level(logging.DEBUG)
    api.get("/api/v1/problems")
    api.client.get("/api/v1/problems", HTTP_AUTHORIZATION=f"Token {api.token}")
    assert api.token not in caplog.text


@override_settings(HARDTESTS_API_RATE_LIMIT=3)
def test_rate_limit_per_token_is_429_with_retry_after(api, make_api):
    statuses = [api.get("/api/v1/problems").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = api.get("/api/v1/problems")
    assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 60
    # Another token has its own budget.
    assert make_api().get("/api/v1/problems").status_code == 200


def test_a_token_can_have_its_own_rate_limit(make_api):
    client = make_api(rate_limit_per_minute=1)
    assert [client.get("/api/v1/problems").status_code for _ in range(2)] == [200, 429]


def test_sliding_window_counts_part_of_the_previous_minute():
    from limits import RateLimitItemPerMinute

    from api.throttle import NAMESPACE, _limiter

    storage = _limiter().storage
    key = RateLimitItemPerMinute(9).key_for("slide")
    # The previous minute saw 10 requests and 45 s of it are still inside the window:
    # 75% of 10 (7) still count, so a limit of 9 leaves room for exactly 2 more.
    connection = redis_connection()
    connection.set(f"{NAMESPACE}:{storage._previous_window_key(key)}", 10, px=45_000)
    connection.set(f"{NAMESPACE}:{storage._current_window_key(key)}", 0, px=105_000)
    assert rate_limit_hit("slide", 9) is None
    assert rate_limit_hit("slide", 9) is None
    wait = rate_limit_hit("slide", 9)
    assert wait is not None and 1 <= wait <= 120
    # A refused request does not use up budget, or a client retrying in a loop never gets through.
    assert rate_limit_hit("slide", 9) is not None
    assert int(connection.get(f"{NAMESPACE}:{storage._current_window_key(key)}")) == 2


def test_rate_limiter_down_is_503(api, monkeypatch):
    from redis.exceptions import ConnectionError as RedisConnectionError

    from api import throttle

    def broken(*args, **kwargs):
        raise RedisConnectionError("down")

    monkeypatch.setattr(throttle, "rate_limit_hit", broken)
    response = api.get("/api/v1/problems")
    assert response.status_code == 503 and response.json()["code"] == "redis_unavailable"


@override_settings(HARDTESTS_API_MAX_BODY_KB=1)
def test_body_over_the_limit_is_413_before_parsing(api, ab_problem):
    response = api.post("/api/v1/verify", {"problem": "ab/sum", "language": "python3", "code": "#" * 2000})
    assert response.status_code == 413 and response.json()["code"] == "too_large"


def test_code_over_the_limit_is_413(api, ab_problem):
    code = GOOD + "#" * (64 * 1024)
    response = api.post("/api/v1/verify", {"problem": "ab/sum", "language": "python3", "code": code})
    assert response.status_code == 413 and response.json()["code"] == "code_too_large"


@pytest.mark.parametrize(
    "body",
    [
        "{not json",
        "[]",
        {"problem": "ab/sum", "language": "rust", "code": GOOD},
        {"problem": "ab/sum", "language": "python3"},
        {"problem": "ab/sum", "language": "python3", "code": GOOD, "mode": "some"},
        {"problem": "ab/sum", "language": "python3", "code": GOOD, "suite": 0},
        {"problem": "ab/sum", "language": "python3", "code": "print(1)\x00"},
        {"problem": "ab/sum", "language": "python3", "code": ""},
        {"problem": "", "language": "python3", "code": GOOD},
        {"problem": 5, "language": "python3", "code": GOOD},
    ],
)
def test_bad_verify_input_is_400(api, ab_problem, body):
    response = api.post("/api/v1/verify", body)
    assert response.status_code == 400, response.content
    assert response.json()["code"] in ("invalid", "bad_request")


def test_lone_surrogate_in_json_is_400_not_500(api, ab_problem):
    raw = '{"problem": "ab/sum", "language": "python3", "code": "print(1) # \\ud800"}'
    response = api.post("/api/v1/verify", raw)
    assert response.status_code == 400
    raw = '{"problem": "\\ud800", "language": "python3", "code": "print(1)"}'
    assert api.post("/api/v1/verify", raw).status_code == 400


def test_unknown_problem_and_missing_suite_are_404_for_verify(api, ab_problem):
    from tests.factories import ProblemFactory

    ProblemFactory(pid="no-suite")
    for problem, code in [("nope", "not_found"), ("no-suite", "no_active_suite")]:
        response = api.post("/api/v1/verify", {"problem": problem, "language": "python3", "code": GOOD})
        assert response.status_code == 404 and response.json()["code"] == code


def test_openapi_schema_is_served_without_a_token():
    schema = Client().get("/api/v1/openapi.json").json()
    assert set(schema["paths"]) == {
        "/api/v1/verify", "/api/v1/verify/batch", "/api/v1/jobs/{job_id}",
        "/api/v1/problems", "/api/v1/problems/{pid}", "/api/v1/problems/{pid}/suite", "/api/v1/openrlhf/reward",
    }
    assert schema["components"]["securitySchemes"]["TokenAuth"]["scheme"] == "bearer"


def test_unexpected_errors_are_json_500_without_a_traceback(api, monkeypatch):
    from api import endpoints

    def boom(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(endpoints, "problem_page", boom)
    response = api.get("/api/v1/problems")
    assert response.status_code == 500
    assert response.json() == {"code": "internal", "detail": "internal error; it has been logged"}


@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v1/verify/", "/api/v1/jobs/"])
def test_unknown_api_paths_answer_json_404(path):
    response = Client().get(path)
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_wrong_method_is_405(api):
    assert api.get("/api/v1/verify").status_code == 405
