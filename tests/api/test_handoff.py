"""The hand-off: a single verification goes straight to an idle checked worker (one list both
block on), with no RQ job (with a real worker: tests/api/test_verify.py); a dead worker's item is
given back once, then fails; a failure or a caller that gave up is never a verdict
(problems/verify_contract.py, "the hand-off"). No worker runs in this file: the items stay where
the tests look for them."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest

from api.verification import _outcome, _takes_handoff
from core.queues import redis_connection, worker_health_parse
from hardtests_web.ops.reaper import MAX_REQUEUES, worker_reap
from problems.jobs import judge_handoff
from problems.models import TestSuite
from problems.verify_contract import (
    HANDOFF_HELD_KEY,
    HANDOFF_KEY,
    handoff_item,
    handoff_parse,
    results_wait,
    suite_snapshot,
)
from problems.verify_types import Mode, VerifyRequest
from tests.api.conftest import GOOD

pytestmark = [pytest.mark.django_db(transaction=True)]


def _item(problem: Any, code: str = GOOD, *, wait_s: float = 30, suite_id: int | None = None) -> Any:
    suite = TestSuite.objects.select_related("problem").get(problem=problem, status=TestSuite.Status.ACTIVE)
    request = VerifyRequest(problem_id=problem.pk, suite_id=suite_id or suite.pk, language="python3", code=code,
                            mode=Mode.FAIL_FAST)
    return handoff_item(request=request, snapshot=suite_snapshot(suite), timeout_s=60, wait_s=wait_s,
                        description="test")


def test_the_web_side_hands_off_only_to_a_live_able_worker_that_says_it_takes_items():
    now = time.time()

    def takes(names: list[str], **records: dict[str, Any]) -> bool:
        import json

        published = {name.encode(): json.dumps({"expires_at": now + 60, **record}).encode()
                     for name, record in records.items()}
        return _takes_handoff(worker_health_parse(published, names, now))

    assert takes(["a"], a={"ok": True, "handoff": True})
    assert not takes(["a"], a={"ok": True})  # an earlier release's worker
    assert not takes(["a"], a={"ok": True, "handoff": False})  # HARDTESTS_API_HANDOFF=0
    assert not takes(["a"], a={"ok": False, "handoff": True})  # cannot judge now
    assert not takes(["b"], a={"ok": True, "handoff": True})  # not on the queue
    assert takes(["a", "b"], a={"ok": True}, b={"ok": True, "handoff": True})


def test_a_dead_worker_s_item_goes_back_once_then_fails_as_an_error(ab_problem):
    connection = redis_connection()
    item = _item(ab_problem)
    connection.set(HANDOFF_HELD_KEY.format(worker="gone-1"), item.raw)
    assert worker_reap(connection, "gone-1", reason="no beat") == "requeued"
    assert not connection.exists(HANDOFF_HELD_KEY.format(worker="gone-1"))
    [raw] = connection.lrange(HANDOFF_KEY, 0, -1)
    again = handoff_parse(raw)
    assert again is not None and again.id == item.id and again.requeued == 1 == MAX_REQUEUES
    assert replace(again, requeued=0) == item
    # its second worker dies too: its caller gets an error naming why, never a verdict
    connection.delete(HANDOFF_KEY)
    connection.set(HANDOFF_HELD_KEY.format(worker="gone-2"), again.raw)
    assert worker_reap(connection, "gone-2", reason="no beat") == "failed"
    assert connection.llen(HANDOFF_KEY) == 0
    outcome = _outcome(results_wait(connection, [item.id], 1)[item.id], None)
    assert outcome.status == "error" and "WorkerDied: the worker running it died again (no beat)" in outcome.error
    # an item whose caller has stopped waiting is not given back
    late = _item(ab_problem, wait_s=-1)
    connection.set(HANDOFF_HELD_KEY.format(worker="gone-3"), late.raw)
    assert worker_reap(connection, "gone-3", reason="no beat") == "expired"
    assert connection.llen(HANDOFF_KEY) == 0
    assert worker_reap(connection, "gone-4", reason="no beat") is None  # it held nothing


def test_a_handed_off_job_that_fails_answers_an_error_and_a_late_one_is_not_judged(ab_problem):
    connection = redis_connection()
    broken = _item(ab_problem, suite_id=10**9)  # a suite that is gone: the job raises
    assert judge_handoff(broken, connection) is False
    outcome = _outcome(results_wait(connection, [broken.id], 1)[broken.id], None)
    assert outcome.status == "error" and outcome.error.startswith("judging failed on the worker: DoesNotExist")
    late = _item(ab_problem, wait_s=-1)
    assert judge_handoff(late, connection) is True
    assert results_wait(connection, [late.id], 0.2) == {}
    good = _item(ab_problem)
    assert judge_handoff(good, connection) is True
    outcome = _outcome(results_wait(connection, [good.id], 1)[good.id], None)
    assert outcome.status == "finished" and outcome.result is not None and outcome.result.verdict == "AC"
    assert outcome.result.timings is not None and outcome.result.timings["enqueued"] == good.enqueued_at


def test_an_item_of_another_shape_is_refused_by_its_parser():
    assert handoff_parse(b"not json") is None
    assert handoff_parse(b'{"id": "x"}') is None
    assert handoff_parse(b'{"id": "rq-1", "kwargs": {}, "meta": {}, "enqueued_at": 1, "deadline": 2, '
                         b'"timeout_s": 3, "description": ""}') is None
