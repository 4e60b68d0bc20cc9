"""A starved verification is absorbed by the server: the job judges it again at a calmer moment
instead of answering SE (problems.jobs.starved_rerun), through the real sandbox.

The overload is made deterministic as tests/sandbox/test_accounting.py makes it: this process
(every thread, so the judging lanes and the sandboxes they start too) shares one CPU with three
spinning processes, and the wall-clock backstop has no grace past it, so a program that needs
0.8 s of CPU is stopped while it waits for the CPU: an SE. The spinners stop after a few
seconds: the server's re-run, at that calmer moment, judges the program for real.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import problems.jobs
import sandbox.base
from problems.jobs import judge_code_job
from problems.models import Problem

pytestmark = [pytest.mark.django_db, pytest.mark.serial]

# Right on every A+B test, after 0.8 s of CPU (the limit is 1 s).
WORKS_HARD = ("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.8:\n    pass\n"
              "a, b = map(int, input().split())\nprint(a + b)\n")


def _pin_all_threads(cpus: set[int]) -> None:
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass  # a thread that just ended


@pytest.fixture
def overload_for_a_while(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """One CPU shared with five spinners until the returned event is set (or 8 s pass)."""
    monkeypatch.setattr(sandbox.base, "STARVED_FACTOR", 1)
    monkeypatch.setattr(sandbox.base, "STARVED_EXTRA_S", 0.0)
    before = os.sched_getaffinity(0)
    cpu = min(before)
    spin = f"import os, time\nos.sched_setaffinity(0, {{{cpu}}})\nend = time.time() + 60\nwhile time.time() < end: pass\n"
    spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(5)]
    _pin_all_threads({cpu})
    calm = threading.Event()

    def stop() -> None:
        calm.wait(8.0)
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
        _pin_all_threads(before)
        calm.set()

    stopper = threading.Thread(target=stop, daemon=True)
    stopper.start()
    try:
        yield calm
    finally:
        calm.set()
        stopper.join()
        _pin_all_threads(before)


def test_a_starved_verification_is_judged_again_at_a_calmer_moment(ab_problem: Problem, overload_for_a_while,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    suite = ab_problem.suites.get()
    judged: list[str] = []
    original = problems.jobs.judge_code

    def judge_code(**kwargs):  # type: ignore[no-untyped-def]
        result = original(**kwargs)
        judged.append(result.verdict)
        return result

    monkeypatch.setattr(problems.jobs, "judge_code", judge_code)
    result = judge_code_job(ab_problem.pk, suite.pk, "python3", WORKS_HARD, "all")
    assert overload_for_a_while.is_set(), judged
    # the first judging starved (the sandbox's own immediate re-run too); the job waited for
    # the spinners to stop and judged again: a verdict on the program, not SE
    assert judged[0] == "SE" and judged[-1] == "AC", judged
    assert (result["verdict"], result["passed"], result["total"]) == ("AC", 4, 4)


def test_a_broken_sandbox_is_not_judged_again(ab_problem: Problem, monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    # An SE that is not starvation (here: a sandbox that cannot start) is answered at once.
    assert not problems.jobs.starved({"verdict": "SE", "message": "sandbox unavailable: no bwrap"})
    assert problems.jobs.starved({"verdict": "SE", "message": "... while it was running or waiting for a CPU: "
                                                             "the machine is overloaded; retry"})
    assert not problems.jobs.starved({"verdict": "TLE", "message": "the machine is overloaded"})
