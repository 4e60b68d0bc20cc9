"""gunicorn settings for a web server that drains: `gunicorn -c python:hardtests_web.ops.gunicorn
hardtests_web.wsgi` (what `serve`, compose and the systemd unit run).

Everything of hardtests_web.gunicorn_conf, plus a graceful timeout above the API's own wait
(HARDTESTS_API_SYNC_TIMEOUT_S), so a SIGTERM never cuts a verification in flight: gunicorn
closes its listening socket at once (new connections go to another node; on Linux their SYN is
dropped first, so none is completed by the kernel and then reset as the socket closes), each
request in flight gets its answer, and one read after the signal is refused with 503 `shutting_down` and
Retry-After instead of starting work the process will not finish.
"""

from __future__ import annotations

import signal
import sys
from typing import Any

from core.config_registry import read_int
from core.embedded import parent_death_kills_me
from hardtests_web.gunicorn_conf import *  # noqa: F403
from hardtests_web.ops.draining import door_close_on_stop, json_errors_install
from hardtests_web.ops.process import exit_fast

graceful_timeout = read_int("HARDTESTS_API_SYNC_TIMEOUT_S") + 15
json_errors_install()
# The app is imported once, in the master, and each worker is a fork of it: a worker restarted
# (killed, or replaced after max_requests) serves at once instead of importing Django and every
# app again, which took up to 77 s at a load of 30 while requests waited in the accept queue.
# Nothing connects at import (the database and Redis connect on first use, in the worker).
preload_app = True
# gthread, answering every connection it has taken before it exits (hardtests_web.ops.draining)
worker_class = "hardtests_web.ops.draining.DrainingWorker"


def post_worker_init(worker: Any) -> None:
    from core.lifecycle import shutdown_begin

    graceful = signal.getsignal(signal.SIGTERM)

    def on_term(signum: int, frame: Any) -> None:
        shutdown_begin()
        if callable(graceful):
            graceful(signum, frame)

    signal.signal(signal.SIGTERM, on_term)


def post_fork(server: Any, worker: Any) -> None:
    # A worker dies with its master: a master killed with SIGKILL (or with `serve`, whose child it
    # is) leaves no worker answering on, holding the port for up to 16 s.
    parent_death_kills_me(server.pid)


def worker_exit(server: Any, worker: Any) -> None:
    """A worker that stopped cleanly (answers sent, logs written) ends at once: its interpreter's
    teardown cost 2-3 s under load, between the last answer and the master's exit."""
    stopping = sys.exc_info()[1]
    if isinstance(stopping, SystemExit) and stopping.code in (0, None):
        exit_fast(0)


def on_starting(server: Any) -> None:
    # new connections are dropped as the arbiter stops, so none is completed and then reset
    door_close_on_stop(server)
    from django.apps import apps

    if server.cfg.preload_app and apps.ready:
        # What Django imports on a process's first request (the URLconf: every view, the API's
        # schemas), imported here once so that no forked worker pays it.
        from django.urls import get_resolver

        get_resolver().url_patterns  # noqa: B018 - the import is the point
