"""Running one program on one stdin on the `sandbox` workers (SandboxFusion's POST /run_code).

The web process never runs a program: it enqueues api.jobs.run_code_job and
blocks on the job's RQ result stream. The same capacity checks as the verification API
answer 503 when no worker listens, the queue is full or no answer comes in time.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from redis.exceptions import RedisError
from rq.results import Result
from rq.worker import Worker

from api.conf import api_setting
from api.errors import Unavailable
from core.queues import verification_queue

RUN_JOB = "api.jobs.run_code_job"
RESULT_TTL_S = 60
# What a program's stdout may cost in the JSON answer. UTF-8 text is sent as text while its
# JSON form (control characters and non-ASCII escaped) stays under TEXT_JSON_CAP; anything
# else is base64 of at most BASE64_RAW_CAP bytes: 8 MB of 0xFF is 10.7 MB of answer, not 48.
RAW_CAP = 8 * 1024 * 1024
TEXT_JSON_CAP = 2 * RAW_CAP
BASE64_RAW_CAP = RAW_CAP


def _utf8(raw: bytes, cut: bool) -> str | None:
    # A cap may split the last character: up to 3 bytes of it are dropped, not the text.
    for trim in range(4 if cut else 1):
        try:
            return raw[:len(raw) - trim].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def output_field(data: bytes, *, raw_cap: int = RAW_CAP, text_json_cap: int = TEXT_JSON_CAP,
                 base64_raw_cap: int = BASE64_RAW_CAP) -> tuple[str, str, bool]:
    """(value, encoding, truncated) of a program's output for a JSON answer: encoding is
    "utf-8" (value is the text) or "base64" (value is base64 of the bytes, as SandboxFusion
    sends files); truncated says the value holds only a prefix of ``data``."""
    raw = data[:raw_cap]
    text = _utf8(raw, cut=len(data) > raw_cap)
    if text is not None and len(json.dumps(text)) <= text_json_cap:
        return text, "utf-8", len(text.encode("utf-8")) < len(data)
    raw = data[:base64_raw_cap]
    return base64.b64encode(raw).decode("ascii"), "base64", len(raw) < len(data)


def command_outputs(stdout: bytes, stderr: str, *, stderr_cap: int = 8000) -> dict[str, Any]:
    """stdout / stderr of a CommandRunResult with their encodings and truncation flags."""
    out, out_encoding, out_cut = output_field(stdout)
    err_bytes = stderr.encode("utf-8", "surrogateescape")
    err, err_encoding, err_cut = output_field(err_bytes[-stderr_cap:], raw_cap=stderr_cap,
                                              text_json_cap=2 * stderr_cap, base64_raw_cap=stderr_cap)
    return {"stdout": out, "stdout_encoding": out_encoding, "stdout_truncated": out_cut,
            "stderr": err, "stderr_encoding": err_encoding, "stderr_truncated": err_cut or len(err_bytes) > stderr_cap}


def code_run(*, language: str, code: str, stdin: str, time_s: float, memory_mb: int) -> dict[str, Any]:
    """SandboxFusion's RunCodeResponse for one run; Unavailable (503) when the fleet cannot answer."""
    timeout_s = api_setting("HARDTESTS_API_SYNC_TIMEOUT_S")
    queue = verification_queue()
    try:
        if Worker.count(queue=queue, connection=queue.connection) == 0:
            raise Unavailable("no sandbox worker is running; try again later", code="no_workers", retry_after_s=30)
        if queue.count >= api_setting("HARDTESTS_API_QUEUE_MAX"):
            raise Unavailable(f"the sandbox queue is full ({queue.count} jobs waiting); try again later",
                              code="queue_full")
        job = queue.enqueue(RUN_JOB, args=(language, code, stdin, time_s, memory_mb),
                            job_timeout=api_setting("HARDTESTS_API_JOB_TIMEOUT_S"), ttl=max(1, timeout_s),
                            result_ttl=RESULT_TTL_S, failure_ttl=RESULT_TTL_S, description=f"api run_code {language}")
        result = job.latest_result(timeout=timeout_s)
    except RedisError as exc:
        raise Unavailable("the job queue (Redis) is unavailable", code="redis_unavailable") from exc
    if result is None:
        try:
            queue.remove(job.id)
        except RedisError:
            pass
        raise Unavailable(f"no sandbox worker ran the program within {timeout_s} s", code="timeout", retry_after_s=10)
    if result.type != Result.Type.SUCCESSFUL or not isinstance(result.return_value, dict):
        last = (result.exc_string or "").strip().splitlines()[-1:] or [result.type.name.lower()]
        # Still an answer in SandboxFusion's shape, whose clients treat SandboxError as an error.
        return {"status": "SandboxError", "message": f"running failed on the worker: {last[0][:500]}"}
    return result.return_value
