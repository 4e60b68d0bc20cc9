"""POST /verify, /verify/batch and GET /jobs/{id} against a real RQ worker and the real sandbox."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.test import override_settings
from rq.worker import Worker

from core.queues import redis_connection, verification_queue
from problems.verify_contract import HANDOFF_HELD_KEY, HANDOFF_KEY
from tests.api.conftest import AB_TESTS, CAPPED, GOOD, WRONG, make_suite

# Transactional: the worker is another process and must see the test's committed rows.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.postgres]


def _verify(api, code, **extra):
    return api.post("/api/v1/verify", {"problem": "ab/sum", "language": "python3", "code": code, **extra})


def test_correct_program_earns_reward_1(api, ab_problem, sandbox_worker):
    response = _verify(api, GOOD)
    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["reward"], data["verdict"], data["passed"], data["total"]) == (1, "AC", 4, 4)
    assert data["pass_fraction"] == 1.0 and data["complete"] is True
    assert data["suite_version"] == 1 and data["suite_origin"] == "generated"
    assert [t["kind"] for t in data["tests"]] == ["hacking", "regular", "direct", "direct"]
    assert {"index", "ordinal", "kind", "verdict", "time_ms", "wall_ms", "memory_kb"} <= set(data["tests"][0])
    assert data["elapsed_ms"] >= data["judge_ms"] >= 0


def test_hacking_tests_run_first_and_fail_fast_stops_there(api, ab_problem, sandbox_worker):
    data = _verify(api, CAPPED).json()
    assert (data["reward"], data["verdict"], data["passed"], data["total"]) == (0, "WA", 0, 4)
    assert [(t["kind"], t["verdict"]) for t in data["tests"]] == [("hacking", "WA")]
    assert data["complete"] is False


def test_mode_all_runs_every_test(api, ab_problem, sandbox_worker):
    data = _verify(api, CAPPED, mode="all").json()
    assert [t["verdict"] for t in data["tests"]] == ["WA", "AC", "AC", "AC"]
    assert (data["reward"], data["passed"], data["pass_fraction"]) == (0, 3, 0.75)


def test_runtime_and_compile_errors(api, ab_problem, sandbox_worker):
    assert _verify(api, "raise SystemExit(3)\n").json()["verdict"] == "RE"
    response = api.post("/api/v1/verify", {"problem": "test:ab/sum", "language": "cpp", "code": "int main( {"})
    data = response.json()
    assert (data["verdict"], data["reward"], data["tests"]) == ("CE", 0, [])
    assert "error" in data["message"]


def test_named_suite_version_is_used(api, ab_problem, sandbox_worker):
    make_suite(ab_problem, AB_TESTS[:2])  # v2, without the hacking test, becomes active
    assert _verify(api, CAPPED).json()["reward"] == 1
    old = _verify(api, CAPPED, suite=1).json()
    assert (old["reward"], old["suite_version"]) == (0, 1)


def test_batch_returns_every_result_when_done_in_time(api, ab_problem, sandbox_worker):
    items = [{"problem": "ab/sum", "language": "python3", "code": code} for code in (GOOD, WRONG, CAPPED)]
    response = api.post("/api/v1/verify/batch", {"items": items})
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["status"] == "finished" and data["done"] == data["total"] == 3
    assert [i["result"]["reward"] for i in data["items"]] == [1, 0, 0]
    # The same batch can be read again by its id.
    again = api.get(f"/api/v1/jobs/{data['job_id']}").json()
    assert [i["result"]["verdict"] for i in again["items"]] == ["AC", "WA", "WA"]


def test_batch_items_asking_the_same_thing_share_one_job(api, ab_problem, sandbox_worker):
    """An RL group's repeated samples: the program runs once, every item gets its result; the same
    code in another mode is another job."""
    import json

    from api.verification import BATCH_KEY
    from core.queues import redis_connection

    codes = [GOOD, WRONG, GOOD, GOOD, WRONG, GOOD]
    items = [{"problem": "ab/sum", "language": "python3", "code": code} for code in codes]
    items[-1]["mode"] = "all"
    data = api.post("/api/v1/verify/batch", {"items": items}).json()
    assert data["status"] == "finished" and data["done"] == data["total"] == 6
    assert [i["result"]["reward"] for i in data["items"]] == [1, 0, 1, 1, 0, 1]
    assert [i["result"]["passed"] for i in data["items"]] == [4, 0, 4, 4, 0, 4]
    record = json.loads(redis_connection().get(BATCH_KEY.format(id=data["job_id"])))
    jobs = record["jobs"]
    assert len(jobs) == 6 and len(set(jobs)) == 3
    assert jobs[0] == jobs[2] == jobs[3] != jobs[5] and jobs[1] == jobs[4] != jobs[0]
    again = api.get(f"/api/v1/jobs/{data['job_id']}").json()
    assert [i["result"]["verdict"] for i in again["items"]] == ["AC", "WA", "AC", "AC", "WA", "AC"]


@override_settings(HARDTESTS_API_SYNC_TIMEOUT_S=0)
def test_batch_not_done_in_time_is_202_with_a_job_to_poll(api, make_api, ab_problem, sandbox_worker):
    items = [{"problem": "ab/sum", "language": "python3", "code": code} for code in (GOOD, WRONG)]
    response = api.post("/api/v1/verify/batch", {"items": items})
    assert response.status_code == 202
    job_id = response.json()["job_id"]
    assert response.json()["status"] == "pending"
    deadline = time.monotonic() + 60
    while True:
        data = api.get(f"/api/v1/jobs/{job_id}").json()
        if data["status"] == "finished" or time.monotonic() > deadline:
            break
        assert {i["status"] for i in data["items"]} <= {"queued", "running", "finished"}
        time.sleep(0.1)
    assert [i["result"]["reward"] for i in data["items"]] == [1, 0]
    # Someone else's job id looks like an unknown one.
    assert make_api().get(f"/api/v1/jobs/{job_id}").status_code == 404


def _verification(problem, suite):
    from api.verification import Verification
    from problems.verify_types import VerifyRequest

    return Verification(problem, suite, VerifyRequest(problem_id=problem.pk, suite_id=suite.pk, language="python3",
                                                      code=GOOD))


def test_a_job_that_crashes_on_the_worker_is_503_never_reward_0(api, ab_problem, sandbox_worker):
    from api.errors import Unavailable
    from api.verification import batch_load, batch_poll, batch_start, verify_one
    from problems.models import TestSuite

    gone = TestSuite(pk=10**9, problem=ab_problem, version=7, origin="generated", test_count=4)
    with pytest.raises(Unavailable) as raised:
        verify_one(_verification(ab_problem, gone), owner_id=1)
    assert raised.value.status == 503 and raised.value.code == "judging_error"
    assert "DoesNotExist" in raised.value.detail
    # In a batch the crashed item is an error without a result; the good one is judged.
    suite = ab_problem.suites.get()
    batch_id, outcomes, _ = batch_start([_verification(ab_problem, gone), _verification(ab_problem, suite)],
                                        owner_id=1)
    deadline = time.monotonic() + 60
    while any(o.status in ("queued", "running") for o in outcomes) and time.monotonic() < deadline:
        time.sleep(0.2)
        outcomes = batch_poll(batch_load(batch_id, owner_id=1))
    assert [o.status for o in outcomes] == ["error", "finished"]
    assert outcomes[0].result is None and "DoesNotExist" in outcomes[0].error


def test_the_answer_leaves_with_the_job_s_early_result_which_rq_s_result_matches(api, ab_problem, sandbox_worker):
    """The judging job publishes its return value itself as it returns (problems.verify_contract.result_publish),
    so the answer does not wait for RQ's bookkeeping; RQ's own result, stored after, is the same (a batch's:
    a single verification's RQ keeps none, below)."""
    import json

    from rq.job import Job
    from rq.results import Result

    from core.queues import redis_connection
    from problems.verify_contract import RESULT_KEY as EARLY_RESULT_KEY
    from problems.verify_contract import RESULT_TTL_S as EARLY_RESULT_TTL_S

    connection = redis_connection()
    for key in connection.scan_iter(EARLY_RESULT_KEY.format(job_id="*")):
        connection.delete(key)
    response = api.post("/api/v1/verify/batch",
                        {"items": [{"problem": "ab/sum", "language": "python3", "code": CAPPED, "mode": "all"}]})
    [item] = response.json()["items"]
    data = item["result"]
    [key] = list(connection.scan_iter(EARLY_RESULT_KEY.format(job_id="*")))
    [(_, payload)] = connection.xrange(key)
    early = json.loads(payload[b"value"])
    assert (early["verdict"], early["passed"], early["tests"]) == (data["verdict"], data["passed"], data["tests"])
    assert 0 < connection.ttl(key) <= EARLY_RESULT_TTL_S
    job = Job.fetch(key.decode().rsplit(":", 1)[-1], connection=connection)
    deadline = time.monotonic() + 10
    while (stored := Result.fetch_latest(job)) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stored is not None and stored.return_value == early


def test_a_single_verification_leaves_nothing_of_its_job_in_redis(api, ab_problem, sandbox_worker):
    """Its result is read once, at once: the job, RQ's result and the early result go with the answer
    (kept, they grew Redis by three keys a verification for a minute each under load)."""
    from core.queues import redis_connection

    connection = redis_connection()
    patterns = ("rq:job:*", "rq:results:*", "hardtests:early-result:*")

    def keys() -> set[bytes]:
        return {key for pattern in patterns for key in connection.scan_iter(pattern)}

    before = keys()
    answers = [_verify(api, code).json()["verdict"] for code in (GOOD, WRONG, CAPPED)]
    assert answers == ["AC", "WA", "WA"]
    # RQ deletes the job a moment after the answer left (its bookkeeping follows the early result)
    deadline = time.monotonic() + 10
    while (left := keys() - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == set(), sorted(left)


def test_a_batch_read_without_waiting_takes_a_result_published_before_rq_s_own():
    """GET /jobs/{id} right after a job returned: its early result is there, RQ's not yet."""
    import json
    import uuid

    from api.verification import batch_poll
    from core.queues import redis_connection
    from problems.verify_contract import RESULT_KEY as EARLY_RESULT_KEY
    from problems.verify_types import VerifyResult

    connection = redis_connection()
    published, pending = uuid.uuid4().hex, uuid.uuid4().hex
    value = {"verdict": "WA", "passed": 1, "total": 4, "complete": False, "tests": [], "suite_id": 1,
             "suite_version": 1, "suite_origin": "generated"}
    connection.xadd(EARLY_RESULT_KEY.format(job_id=published), {"value": json.dumps(value)})
    try:
        done, unknown = batch_poll({"jobs": [published, pending]}, wait_s=0)
    finally:
        connection.delete(EARLY_RESULT_KEY.format(job_id=published))
    assert (done.status, done.result) == ("finished", VerifyResult.from_wire(value)) and done.finished_at is not None
    assert (unknown.status, unknown.result) == ("error", None)  # no such job: expired, never a verdict


def test_suite_fast_judges_the_kill_matrix_s_cover_and_the_largest_test(api, ab_problem, sandbox_worker):
    """A known-wrong candidate judged against the suite teaches its kill order and fast subset;
    suite="fast" judges that subset on the worker, and a wrong program fails on its first test."""
    from problems.judging import solution_judge
    from problems.models import Solution
    from tests.factories import SolutionFactory

    suite = ab_problem.suites.get()
    fives = ("a, b = map(int, input().split())\nprint(1 if a == 5 else a + b)\n",  # fail only "5 7"
             "a, b = map(int, input().split())\nprint(a + b - (a == 5))\n")
    for five in fives:
        wrong = SolutionFactory(problem=ab_problem, role=Solution.Role.CANDIDATE, language="python3", code=five,
                                gold_verdict="WA")
        solution_judge(solution=wrong, suite=suite, mode="all")
    suite.refresh_from_db()
    fifth = suite.tests.get(input_preview__startswith="5 7").ordinal
    assert suite.judge_order[0] == fifth and len(suite.fast_ordinals) == 2
    fast = _verify(api, GOOD, suite="fast").json()
    assert (fast["reward"], fast["total"], fast["suite_subset"]) == (1, 2, "fast")
    assert [t["kind"] for t in fast["tests"]] == ["regular", "hacking"]
    held_out = "a, b = map(int, input().split())\nprint(a + b + (a == 5))\n"
    for subset in ("fast", "full"):
        data = _verify(api, held_out, suite=subset).json()
        assert (data["reward"], data["verdict"], len(data["tests"]), data["suite_subset"]) == (0, "WA", 1, subset)
        assert data["tests"][0]["ordinal"] == fifth
    assert _verify(api, GOOD).json()["total"] == 4
    assert _verify(api, GOOD, suite="quick").status_code == 400


def test_the_job_the_contract_names_is_the_worker_s_judging_job():
    from django.utils.module_loading import import_string

    from problems.jobs import judge_code_job
    from problems.verify_contract import JUDGE_JOB

    assert import_string(JUDGE_JOB) is judge_code_job


def test_a_verification_says_where_its_time_went_in_server_timing(api, ab_problem, sandbox_worker):
    response = _verify(api, GOOD)
    assert response.status_code == 200
    steps = dict(part.strip().split(";dur=") for part in response["Server-Timing"].split(","))
    assert set(steps) == {"prepare", "enqueue", "wait", "queue", "load", "tests", "job", "back"}
    durations = {name: float(value) for name, value in steps.items()}
    assert all(value >= -50 for value in durations.values())  # "queue" and "back" cross processes' clocks
    # the wait holds the worker's job (but for the moment between the job reaching Redis, where a
    # worker may take it at once, and the web side's clock starting the wait: 5 ms is ample);
    # the job holds the suite's load and the tests
    assert durations["wait"] + 5 >= durations["job"] >= durations["tests"] > 0


def test_a_single_verification_is_handed_off_to_the_worker_with_no_rq_job(api, ab_problem, sandbox_worker,
                                                                         enqueued):
    """A single verification's job is handed to the worker as one item (problems/verify_contract.py,
    "the hand-off"): no RQ job, the same answers."""
    connection = redis_connection()

    def verify(code: str) -> dict[str, Any]:
        response = api.post("/api/v1/verify", {"problem": "ab/sum", "language": "python3", "code": code})
        assert response.status_code == 200, response.content
        return dict(response.json())

    def done() -> tuple[int, str]:
        [worker] = [w for w in Worker.all(queue=verification_queue()) if w.pid == sandbox_worker.pid]
        return int(worker.successful_job_count or 0), worker.get_state()

    # the worker's count once an earlier test's job has finished its bookkeeping (after its answer)
    deadline, last = time.monotonic() + 30, (-1, "")
    while (now := done()) != last or now[1] != "idle":
        assert time.monotonic() < deadline, now
        last = now
        time.sleep(0.3)
    start = now[0]
    assert (verify(GOOD)["verdict"], verify(WRONG)["verdict"]) == ("AC", "WA")
    capped = verify(CAPPED)
    assert (capped["verdict"], capped["passed"], capped["total"]) == ("WA", 0, 4)  # its hacking test first
    assert enqueued == []  # no RQ job: the worker popped the items themselves
    # RQ's counts of the worker's jobs still count them (kept after the answer left, in the round
    # trip that lets go of the item's hold)
    deadline = time.monotonic() + 30
    while done() != (start + 3, "idle") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert done() == (start + 3, "idle")
    assert connection.llen(HANDOFF_KEY) == 0 and not connection.keys(HANDOFF_HELD_KEY.format(worker="*"))
    # off on the web side: the same question goes through RQ, with the same answer
    with override_settings(HARDTESTS_API_HANDOFF=False, HARDTESTS_API_VERDICT_CACHE_S=0):
        again = verify(CAPPED)
    assert enqueued == [1]
    assert [again[k] for k in ("verdict", "passed", "total", "complete")] == \
        [capped[k] for k in ("verdict", "passed", "total", "complete")]
