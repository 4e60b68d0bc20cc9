"""The verdict cache: a question asked again (an RL group's repeated samples sent one call each)
is answered with the kept result and the program does not run again; anything that could change
the answer (the suite, the mode, the asking owner) is another question."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.test import override_settings
from rq import Worker

from tests.api.conftest import AB_TESTS, CAPPED, GOOD, WRONG, make_suite

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _verify(api: Any, code: str, **extra: Any) -> dict[str, Any]:
    response = api.post("/api/v1/verify", {"problem": "ab/sum", "language": "python3", "code": code, **extra})
    assert response.status_code == 200, response.content
    return dict(response.json())


def _worker(worker_pid: int) -> tuple[Worker, int]:
    """The test's one worker, fresh from Redis, and the jobs it has finished (RQ counts them
    after its bookkeeping)."""
    from core.queues import verification_queue

    queue = verification_queue()
    [worker] = [w for w in Worker.all(queue=queue, connection=queue.connection) if w.pid == worker_pid]
    worker.refresh()
    return worker, int(worker.successful_job_count or 0) + int(worker.failed_job_count or 0)


def _jobs_done(worker_pid: int) -> int:
    return _worker(worker_pid)[1]


def _quiet(worker_pid: int) -> int:
    """The worker's count once it is idle: an earlier test's answer is published before RQ's own
    bookkeeping, so its count can still rise after that test has ended."""
    from core.queues import verification_queue

    queue = verification_queue()
    deadline = time.monotonic() + 30
    last = -1
    while time.monotonic() < deadline:
        worker, done = _worker(worker_pid)
        if done == last and worker.get_state() == "idle" and not worker.get_current_job_id() and queue.count == 0:
            return done
        last = done
        time.sleep(0.2)
    raise AssertionError("the test's worker did not become idle within 30 s")


def _settled(worker_pid: int, expected: int) -> int:
    deadline = time.monotonic() + 30
    while (done := _jobs_done(worker_pid)) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return done


def test_the_same_question_again_is_answered_from_the_cache_and_runs_nothing(api, ab_problem, sandbox_worker):
    start = _quiet(sandbox_worker.pid)
    first = _verify(api, CAPPED)
    assert first["cached"] is False and (first["verdict"], first["passed"]) == ("WA", 0)
    assert _settled(sandbox_worker.pid, start + 1) == start + 1
    again = _verify(api, CAPPED)
    assert again["cached"] is True
    # the same answer, the worker's own figures included; only this call's time is its own
    same = {k: v for k, v in first.items() if k not in ("cached", "elapsed_ms")}
    assert {k: v for k, v in again.items() if k not in ("cached", "elapsed_ms")} == same
    # its Server-Timing has this call's steps only: no job ran for it
    response = api.post("/api/v1/verify", {"problem": "ab/sum", "language": "python3", "code": CAPPED})
    assert response.json()["cached"] is True
    assert {part.split(";")[0].strip() for part in response["Server-Timing"].split(",")} == \
        {"prepare", "enqueue", "wait"}
    # A job for the cached calls would have run before the next one's on the one FIFO worker.
    other = _verify(api, WRONG)
    assert other["cached"] is False
    assert _settled(sandbox_worker.pid, start + 2) == start + 2
    assert _jobs_done(sandbox_worker.pid) == start + 2


def test_anything_that_could_change_the_answer_is_another_question(api, make_api, ab_problem, sandbox_worker):
    assert _verify(api, GOOD)["cached"] is False
    assert _verify(api, GOOD)["cached"] is True
    # another mode, another subset, another program text, another owner
    assert _verify(api, GOOD, mode="all")["cached"] is False
    assert _verify(api, GOOD, suite="fast")["cached"] is False
    assert _verify(api, GOOD + "\n")["cached"] is False
    other = make_api()
    response = other.post("/api/v1/verify", {"problem": "ab/sum", "language": "python3", "code": GOOD})
    assert response.status_code == 200 and response.json()["cached"] is False
    # a new suite version: its own question, and its own answer
    make_suite(ab_problem, [*AB_TESTS[:2]])
    fresh = _verify(api, GOOD)
    assert fresh["cached"] is False and fresh["suite_version"] == 2 and fresh["total"] == 2
    # the problem's limits are part of the question
    ab_problem.time_limit_ms = 2000
    ab_problem.save(update_fields=["time_limit_ms"])
    assert _verify(api, GOOD)["cached"] is False
    assert _verify(api, GOOD)["cached"] is True


def test_batches_read_the_cache_and_keep_for_later_calls(api, ab_problem, sandbox_worker):
    """A batch item already answered is not run; a batch's own results answer later single calls."""
    assert _verify(api, GOOD)["cached"] is False
    items = [{"problem": "ab/sum", "language": "python3", "code": code} for code in (GOOD, WRONG, GOOD)]
    data = api.post("/api/v1/verify/batch", {"items": items}).json()
    assert data["status"] == "finished"
    assert [(i["result"]["verdict"], i["result"]["cached"]) for i in data["items"]] == \
        [("AC", True), ("WA", False), ("AC", True)]
    again = api.get(f"/api/v1/jobs/{data['job_id']}").json()
    assert [(i["result"]["verdict"], i["result"]["cached"]) for i in again["items"]] == \
        [("AC", True), ("WA", False), ("AC", True)]
    later = _verify(api, WRONG)
    assert (later["verdict"], later["cached"]) == ("WA", True)


@override_settings(HARDTESTS_API_VERDICT_CACHE_S=0)
def test_with_the_cache_off_every_call_runs(api, ab_problem, sandbox_worker):
    from core.queues import redis_connection

    start = _quiet(sandbox_worker.pid)
    assert [_verify(api, GOOD)["cached"] for _ in range(3)] == [False, False, False]
    assert _settled(sandbox_worker.pid, start + 3) == start + 3
    assert list(redis_connection().scan_iter("hardtests:api:verdict:*")) == []


def test_a_sandbox_error_is_never_kept_and_the_job_s_timings_are_not(settings):
    """SE means the machine failed, not the program: asked again, it must run again."""
    from rq import Queue
    from rq.job import Job, _job_stack  # the current job, as a worker sets it around a job

    from core.queues import redis_connection
    from problems.verify_contract import VERDICT_KEY, VERDICT_META_KEY, result_publish
    from problems.verify_types import VerifyResult

    connection = redis_connection()
    queue = Queue("verdict-cache-test", connection=connection)
    kept = {}
    for verdict in ("SE", "WA"):
        key = VERDICT_KEY.format(digest=f"test-{verdict}")
        job = Job.create("os.getpid", connection=connection, meta={VERDICT_META_KEY: [key, 60]})
        job.origin = queue.name
        _job_stack.push(job)
        try:
            result_publish(VerifyResult(verdict=verdict, passed=0, total=4, complete=False, suite_id=1,
                                        suite_version=1, suite_origin="generated", timings={"returned": 1.0}))
        finally:
            _job_stack.pop()
        raw = connection.get(key)
        kept[verdict] = json.loads(raw) if raw else None
        connection.delete(key)
        assert 0 < (connection.ttl(f"hardtests:early-result:{job.id}") or 0)
        connection.delete(f"hardtests:early-result:{job.id}")
    assert kept["SE"] is None
    assert kept["WA"] is not None and "timings" not in kept["WA"]  # the timings are that job's
    assert VerifyResult.from_wire(kept["WA"]) == VerifyResult(verdict="WA", passed=0, total=4, complete=False,
                                                              suite_id=1, suite_version=1, suite_origin="generated")
