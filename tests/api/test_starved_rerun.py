"""A starved verification is absorbed by the server: the job judges it again at a calmer moment
instead of answering SE (problems.jobs.starved_rerun), through the real sandbox.

The overload: six spinning processes a CPU, during which the sandbox's runs are classed as
starved (the fixture says why): an SE with the sandbox's own "overloaded" message. The spinners stop after a few
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


class Overload:
    def __init__(self) -> None:
        self.calm = threading.Event()  # set once the spinners are gone
        self.first_judged = threading.Event()  # set by the test when its first judging is over


@pytest.fixture
def overload_for_a_while(monkeypatch: pytest.MonkeyPatch) -> Iterator[Overload]:
    """Six spinners a CPU until the test says its first judging is over (or 60 s pass), and
    meanwhile every run the sandbox judges is classed as starved. The end is an event, not a
    clock: under CI load the first judging alone can take longer than any fixed period. A real starvation cannot be made on demand
    any more: each batch is a CPU cgroup at the harness's weight, so spinners beside it do not
    starve it (that classification is tests/sandbox/test_starvation.py's); what is tested here
    is the job's answer to a starved SE, with the real sandbox, the real backoff and the real
    calm probe, which sees the spinners."""
    before = os.sched_getaffinity(0)
    spin = "import time\nend = time.time() + 60\nwhile time.time() < end: pass\n"
    spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(6 * len(before))]
    overload = Overload()
    calm = overload.calm
    real_starved = sandbox.base.starved
    monkeypatch.setattr(sandbox.base, "starved", lambda raw, limits: not calm.is_set() or real_starved(raw, limits))

    def stop() -> None:
        overload.first_judged.wait(60.0)
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
        calm.set()

    stopper = threading.Thread(target=stop, daemon=True)
    stopper.start()
    try:
        yield overload
    finally:
        calm.set()
        stopper.join()


def test_a_starved_verification_is_judged_again_at_a_calmer_moment(ab_problem: Problem,
                                                                   overload_for_a_while: Overload,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    suite = ab_problem.suites.get()
    judged: list[str] = []
    original = problems.jobs.judge_code

    def judge_code(**kwargs):  # type: ignore[no-untyped-def]
        result = original(**kwargs)
        judged.append(result.verdict)
        overload_for_a_while.first_judged.set()
        return result

    monkeypatch.setattr(problems.jobs, "judge_code", judge_code)
    result = judge_code_job(ab_problem.pk, suite.pk, "python3", WORKS_HARD, "all")
    assert overload_for_a_while.calm.is_set(), judged
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
