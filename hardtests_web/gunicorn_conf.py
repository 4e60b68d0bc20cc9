"""gunicorn settings for the web process, the base of hardtests_web.ops.gunicorn (which every command and unit starts gunicorn with: `-c python:hardtests_web.ops.gunicorn`).

Threads, not more processes: a verification request spends its time waiting on a sandbox
worker's result (up to HARDTESTS_API_SYNC_TIMEOUT_S), not on the CPU, so each process
serves several at once. The request timeout is above the API's own wait, so gunicorn never
kills a request the API would still answer (with its 503).
"""

from __future__ import annotations

from typing import Any

from gunicorn.glogging import Logger

from core.config_registry import read_int, read_str
from hardtests_web.log_redact import PathTokenFilter, gunicorn_atoms_redact


class RedactingLogger(Logger):  # type: ignore[misc]  # gunicorn ships no types: Logger is Any
    """gunicorn's logger with API tokens in URL paths (``/t/<token>/``) hidden from the
    access log (request line, path, referer) and from the error log."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.addFilter(PathTokenFilter())
            log.addFilter(PathTokenFilter())

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> dict[str, Any]:
        return gunicorn_atoms_redact(super().atoms(resp, req, environ, request_time))


bind = read_str("HARDTESTS_WEB_BIND") or f"0.0.0.0:{read_int('PORT')}"
workers = read_int("HARDTESTS_WEB_WORKERS")
worker_class = "gthread"
threads = read_int("HARDTESTS_WEB_THREADS")
timeout = read_int("HARDTESTS_API_SYNC_TIMEOUT_S") + 30
graceful_timeout = 30
keepalive = 5
# Bounded memory growth: a process is replaced after this many requests (0: never).
max_requests = read_int("HARDTESTS_WEB_MAX_REQUESTS")
max_requests_jitter = max_requests // 10
accesslog = "-"
errorlog = "-"
logger_class = RedactingLogger
# Behind a proxy that terminates TLS; it must set X-Forwarded-Proto.
forwarded_allow_ips = read_str("FORWARDED_ALLOW_IPS")
