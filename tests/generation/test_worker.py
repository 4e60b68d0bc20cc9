"""Runs through real RQ worker subprocesses: success, a killed work horse, a killed worker."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from generation.models import FailureReason, GenerationRun
from generation.services import generation_run_cancel, generation_run_start, stale_runs_sweep
from problems.models import TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.conftest import REPO, process_group_stop, worker_env
from tests.generation.conftest import FakeLLM, inputs_reply, make_problem, validator_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORKER = [sys.executable, str(REPO / "manage.py"), "rqworker", "--worker-class", "generation.worker.GenerationWorker",
          "generation"]


def _env(fake: FakeLLM) -> dict[str, str]:
    return dict(worker_env(), OPENAI_BASE_URL=fake.url, OPENAI_API_KEY="test", HARDTESTS_LLM_TIMEOUT_S="120",
                HARDTESTS_REGULAR_CALLS="3", HARDTESTS_HACKING_CALLS="2", HARDTESTS_LLM_MAX_RETRIES="0")


@pytest.fixture
def worker(fake_llm: FakeLLM) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(*extra: str) -> subprocess.Popen[bytes]:
        # its own session, so the test can kill the worker and its work horse together
        proc = subprocess.Popen([*WORKER, *extra], env=_env(fake_llm), cwd=REPO, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        process_group_stop(proc, graceful=False)


def wait_for(predicate: Callable[[], bool], timeout: float = 60, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def previous_suite(problem) -> TestSuite:
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, note="earlier")
    suite_add_tests(suite=suite, tests=[NewTest(input="1 2\n", output="3\n", kind="direct")])
    return suite_activate(suite=suite)


def status_of(run: GenerationRun) -> str:
    return GenerationRun.objects.values_list("status", flat=True).get(pk=run.pk)


def test_a_queued_run_is_executed_by_an_rq_worker(fake_llm: FakeLLM, worker) -> None:
    problem = make_problem()
    fake_llm.reply(validator_reply(), inputs_reply())
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH)
    assert run.job_id
    proc = worker("--burst")
    proc.wait(timeout=120)
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.suite.status == TestSuite.Status.ACTIVE
    assert run.counts["regular"]["generated"] == 3  # the worker's own settings (environment)


def test_a_killed_work_horse_leaves_the_run_failed_and_the_previous_suite_active(fake_llm: FakeLLM, worker) -> None:
    problem = make_problem()
    earlier = previous_suite(problem)
    fake_llm.slow(60, validator_reply())
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH)
    proc = worker()
    wait_for(lambda: fake_llm.requests and status_of(run) == GenerationRun.Status.RUNNING, what="the LLM call")
    horses = children_of(proc.pid)
    assert len(horses) == 1
    os.kill(horses[0], signal.SIGKILL)
    wait_for(lambda: status_of(run) == GenerationRun.Status.FAILED, timeout=30, what="the run to be failed")
    run.refresh_from_db()
    assert run.failure_reason == FailureReason.WORKER_DIED
    assert "worker died" in run.log
    earlier.refresh_from_db()
    assert earlier.status == TestSuite.Status.ACTIVE
    assert list(TestSuite.objects.filter(problem=problem, status=TestSuite.Status.ACTIVE)) == [earlier]


def test_a_killed_worker_is_noticed_by_the_sweeper(fake_llm: FakeLLM, worker, settings) -> None:
    problem = make_problem()
    earlier = previous_suite(problem)
    fake_llm.slow(60, validator_reply())
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH)
    proc = worker()
    wait_for(lambda: fake_llm.requests and status_of(run) == GenerationRun.Status.RUNNING, what="the LLM call")
    assert stale_runs_sweep() == 0  # alive: its job is started and its heartbeat fresh
    os.killpg(proc.pid, signal.SIGKILL)  # the worker and its work horse, with no chance to record anything
    proc.wait(timeout=10)
    settings.HARDTESTS_RUN_STALE_S = 1.0
    # Under load the last heartbeat may land late; the sweep must notice within seconds, not at once.
    wait_for(lambda: stale_runs_sweep() == 1, timeout=30, what="the sweep to notice the dead worker")
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.FAILED and run.failure_reason == FailureReason.WORKER_DIED
    earlier.refresh_from_db()
    assert earlier.status == TestSuite.Status.ACTIVE


def test_cancelling_a_running_run_stops_it_at_the_next_check(fake_llm: FakeLLM, worker) -> None:
    problem = make_problem()
    fake_llm.slow(3, validator_reply()).reply(inputs_reply())
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH)
    worker()
    wait_for(lambda: fake_llm.requests and status_of(run) == GenerationRun.Status.RUNNING, what="the LLM call")
    assert generation_run_cancel(run=run) is True
    assert run.cancel_requested and run.status == GenerationRun.Status.RUNNING
    wait_for(lambda: status_of(run) == GenerationRun.Status.CANCELLED, timeout=60, what="the cancellation")
    run.refresh_from_db()
    assert run.failure_reason == FailureReason.CANCELLED and "cancel" in run.log
    assert not TestSuite.objects.filter(problem=problem, status=TestSuite.Status.ACTIVE).exists()
    assert len(fake_llm.requests) == 1  # stopped before the second LLM call


def test_cancelling_a_queued_run_cancels_it_at_once(fake_llm: FakeLLM) -> None:
    run = generation_run_start(problem=make_problem(), mode=GenerationRun.Mode.FROM_SCRATCH)
    assert generation_run_cancel(run=run) is True
    assert run.status == GenerationRun.Status.CANCELLED and run.failure_reason == FailureReason.CANCELLED
    assert generation_run_cancel(run=run) is False
    from generation.pipeline import generation_run_execute

    assert generation_run_execute(run_id=run.pk).status == GenerationRun.Status.CANCELLED
    assert fake_llm.requests == []


@pytest.mark.django_db
def test_the_run_page_shows_a_silent_run_without_writing(client, settings) -> None:
    """A GET never writes: a run whose heartbeat is older than the stale limit is shown as silent
    (the janitor's sweep records it), and stays RUNNING until the sweep does."""
    from django.utils import timezone

    from tests.factories import maintainer

    problem = make_problem()
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False)
    silent_since = timezone.now() - timezone.timedelta(seconds=300)
    GenerationRun.objects.filter(pk=run.pk).update(status=GenerationRun.Status.RUNNING, started_at=silent_since,
                                                   heartbeat_at=silent_since)
    settings.HARDTESTS_RUN_STALE_S = 120.0
    client.force_login(maintainer())
    for url in (f"/runs/{run.pk}/", f"/runs/{run.pk}/progress/"):
        page = client.get(url).content.decode()
        assert re.search(r"No heartbeat from this run's worker for 5\.\d min", page), page[page.find("run-silent"):][:500]
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.RUNNING and run.heartbeat_at == silent_since
    assert stale_runs_sweep() == 1
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.FAILED and run.failure_reason == FailureReason.WORKER_DIED
    assert "No heartbeat" not in client.get(f"/runs/{run.pk}/").content.decode()
