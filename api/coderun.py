"""Running one program on one stdin on the `sandbox` workers (SandboxFusion's POST /run_code).

The web process never runs a program: it enqueues api.jobs.run_code_job and
blocks on the job's RQ result stream. The same capacity checks as the verification API
answer 503 when no worker listens, the queue is full or no answer comes in time.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import time
import uuid
from typing import Any, cast

from redis import Redis
from redis.exceptions import RedisError
from rq.results import Result

from api.conf import api_setting
from api.errors import Unavailable
from core.queues import queue_workers_alive, verification_queue

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


# Fair use of the workers by /run_code, whose callers send many runs of one program at once
# (verl's built-in reward: one call per test, all of them together). A program's first run goes
# alone, as a probe; a program whose runs are quick then runs as many at once as it asks, but
# one whose run was slow (SLOW_RUN_S of CPU, or TLE) keeps at most half the workers busy, so
# the other programs' runs are never queued behind its many slow ones.
FAIR_PREFIX = "hardtests:api:runcode:"
FAIR_POLL_S = 0.05
SLOW_RUN_S = 1.0
PACE_KEEP_S = 600
# take a slot when the program holds fewer than its cap (expired holders dropped first)
_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  redis.call('EXPIREAT', KEYS[1], math.ceil(tonumber(ARGV[3])) + 1)
  return 1
end
return 0
"""
# keep the worst pace seen of a program: quick < slow < tle
_PACE = """
local rank = {quick = 1, slow = 2, tle = 3}
local now = redis.call('GET', KEYS[1])
if not now or rank[ARGV[1]] >= (rank[now] or 0) then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
end
return 1
"""


def fair_program(*, owner: object, language: str, code: str, time_s: float) -> str:
    """Whose share a run counts against: one program of one caller under one time limit (all
    the tests of a completion)."""
    return hashlib.sha256(f"{owner}\0{language}\0{time_s}\0{code}".encode()).hexdigest()[:32]


def _pace_key(program: str) -> str:
    return f"{FAIR_PREFIX}pace:{program}"


def fair_cap(pace: bytes | str | None, workers: int) -> int:
    """How many runs of a program may be in flight: 1 while nothing is known of it (a probe),
    half the workers (at least one) once a run was slow or a TLE, else every worker's worth."""
    if pace is None:
        return 1
    if (pace.decode() if isinstance(pace, bytes) else pace) in ("slow", "tle"):
        return max(1, workers // 2)
    return max(1, workers) * 4


def fair_acquire(connection: Redis, *, program: str, workers: int, answer_by: float) -> str | None:
    """Wait for a slot under this program's cap until ``answer_by`` (epoch seconds); the slot's
    id, or None when none came (the caller would have given up before a run)."""
    slot = uuid.uuid4().hex
    holders = f"{FAIR_PREFIX}holders:{program}"
    while True:
        now = time.time()
        cap = fair_cap(_pace(connection, program), workers)
        if connection.eval(_ACQUIRE, 1, holders, str(now), slot, str(answer_by + 5), str(cap)):
            return slot
        if now + FAIR_POLL_S >= answer_by:
            return None
        time.sleep(FAIR_POLL_S)


def _pace(connection: Redis, program: str) -> str | None:
    pace = cast(bytes | None, connection.get(_pace_key(program)))
    return pace.decode() if pace is not None else None


def unrun_time_limit(*, language: str, time_s: float, waited_s: float) -> dict[str, Any]:
    """SandboxFusion's answer for a run that could not start before its caller's read timeout
    because the program's other runs exceeded the time limit: TimeLimitExceeded, with why."""
    run = {"status": "TimeLimitExceeded", "execution_time": time_s, "cpu_time": None, "return_code": None,
           **command_outputs(b"", f"not run: another run of this program exceeded the time limit ({time_s:g} s) "
                                  f"and its runs held its share of the sandbox workers for {waited_s:.0f} s\n")}
    compile_result = None if language == "python3" else {
        "status": "Finished", "execution_time": 0.0, "cpu_time": 0.0, "return_code": 0,
        **command_outputs(b"", "")}
    return {"status": "Failed", "message": "TLE", "compile_result": compile_result, "run_result": run}


def fair_release(connection: Redis, *, program: str, slot: str, answer: dict[str, Any] | None) -> None:
    """Give the slot back, and remember how the run went: a TLE, slow (a second of CPU) or quick;
    the worst seen stays said."""
    run = (answer or {}).get("run_result") or {}
    with connection.pipeline(transaction=False) as pipe:
        pipe.zrem(f"{FAIR_PREFIX}holders:{program}", slot)
        if run:
            pace = ("tle" if run.get("status") == "TimeLimitExceeded"
                    else "slow" if float(run.get("cpu_time") or 0) >= SLOW_RUN_S else "quick")
            pipe.eval(_PACE, 1, _pace_key(program), pace, str(PACE_KEEP_S))
        pipe.execute()


def code_run(*, language: str, code: str, stdin: str, time_s: float, memory_mb: int, owner: object = None,
             answer_within_s: float | None = None) -> dict[str, Any]:
    """SandboxFusion's RunCodeResponse for one run; Unavailable (503) when the fleet cannot answer.

    ``answer_within_s``: how long the caller waits for an answer (verl's built-in reward: its
    compile_timeout + run_timeout + 10 s). A run whose program's fair share of the workers stays
    busy until then is not run: a program with a TLE run is answered TimeLimitExceeded, its own
    verdict; any other, 503 ``busy``.
    """
    timeout_s = api_setting("HARDTESTS_API_SYNC_TIMEOUT_S")
    budget_s = min(float(timeout_s), answer_within_s if answer_within_s is not None else float(timeout_s))
    answer_by = time.time() + budget_s
    queue = verification_queue()
    program = fair_program(owner=owner, language=language, code=code, time_s=time_s)
    slot: str | None = None
    result: Result | None = None
    try:
        # the same presence rule as /verify: a worker counts only while its own beat is fresh
        workers = len(queue_workers_alive(queue.connection, queue.name))
        if workers == 0:
            raise Unavailable("no sandbox worker is running; try again later", code="no_workers", retry_after_s=30)
        if queue.count >= api_setting("HARDTESTS_API_QUEUE_MAX"):
            raise Unavailable(f"the sandbox queue is full ({queue.count} jobs waiting); try again later",
                              code="queue_full")
        slot = fair_acquire(queue.connection, program=program, workers=workers, answer_by=answer_by)
        if slot is None:
            if _pace(queue.connection, program) == "tle":
                # The wait is the program's own doing: a run of it exceeded the time limit and its
                # runs held its share until the caller's read timeout. Its verdict, as a judge
                # stopping at a TLE would give (never a 503, which a program could cause on
                # purpose). A program only slow within its limit is not judged so: 503 below.
                return unrun_time_limit(language=language, time_s=time_s, waited_s=budget_s)
            raise Unavailable(f"this program's share of the sandbox workers stayed busy for {budget_s:.0f} s "
                              "(its other runs are slow); not run", code="busy", retry_after_s=5)
        wait_s = max(1, math.ceil(answer_by - time.time()))
        job = queue.enqueue(RUN_JOB, args=(language, code, stdin, time_s, memory_mb, answer_by),
                            job_timeout=api_setting("HARDTESTS_API_JOB_TIMEOUT_S"), ttl=wait_s,
                            result_ttl=RESULT_TTL_S, failure_ttl=RESULT_TTL_S, description=f"api run_code {language}")
        result = job.latest_result(timeout=wait_s)
    except RedisError as exc:
        raise Unavailable("the job queue (Redis) is unavailable", code="redis_unavailable") from exc
    finally:
        if slot is not None:
            answer = result.return_value if result is not None and result.type == Result.Type.SUCCESSFUL else None
            try:
                fair_release(queue.connection, program=program, slot=slot,
                             answer=answer if isinstance(answer, dict) else None)
            except RedisError:
                pass  # the slot expires on its own
    if result is None:
        try:
            queue.remove(job.id)
        except RedisError:
            pass
        raise Unavailable(f"no sandbox worker ran the program within {budget_s:.0f} s", code="timeout",
                          retry_after_s=10)
    if result.type != Result.Type.SUCCESSFUL or not isinstance(result.return_value, dict):
        last = (result.exc_string or "").strip().splitlines()[-1:] or [result.type.name.lower()]
        # Still an answer in SandboxFusion's shape, whose clients treat SandboxError as an error.
        return {"status": "SandboxError", "message": f"running failed on the worker: {last[0][:500]}"}
    return result.return_value
