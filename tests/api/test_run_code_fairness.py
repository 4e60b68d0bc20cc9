"""/run_code's fair use of the workers (api/coderun.py), on the real Redis: a program's first run
goes alone, a quick program then runs as many at once as it asks, a slow one (TLE, or a second
of CPU) keeps at most half the workers; a run that cannot start before its caller gives up is
not run: TimeLimitExceeded when a run of the program was a TLE, else 503 `busy`. The end-to-end check with verl's own reward is
tests/ecosystem/test_overload.py."""

from __future__ import annotations

import time
from typing import Any

import pytest

from api.coderun import code_run, fair_acquire, fair_cap, fair_program, fair_release
from api.errors import Unavailable
from core.queues import redis_connection

pytestmark = pytest.mark.django_db

TLE = {"status": "Failed", "run_result": {"status": "TimeLimitExceeded", "cpu_time": 10.0}}
QUICK = {"status": "Success", "run_result": {"status": "Finished", "cpu_time": 0.02}}
SLOW = {"status": "Success", "run_result": {"status": "Finished", "cpu_time": 1.5}}


def _held(program: str, workers: int, count: int) -> list[str]:
    connection = redis_connection(blocking=True)
    slots = []
    for _ in range(count):
        slot = fair_acquire(connection, program=program, workers=workers, answer_by=time.time() + 0.2)
        if slot is None:
            break
        slots.append(slot)
    return slots


def test_a_slow_program_keeps_at_most_half_the_workers_and_a_quick_one_is_not_held_back() -> None:
    connection = redis_connection(blocking=True)
    slow = fair_program(owner=1, language="python3", code="while True: pass", time_s=10.0)
    quick = fair_program(owner=1, language="python3", code="print(1)", time_s=10.0)
    assert slow != quick != fair_program(owner=2, language="python3", code="print(1)", time_s=10.0)
    # nothing known yet: one run (a probe), the program's other calls wait for it
    [probe] = _held(slow, workers=4, count=3)
    fair_release(connection, program=slow, slot=probe, answer=TLE)
    assert len(_held(slow, workers=4, count=8)) == 2  # slow: half of 4 workers
    [probe] = _held(quick, workers=4, count=3)
    fair_release(connection, program=quick, slot=probe, answer=QUICK)
    assert len(_held(quick, workers=4, count=20)) == 16  # quick: not held back
    # a quick run later does not make a slow program quick again
    fair_release(connection, program=slow, slot="none", answer=QUICK)
    assert fair_cap(connection.get(f"hardtests:api:runcode:pace:{slow}"), 4) == 2
    assert fair_cap(None, 2) == 1 and fair_cap(b"slow", 1) == 1


def test_a_run_its_share_cannot_start_before_the_caller_gives_up_is_answered_503_unrun(
        monkeypatch: pytest.MonkeyPatch, fake_worker: Any) -> None:
    program = fair_program(owner=None, language="python3", code="print(2)\n", time_s=1.0)
    [_held_slot] = _held(program, workers=1, count=1)  # another call of the same program is running
    enqueued: list[Any] = []
    from rq import Queue

    monkeypatch.setattr(Queue, "enqueue", lambda *a, **k: enqueued.append(a))
    started = time.monotonic()
    with pytest.raises(Unavailable) as refused:
        code_run(language="python3", code="print(2)\n", stdin="", time_s=1.0, memory_mb=256, owner=None,
                 answer_within_s=1.0)
    assert refused.value.code == "busy" and "not run" in str(refused.value)
    assert time.monotonic() - started < 5 and enqueued == []


def test_a_program_whose_tle_runs_hold_its_share_past_the_read_timeout_is_answered_tle_unrun(
        monkeypatch: pytest.MonkeyPatch, fake_worker: Any) -> None:
    # The wait is the program's own doing: a 503 there would let a program turn its own TLE into
    # an infrastructure failure. A program only slow within its limit stays 503 `busy` (above).
    connection = redis_connection(blocking=True)
    code = "while True: pass\n"
    program = fair_program(owner=None, language="python3", code=code, time_s=1.0)
    [probe] = _held(program, workers=2, count=1)
    fair_release(connection, program=program, slot=probe, answer=TLE)
    # a quick run later (another stdin) does not take the TLE back
    fair_release(connection, program=program, slot="none", answer=QUICK)
    held = _held(program, workers=2, count=2)  # its share (half of 2 workers) is taken
    assert len(held) == 1
    enqueued: list[Any] = []
    from rq import Queue

    monkeypatch.setattr(Queue, "enqueue", lambda *a, **k: enqueued.append(a))
    answer = code_run(language="python3", code=code, stdin="", time_s=1.0, memory_mb=256, owner=None,
                      answer_within_s=1.0)
    assert enqueued == []
    assert answer["status"] == "Failed" and answer["run_result"]["status"] == "TimeLimitExceeded"
    assert answer["run_result"]["return_code"] is None and "not run" in answer["run_result"]["stderr"]
    # the same wait for a program never seen TLE is the machine's: 503, not a verdict
    other = fair_program(owner=None, language="python3", code="print(1)\n", time_s=1.0)
    [slot] = _held(other, workers=2, count=1)
    fair_release(connection, program=other, slot=slot, answer=SLOW)
    assert len(_held(other, workers=2, count=2)) == 1
    with pytest.raises(Unavailable) as refused:
        code_run(language="python3", code="print(1)\n", stdin="", time_s=1.0, memory_mb=256, owner=None,
                 answer_within_s=1.0)
    assert refused.value.code == "busy" and enqueued == []
