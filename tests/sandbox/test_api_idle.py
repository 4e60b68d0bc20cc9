"""Through the real API and a real sandbox worker: an idle program is scored, never a 503."""

from __future__ import annotations

import pytest

from sandbox import Limits
from tests.api.conftest import _clean_redis, ab_problem, api, sandbox_worker, user  # noqa: F401 - fixtures

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.postgres]

ZOMBIE_THEN_SLEEP = "import os, time\nif os.fork() == 0:\n    os._exit(0)\ntime.sleep(100)\n"


def test_an_idle_program_with_a_zombie_child_is_reward_0_tle(api, ab_problem, sandbox_worker):  # noqa: F811
    response = api.post("/api/v1/verify", {"problem": "ab/sum", "language": "python3", "code": ZOMBIE_THEN_SLEEP})
    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["reward"], data["verdict"]) == (0, "TLE"), data
    assert data["tests"][0]["verdict"] == "TLE"
    backstop_ms = Limits(time_s=ab_problem.time_limit_ms / 1000).wall_limit_s * 1000
    # stopped once at the backstop: not held until the "starved" limit, not run again
    assert data["tests"][0]["wall_ms"] <= 2 * backstop_ms
    assert data["judge_ms"] <= 2 * backstop_ms, data["judge_ms"]
