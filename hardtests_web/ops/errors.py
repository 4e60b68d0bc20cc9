"""Pages (not the API, which has its own handlers in api/errors.py) during an outage: a database
or Redis that does not answer is 503 with Retry-After and the reason, not a 500 "server error"."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse
from redis.exceptions import RedisError

log = logging.getLogger(__name__)


class OutageMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if isinstance(exc, OperationalError | InterfaceError):
            part = "the database"
            for conn in connections.all(initialized_only=True):
                if conn.connection is not None and not conn.is_usable():
                    conn.close()
        elif isinstance(exc, RedisError):
            part = "the job queue (Redis)"
        else:
            return None
        log.warning("%s unavailable on %s %s: %s", part, request.method, request.path, exc)
        response = HttpResponse(f"503: {part} is unavailable; try again in a moment.\n", status=503,
                                content_type="text/plain; charset=utf-8")
        response["Retry-After"] = "5"
        return response
