"""Work a request leaves for after its response (api/after_response.py): held until Django's
request_finished (the WSGI server's close of the response, after its last write), run at once
outside a request, and a failure of it is logged, never raised into the server."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from django.core.signals import request_finished, request_started

from api import after_response as module
from api.after_response import after_response


@pytest.fixture(autouse=True)
def _receivers_alone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only this module's receivers (Django's own close the database connections, which these
    tests do not open), and no request left open by an earlier test of this process."""
    monkeypatch.setattr(request_started, "receivers", [])
    monkeypatch.setattr(request_finished, "receivers", [])
    monkeypatch.setattr(request_started, "sender_receivers_cache", {})
    monkeypatch.setattr(request_finished, "sender_receivers_cache", {})
    module.connect()
    module._pending.work = None
    yield
    module._pending.work = None


def test_work_waits_for_the_response_to_leave_and_runs_once() -> None:
    ran: list[str] = []
    request_started.send(sender=None)
    after_response(lambda: ran.append("first"))
    after_response(lambda: ran.append("second"))
    assert ran == []  # the view is still answering
    request_finished.send(sender=None)
    assert ran == ["first", "second"]
    request_started.send(sender=None)
    request_finished.send(sender=None)
    assert ran == ["first", "second"]  # not again with the next request


def test_outside_a_request_the_work_runs_at_once() -> None:
    ran: list[int] = []
    after_response(lambda: ran.append(1))
    assert ran == [1]


def test_a_failing_work_is_logged_and_the_rest_still_runs(caplog) -> None:
    ran: list[int] = []

    def fails() -> None:
        raise ConnectionError("Redis went away")

    request_started.send(sender=None)
    after_response(fails)
    after_response(lambda: ran.append(1))
    with caplog.at_level(logging.WARNING, logger="api.after_response"):
        request_finished.send(sender=None)
    assert ran == [1]
    assert "Redis went away" in caplog.text
