"""Whether this process is shutting down: set by the web server's SIGTERM hook
(hardtests_web/ops/gunicorn.py), read by the API, which then refuses new verifications with 503
`shutting_down` while the ones in flight finish."""

from __future__ import annotations

import threading

_stopping = threading.Event()


def shutdown_begin() -> None:
    _stopping.set()


def shutting_down() -> bool:
    return _stopping.is_set()
