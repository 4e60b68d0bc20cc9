"""Property-based fuzzing of the SandboxFusion-compatible endpoints from their own OpenAPI
schema (schemathesis), as tests/api/test_fuzz.py does for /api/v1/. No worker runs, so a
valid request that reaches the queue is a 503, never a 500 or a made-up answer."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import negative_data_rejection, not_a_server_error

from api.tokens import token_create
from tests.api.conftest import make_suite
from tests.factories import ProblemFactory, UserFactory


@pytest.fixture
def sf_schema(db):
    make_suite(ProblemFactory(source="test", pid="ab/sum"))
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/sandboxfusion/openapi.json", get_wsgi_application())
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def bearer(db):
    return token_create(user=UserFactory(username="fuzzer"), name="fuzz", rate_limit_per_minute=10**6).secret


schema = schemathesis.pytest.from_fixture("sf_schema")


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_sandboxfusion_endpoints_never_fail_on_client_input(case, bearer):
    # 503 is the documented answer when no worker runs (here, always); any other 5xx is a bug.
    response = case.call_and_validate(headers={"Authorization": f"Bearer {bearer}"},
                                      excluded_checks=[negative_data_rejection, not_a_server_error])
    assert response.status_code < 500 or (response.status_code == 503 and response.json()["code"] == "no_workers")
