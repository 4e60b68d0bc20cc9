"""Work a request leaves for after its response has left: Django's request_finished, which
the WSGI server sends once it has written the body (gunicorn closes the response after the
last write), so the client never waits for it. Outside a request (a command, a test calling
the code directly) the work runs at once.

Best effort, as the work it takes is: each callable's exception is logged, never raised into
the server's close of the response.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from django.core.signals import request_finished, request_started

log = logging.getLogger(__name__)
_pending = threading.local()


def after_response(work: Callable[[], object]) -> None:
    """Run `work` once this thread's request has sent its response (at once outside one)."""
    queued: list[Callable[[], object]] | None = getattr(_pending, "work", None)
    if queued is None:
        _run(work)
    else:
        queued.append(work)


def _run(work: Callable[[], object]) -> None:
    try:
        work()
    except Exception:  # noqa: BLE001 - the answer has left; a failure here is only logged
        log.warning("work left for after a response failed", exc_info=True)


def _started(**_: Any) -> None:
    _pending.work = []


def _finished(**_: Any) -> None:
    queued: list[Callable[[], object]] | None = getattr(_pending, "work", None)
    _pending.work = None
    for work in queued or ():
        _run(work)


def connect() -> None:
    """From the API app's ready(): before any request of the process starts."""
    request_started.connect(_started, dispatch_uid="hardtests-after-response-started")
    request_finished.connect(_finished, dispatch_uid="hardtests-after-response-finished")
