"""A training batch on an overloaded machine: every reward right, nothing starved.

The machine is loaded by a CPU hog this module starts (one spinning process per CPU, each
ending itself after HOG_S, idle while the machine is loaded without it), beside two real
sandbox workers, a live server and the real clients:

- verl's built-in reward (verl 0.9.1's own sandbox_fusion code, loaded as verl loads it) on one
  busy-loop completion and seven correct ones at once: the busy loop's calls (one a test, 10 CPU
  seconds each, verl's default) must not hold the correct completions' calls past verl's 30 s
  read timeout (api/coderun.py: a slow program keeps at most half the workers);
- a GRPO-shaped load, 32 groups of 8 samples with a busy loop in every group, through the sync
  and async clients of hardtests_client: 1.0 for every correct sample, 0.0 for every other.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from rq.worker import Worker

from core.queues import verification_queue
from problems.models import Problem
from problems.services import NewTest
from tests.api.conftest import make_suite
from tests.conftest import REPO, checked_worker_argv, process_group_stop, worker_env
from tests.ecosystem.conftest import fenced
from tests.factories import ProblemFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

HOG_S = 150
# verl's built-in sends one /run_code per test, all at once, per completion
SUM_TESTS = [NewTest(input=f"{a} {b}\n", output=f"{a + b}\n", kind="direct")
             for a, b in ((1, 2), (5, 7), (0, 0), (10, 20))]


def _correct(tag: str) -> str:
    return f"# {tag}\na, b = map(int, input().split())\nprint(a + b)\n"


def _wrong(tag: str) -> str:
    return f"# {tag}\na, b = map(int, input().split())\nprint(a * b + 1)\n"


def _busy(tag: str) -> str:
    return f"# {tag}\nwhile True:\n    pass\n"


# A hog spins in slices of 0.2 s, and sits one slice out whenever the machine is already loaded
# without it: at least HOG_LOAD runnable tasks a CPU besides the hogs (/proc/loadavg's fourth
# field counts the runnable now, the reader included). Alone on a quiet machine it always spins,
# so the tests always meet a machine with at least that load; beside other work (CI's first
# pass) it adds none that the machine does not already have.
HOG_LOAD = 2
SPIN = """import os, time
end = time.time() + {seconds}
cpus = os.cpu_count() or 1
while time.time() < end:
    with open("/proc/loadavg") as f:
        running = int(f.read().split()[3].split("/")[0])
    if running - cpus >= {load} * cpus:
        time.sleep(0.2)
        continue
    stop = time.time() + 0.2
    while time.time() < stop:
        pass
"""


@pytest.fixture(scope="module")
def cpu_hog() -> Iterator[int]:
    """One spinning process per CPU, each gone after HOG_S even if this process dies."""
    count = os.cpu_count() or 1
    spin = SPIN.format(seconds=HOG_S, load=HOG_LOAD)
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(count)]
    yield count
    for hog in hogs:
        hog.kill()
        hog.wait()


@pytest.fixture(scope="module")
def second_worker(sandbox_worker: Any, django_db_blocker: Any,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen[bytes]]:
    """A second real worker beside tests/api's: the default fleet of a machine is two."""
    with django_db_blocker.unblock():
        env = worker_env()
    queue = verification_queue()
    log = tmp_path_factory.mktemp("second") / "rqworker.log"
    child = subprocess.Popen(checked_worker_argv("api"), env=env, cwd=REPO,
                             stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while not any(w.pid == child.pid for w in Worker.all(queue=queue, connection=queue.connection)):
        if child.poll() is not None or time.monotonic() > deadline:
            process_group_stop(child, graceful=False)
            raise RuntimeError(f"rqworker did not start: {log.read_text()[-2000:]}")
        time.sleep(0.05)
    yield child
    process_group_stop(child)  # SIGTERM: it unregisters and forgets its health, as serve's workers do


@pytest.fixture
def no_verdict_cache(settings: Any) -> None:
    # every sample is judged, as a training run's new samples are
    settings.HARDTESTS_API_VERDICT_CACHE_S = 0


@pytest.mark.heavy(seconds=45)
def test_a_busy_loop_does_not_starve_verls_builtin_reward(live_server, token, url_tokens, second_worker, cpu_hog,
                                                           verl_loader):
    from tests.ecosystem.test_verl import _Config

    problem = ProblemFactory(source="test", pid="sum4", title="Sum", time_limit_ms=1000)
    make_suite(problem, SUM_TESTS)
    truth = json.dumps({"inputs": [t.input for t in SUM_TESTS], "outputs": [t.output for t in SUM_TESTS]})
    fn = verl_loader(_Config(custom_reward_function={
        "path": "pkg://verl.utils.reward_score", "name": "default_compute_score",
        "reward_kwargs": {"sandbox_fusion_url": f"{live_server.url}/sandboxfusion/t/{token}/run_code",
                          "memory_limit_mb": None}}))

    def score(completion: str) -> float:
        result = fn(data_source="codecontests", solution_str=completion, ground_truth=truth, extra_info={})
        return float(result["score"] if isinstance(result, dict) else result)

    assert score(fenced(_correct("warm-up"))) == 1.0  # the workers' first runs load what they keep
    completions = [fenced(_busy("slow"))] + [fenced(_correct(f"sample {i}")) for i in range(7)]
    with ThreadPoolExecutor(len(completions)) as pool:
        # the busy loop's six calls first, as when its sample comes first in the batch
        futures = [pool.submit(score, completions[0])]
        time.sleep(0.3)
        futures += [pool.submit(score, c) for c in completions[1:]]
        scores = [f.result() for f in futures]
    assert scores == [0.0] + [1.0] * 7


def _grpo(tag: str) -> tuple[list[str], list[str], list[float]]:
    """32 groups of 8 samples (problem, completion, right reward): in every group a busy loop of
    its own, correct and wrong answers (the same across groups, as a policy that converges
    writes them) and a completion without code."""
    problems, completions, expected = [], [], []
    for g in range(32):
        group = [(_correct(tag), 1.0)] * 4 + [(_wrong(tag), 0.0)] * 2
        group += [(_busy(f"{tag} {g}"), 0.0)]
        for code, reward in group:
            problems.append("test:fast-sum")
            completions.append(fenced(code))
            expected.append(reward)
        problems.append("test:fast-sum")
        completions.append("I do not know.")  # no code: 0 without a request
        expected.append(0.0)
    return problems, completions, expected


@pytest.mark.heavy(seconds=60)
def test_a_grpo_batch_scores_right_on_a_loaded_machine(live_server, token, second_worker, cpu_hog,
                                                        no_verdict_cache):
    from hardtests_client import AsyncHardTestsClient, HardTestsClient

    # a 200 ms limit: a busy loop costs 0.22 s of CPU, so 64 of them fit a CI run
    problem = ProblemFactory(source="test", pid="fast-sum", title="Sum", time_limit_ms=200)
    make_suite(problem, SUM_TESTS)
    assert Problem.objects.filter(pid="fast-sum").exists()

    problems, completions, expected = _grpo("sync")
    with HardTestsClient(live_server.url, token, batch_size=32) as client:
        assert client.score_completions(problems, completions) == expected

    async def run() -> list[float]:
        problems, completions, _ = _grpo("async")
        async with AsyncHardTestsClient(live_server.url, token, batch_size=32, concurrency=4) as client:
            return await client.score_completions(problems, completions)

    assert asyncio.run(run()) == _grpo("async")[2]
