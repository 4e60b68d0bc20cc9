"""Property-based fuzzing of the whole API from its own OpenAPI schema (schemathesis).

Bounded: at most 30 examples per operation and no deadline per example. A valid token
with a high rate limit is sent, so the fuzzer gets past authentication and explores
the operations themselves. The checks are schemathesis' defaults (no 5xx, documented
status codes, content types and response bodies that match the schema) except
negative_data_rejection: the valid token we send replaces the Authorization header that a
negative case mutated, so that check would blame the API for accepting a request that is,
as sent, valid.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import negative_data_rejection

from api.tokens import token_create
from tests.api.conftest import make_suite
from tests.factories import ProblemFactory, UserFactory


@pytest.fixture
def api_schema(db):
    # Something to find: a problem with an active suite, and one without.
    make_suite(ProblemFactory(source="test", pid="ab/sum"))
    ProblemFactory(source="test", pid="0")
    # The WSGI handler closes the database connection after each request, which would end
    # the test's transaction; Django's own test client suspends this the same way.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def bearer(db):
    return token_create(user=UserFactory(username="fuzzer"), name="fuzz", rate_limit_per_minute=10**6).secret


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_never_fails_on_client_input(case, bearer):
    case.call_and_validate(headers={"Authorization": f"Bearer {bearer}"}, excluded_checks=[negative_data_rejection])
