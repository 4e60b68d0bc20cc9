"""The verification endpoints' refusals that need no running worker: 404, 413, 503."""

from __future__ import annotations

import pytest
from django.test import override_settings

from tests.api.conftest import GOOD

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

ITEM = {"problem": "ab/sum", "language": "python3", "code": GOOD}


def test_no_worker_is_503(api, ab_problem):
    from rq.worker import Worker

    from core.queues import verification_queue

    # no worker: an earlier file's worker (stopped, its RQ key not yet expired) is unregistered
    queue = verification_queue()
    for worker in Worker.all(queue=queue, connection=queue.connection):
        worker.register_death()
    response = api.post("/api/v1/verify", ITEM)
    assert response.status_code == 503
    assert response.json()["code"] == "no_workers" and int(response["Retry-After"]) > 0


@override_settings(HARDTESTS_API_QUEUE_MAX=0)
def test_full_queue_is_503(api, ab_problem, fake_worker):
    response = api.post("/api/v1/verify", ITEM)
    assert response.status_code == 503 and response.json()["code"] == "queue_full"
    assert api.post("/api/v1/verify/batch", {"items": [ITEM]}).json()["code"] == "queue_full"


@override_settings(HARDTESTS_API_SYNC_TIMEOUT_S=1)
def test_no_answer_in_time_is_503_and_the_job_is_withdrawn(api, ab_problem, fake_worker):
    from core.queues import verification_queue

    response = api.post("/api/v1/verify", ITEM)
    assert response.status_code == 503 and response.json()["code"] == "timeout"
    assert verification_queue().count == 0


@override_settings(HARDTESTS_API_SYNC_TIMEOUT_S=1)
def test_a_handed_off_item_nobody_takes_in_time_is_a_503_and_is_withdrawn(api, ab_problem, fake_worker, enqueued):
    from core.queues import redis_connection, worker_health_forget, worker_health_publish
    from problems.verify_contract import HANDOFF_KEY

    connection = redis_connection()
    # the fake worker says it takes handed-off items (and, as any fake worker, takes nothing)
    worker_health_publish(connection, fake_worker.name, {"ok": True, "problems": [], "handoff": True}, 60)
    try:
        response = api.post("/api/v1/verify", {"problem": "ab/sum", "language": "python3", "code": GOOD})
    finally:
        worker_health_forget(connection, fake_worker.name)
    assert response.status_code == 503 and response.json()["code"] == "timeout"
    assert enqueued == [] and connection.llen(HANDOFF_KEY) == 0


@override_settings(HARDTESTS_API_SYNC_TIMEOUT_S=1)
def test_a_queue_whose_every_worker_reports_it_cannot_judge_is_503_saying_why(api, ab_problem, fake_worker):
    import time

    from rq.worker import Worker

    from core.queues import (
        WORKER_HEALTH_HASH,
        redis_connection,
        verification_queue,
        worker_health_forget,
        worker_health_publish,
        worker_health_read,
    )

    connection = redis_connection()
    queue = verification_queue()
    second = Worker([queue], connection=connection, name=f"fake-b-{time.monotonic_ns()}")
    second.register_birth()
    sick = {"ok": False, "problems": ["storage s3://b: unreachable"], "checked_at": time.time()}
    try:
        worker_health_publish(connection, fake_worker.name, sick, 60)
        worker_health_publish(connection, second.name, {**sick, "problems": ["database: locked"]}, 60)
        response = api.post("/api/v1/verify", ITEM)
        assert response.status_code == 503 and response.json()["code"] == "workers_unhealthy"
        assert response.json()["detail"].endswith("database: locked; storage s3://b: unreachable")
        # one able worker is enough: the request is queued (and, nobody judging, times out)
        worker_health_publish(connection, second.name, {**sick, "ok": True, "problems": []}, 60)
        assert api.post("/api/v1/verify", ITEM).json()["code"] == "timeout"
        # a record past its expiry: that worker's beat stopped (killed), so it is not counted,
        # however able it said it was; the one left cannot judge
        worker_health_publish(connection, second.name, {**sick, "ok": True, "problems": []}, 0.01)
        time.sleep(0.05)
        assert set(worker_health_read(connection, [fake_worker.name, second.name])) == {fake_worker.name}
        assert api.post("/api/v1/verify", ITEM).json()["code"] == "workers_unhealthy"
        # a malformed record is no word either, never a 500
        connection.hset(WORKER_HEALTH_HASH, second.name, '{"ok": false, "expires_at": "soon"}')
        assert api.post("/api/v1/verify", ITEM).json()["code"] == "timeout"
        # the next record published drops the expired and malformed ones of others
        worker_health_publish(connection, fake_worker.name, sick, 60)
        fields = connection.hkeys(WORKER_HEALTH_HASH)
        assert fake_worker.name.encode() in fields and second.name.encode() not in fields
    finally:
        second.register_death()
        for name in (fake_worker.name, second.name):
            worker_health_forget(connection, name)


@override_settings(HARDTESTS_API_BATCH_MAX=2)
def test_batch_larger_than_the_limit_is_413(api, ab_problem):
    response = api.post("/api/v1/verify/batch", {"items": [ITEM] * 3})
    assert response.status_code == 413 and response.json()["code"] == "batch_too_large"


def test_batch_names_the_bad_item(api, ab_problem):
    response = api.post("/api/v1/verify/batch", {"items": [ITEM, {**ITEM, "problem": "nope"}]})
    assert response.status_code == 404
    assert response.json()["detail"].startswith("items[1]: ")
    assert api.post("/api/v1/verify/batch", {"items": []}).status_code == 400


@pytest.mark.parametrize("job_id", ["0" * 32, "not-a-job", "x" * 500])
def test_unknown_job_is_404(api, job_id):
    response = api.get(f"/api/v1/jobs/{job_id}")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_an_unroutable_api_path_is_a_json_404(api):
    for path in ("/api/v1/problems/a%0Ab", "/api/v1/no-such-thing", "/api/v2/problems"):
        response = api.get(path)
        assert response.status_code == 404, path
        assert response.json()["code"] == "not_found", path


def test_the_wait_takes_a_job_s_early_result_and_reports_it_like_rq_s():
    """A judging job publishes its return value on its early stream as it returns, before RQ's
    bookkeeping stores RQ's own result: the API answers from whichever comes first. Here only
    the early one ever comes (no worker runs)."""
    import json
    import time

    from api.verification import _outcome
    from core.queues import verification_queue
    from problems.verify_contract import RESULT_KEY as EARLY_RESULT_KEY
    from problems.verify_contract import results_wait as _wait
    from problems.verify_types import VerifyResult

    connection = verification_queue().connection
    value = {"verdict": "WA", "passed": 0, "total": 4, "complete": False, "tests": [], "suite_id": 1,
             "suite_version": 1, "suite_origin": "generated", "message": "", "elapsed_ms": 3, "reward": 0,
             "pass_fraction": 0.0}
    connection.xadd(EARLY_RESULT_KEY.format(job_id="j-early"), {"value": json.dumps(value)})
    results = _wait(connection, ["j-early", "j-none"], 0.3)
    assert list(results) == ["j-early"]
    outcome = _outcome(results["j-early"], None)
    assert (outcome.status, outcome.result) == ("finished", VerifyResult.from_wire(value))
    assert outcome.finished_at is not None and abs(outcome.finished_at - time.time()) < 60


def test_a_batch_job_finishing_between_the_result_read_and_the_status_read_is_finished(monkeypatch):
    """GET /jobs/{id} reads the results, then the status of the jobs without one: a job that
    finished in between has its result read again, never an error."""
    import json
    import uuid

    from rq.job import Job, JobStatus

    from api import verification
    from core.queues import redis_connection
    from problems.verify_contract import RESULT_KEY
    from problems.verify_types import VerifyResult

    connection = redis_connection()
    job = Job.create("problems.jobs.judge_code_job", connection=connection, id=uuid.uuid4().hex)
    job.set_status(JobStatus.FINISHED)
    job.save()
    value = {"verdict": "AC", "passed": 4, "total": 4, "complete": True, "tests": [], "suite_id": 1,
             "suite_version": 1, "suite_origin": "generated"}
    real = verification.results_read
    calls = []

    def late(conn, job_ids):  # the first read comes before the job has finished
        calls.append(list(job_ids))
        if len(calls) == 1:
            return {}
        connection.xadd(RESULT_KEY.format(job_id=job.id), {"value": json.dumps(value)})
        return real(conn, job_ids)

    monkeypatch.setattr(verification, "results_read", late)
    try:
        [outcome] = verification.batch_poll({"jobs": [job.id]}, wait_s=0)
    finally:
        connection.delete(RESULT_KEY.format(job_id=job.id))
        job.delete()
    assert (outcome.status, outcome.result) == ("finished", VerifyResult.from_wire(value)) and len(calls) == 2
