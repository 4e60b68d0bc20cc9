"""Running one program on one stdin on the `sandbox` workers (SandboxFusion's POST /run_code).

The web process never runs a program: it enqueues api.jobs.run_code_job and
blocks on the job's RQ result stream. The same capacity checks as the verification API
answer 503 when no worker listens, the queue is full or no answer comes in time.
"""

from __future__ import annotations

from typing import Any

from redis.exceptions import RedisError
from rq.results import Result
from rq.worker import Worker

from api.conf import api_setting
from api.connection import sandbox_queue
from api.errors import Unavailable

RUN_JOB = "api.jobs.run_code_job"
RESULT_TTL_S = 60


def code_run(*, language: str, code: str, stdin: str, time_s: float, memory_mb: int) -> dict[str, Any]:
    """SandboxFusion's RunCodeResponse for one run; Unavailable (503) when the fleet cannot answer."""
    timeout_s = api_setting("HARDTESTS_API_SYNC_TIMEOUT_S")
    queue = sandbox_queue()
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
