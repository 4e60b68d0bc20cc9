"""Settings of the verification API.

Each is declared in hardtests_web/settings.py (so tests can use override_settings); the
defaults below serve code that runs with other settings. Read at call time,
not import time, so a changed setting takes effect without re-importing the API.
"""

from __future__ import annotations

from django.conf import settings

from core.env import env_int

# name -> default; every one is an integer.
DEFAULTS: dict[str, int] = {
    # Requests per minute per token (sliding window in Redis); a token's own value overrides it.
    "HARDTESTS_API_RATE_LIMIT": 600,
    # Largest program accepted, in KiB of UTF-8.
    "HARDTESTS_API_MAX_CODE_KB": 64,
    # Largest request body, in KiB (a batch of programs); larger is refused before parsing.
    "HARDTESTS_API_MAX_BODY_KB": 2048,
    # How long POST /verify (and /verify/batch before answering 202) waits for the workers.
    "HARDTESTS_API_SYNC_TIMEOUT_S": 60,
    # Most programs in one POST /verify/batch.
    "HARDTESTS_API_BATCH_MAX": 32,
    # Refuse new work with 503 while the sandbox queue holds more jobs than this.
    "HARDTESTS_API_QUEUE_MAX": 1000,
    # Hard limit on one judging job on a worker (RQ job timeout).
    "HARDTESTS_API_JOB_TIMEOUT_S": 600,
    # How long batch results stay available at GET /api/v1/jobs/{id}.
    "HARDTESTS_API_RESULT_TTL_S": 3600,
    # How long a verdict is kept to answer the same question again without running it (0: off).
    "HARDTESTS_API_VERDICT_CACHE_S": 300,
}


def api_setting(name: str) -> int:
    value = getattr(settings, name, None)
    if value is None:
        value = env_int(name, DEFAULTS[name])
    return int(value)
