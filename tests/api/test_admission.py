"""Admission on a worker host (problems.jobs.cpu_slots): the verification jobs of one host run at
most one test per CPU between them. A job takes the free CPU slots up to the lanes it would use
and judges with that many; with none free it waits, then runs one lane anyway."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import problems.jobs
from problems.jobs import cpu_slots, judge_code_job
from problems.models import Problem
from problems.services import NewTest
from tests.api.conftest import make_suite
from tests.factories import ProblemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_cpus(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setattr(problems.jobs.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(problems.jobs, "cpu_slots_dir", lambda: tmp_path)


def _in_thread(wanted: int, wait_s: float) -> tuple[int, float]:
    out: list[tuple[int, float]] = []

    def take() -> None:
        started = time.monotonic()
        with cpu_slots(wanted, wait_s=wait_s) as got:
            out.append((got, time.monotonic() - started))

    thread = threading.Thread(target=take)
    thread.start()
    thread.join()
    return out[0]


def test_jobs_of_one_host_share_its_cpus(two_cpus: None) -> None:
    with cpu_slots(2) as first:
        assert first == 2
        # every CPU is taken: the next job waits, then runs one lane anyway (never fails)
        got, waited = _in_thread(2, wait_s=0.3)
        assert got == 1 and waited >= 0.3
    with cpu_slots(1) as one:
        assert one == 1
        assert _in_thread(4, wait_s=5)[0] == 1  # one CPU left: one lane, at once
    assert _in_thread(4, wait_s=5)[0] == 2  # all free again (released on exit)


def test_a_verification_judges_with_the_lanes_its_host_has_free(two_cpus: None, settings: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    settings.HARDTESTS_JUDGE_PARALLEL = 2
    problem: Problem = ProblemFactory(source="test", pid="eight", time_limit_ms=1000)
    suite = make_suite(problem, [NewTest(input=f"{i}\n", output=f"{i}\n", kind="direct") for i in range(8)])
    seen: list[int] = []
    original = problems.jobs.judge_code

    def judge_code(**kwargs: Any) -> Any:
        seen.append(settings.HARDTESTS_JUDGE_PARALLEL)
        return original(**kwargs)

    monkeypatch.setattr(problems.jobs, "judge_code", judge_code)
    echo = "print(input())\n"
    assert judge_code_job(problem.pk, suite.pk, "python3", echo, "all")["verdict"] == "AC"
    with cpu_slots(1):  # another job holds one of the two CPUs
        assert judge_code_job(problem.pk, suite.pk, "python3", echo, "all")["verdict"] == "AC"
    assert seen == [2, 1]
    assert settings.HARDTESTS_JUDGE_PARALLEL == 2  # put back after the job
