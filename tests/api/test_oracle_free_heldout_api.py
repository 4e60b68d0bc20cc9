"""Held-out check of the time-only test and the origin mark through every API that judges: the
verification API (one, batch, its job), SandboxFusion's /submit and OpenRLHF's /reward, on a
multi-test-case problem whose maximum-size test is 200000 numbers (tests/oracle_free_heldout.py)."""

from __future__ import annotations

import random

import pytest

from problems.models import TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.oracle_free_heldout import GAIN, GAIN_QUADRATIC

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

rng = random.Random(35)
BIG = "1\n200000\n" + " ".join(str(rng.randint(1, 10**9)) for _ in range(200000)) + "\n"
FAST = GAIN.efficient
# Right everywhere; on the big test it also prints a page of anything: not judged there.
CHATTY = FAST + "if len(data) > 1000:\n    print('debug', 'x' * 5000)\n    print(-1)\n"
# Right on the small tests, fast, and a crash on the big one.
CRASHES = FAST.replace("pos = 1\n", "pos = 1\nassert len(data) < 1000, 'too big'\n", 1)
# Right on the small tests and exits 3 on the big one after printing the right answer.
EXIT_3 = FAST + "import os\nif len(data) > 1000:\n    sys.stdout.flush()\n    os._exit(3)\n"
SILENT = "import sys\nsys.stdin.read()\n"
PROGRAMS = {"fast": (FAST, "AC", 1), "chatty": (CHATTY, "AC", 1), "crashes": (CRASHES, "RE", 0),
            "exit_3": (EXIT_3, "RE", 0), "slow": (GAIN_QUADRATIC, "TLE", 0), "silent": (SILENT, "WA", 0)}


@pytest.fixture
def problem():
    problem = GAIN.make("hd/gain-api")
    suite = suite_create(problem=problem, origin=TestSuite.Origin.ORACLE_FREE, unverified=True,
                         trust={"method": "hardtests_a7", "time_only_tests": 1})
    suite_add_tests(suite=suite, tests=[
        *[NewTest(input=s["input"], output=s["output"], kind="public", output_origin="statement")
          for s in GAIN.samples],
        NewTest(input="1\n2\n9 4\n", output="-5\n", kind="edge", output_origin="brute_force"),
        NewTest(input="2\n3\n5 5 5\n2\n1 1000000000\n", output="0\n999999999\n", kind="edge",
                output_origin="brute_force"),
        NewTest(input=BIG, output=b"", kind="time_only", output_origin="none"),
    ])
    suite_activate(suite=suite)
    return problem


@pytest.mark.heavy(seconds=15)
def test_every_judging_api_judges_the_time_only_test_on_exit_and_time_and_names_the_origin(
        api, problem, sandbox_worker) -> None:
    ref = f"{problem.source}:{problem.pid}"
    for name, (code, verdict, reward) in PROGRAMS.items():
        for mode in ("all", "fail_fast"):
            out = api.post("/api/v1/verify", {"problem": ref, "language": "python3", "code": code, "mode": mode})
            assert out.status_code == 200, out.content
            body = out.json()
            assert (body["verdict"], body["reward"], body["suite_origin"]) == (verdict, reward, "oracle_free"), \
                (name, mode, body)
            if mode == "all":
                [big] = [t for t in body["tests"] if t["kind"] == "time_only"]
                assert big["verdict"] == {"silent": "AC", "chatty": "AC", "fast": "AC"}.get(name, verdict), name
                assert body["passed"] == (5 if reward else 4 if name != "silent" else 1), (name, body["passed"])

    batch = api.post("/api/v1/verify/batch", {"items": [
        {"problem": ref, "language": "python3", "code": code, "mode": "all"} for code, _, _ in PROGRAMS.values()]})
    assert batch.status_code in (200, 202)
    job = api.get(f"/api/v1/jobs/{batch.json()['job_id']}").json()
    for _ in range(600):
        if job["status"] == "finished":
            break
        import time

        time.sleep(0.2)
        job = api.get(f"/api/v1/jobs/{batch.json()['job_id']}").json()
    for item, (name, (_, verdict, reward)) in zip(job["items"], PROGRAMS.items(), strict=True):
        assert item["status"] == "finished", item
        result = item["result"]
        assert (result["verdict"], result["reward"], result["suite_origin"]) == (verdict, reward, "oracle_free"), name

    for name, (code, verdict, reward) in PROGRAMS.items():
        completion = f"My answer.\n\n```python\n{code}```\n"
        sf = api.post("/sandboxfusion/submit", {"dataset": "heldout", "id": ref, "completion": completion,
                                                "config": {"extra": {"mode": "all"}}})
        assert sf.status_code == 200, sf.content
        sf = sf.json()
        assert sf["accepted"] is bool(reward) and sf["extra"]["verdict"] == verdict, (name, sf["extra"])
        assert sf["extra"]["suite_origin"] == "oracle_free"

    rewards = api.post("/api/v1/openrlhf/reward", {
        "query": [f"Q\n```python\n{code}```" for code, _, _ in PROGRAMS.values()],
        "labels": [ref] * len(PROGRAMS)})
    assert rewards.status_code == 200, rewards.content
    assert rewards.json()["rewards"] == [float(r) for _, _, r in PROGRAMS.values()]

    listed = api.get(f"/api/v1/problems/{ref}").json()
    assert listed["active_suite"]["origin"] == "oracle_free" and listed["active_suite"]["trust"]["method"]
    suite = api.get(f"/api/v1/problems/{ref}/suite", {"include": "tests"}).json()
    assert suite["origin"] == "oracle_free"
    assert [t["output"] for t in suite["tests"] if t["kind"] == "time_only"] == [None]
