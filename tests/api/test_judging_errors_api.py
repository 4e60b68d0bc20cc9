"""A judge's failure through the API: a judging function that cannot be loaded, crashes, runs
out of time or returns a non-bool on every output is 503 `judging_error` (never reward 0, never
kept in the verdict cache); one that trips only on the program's own output is WA."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from problems.services import judge_create, kit_create
from tests.api.conftest import AB_TESTS, GOOD, WRONG, make_suite
from tests.factories import ProblemFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BROKEN = {
    "load": "def output_judging_function(i, c, r)\n    return True\n",
    "crash": "def output_judging_function(i, c, r):\n    return 1 / 0\n",
    "timeout": "def output_judging_function(i, c, r):\n    while True:\n        pass\n",
    "non_bool": "def output_judging_function(i, c, r):\n    return None\n",
}
FAIR = "def output_judging_function(i, c, r):\n    return int(c.split()[0]) == int(r.split()[0])\n"


@pytest.fixture(scope="module", autouse=True)
def _short_checker_limit() -> Iterator[None]:
    """The module's worker (started after this) gives a judging function 0.5 s, not 10."""
    with pytest.MonkeyPatch.context() as env:  # restored after the module, as it was
        env.setenv("HARDTESTS_CHECKER_TIME_S", "0.5")
        yield


@pytest.fixture(scope="module")
def worker(_short_checker_limit: None, sandbox_worker: Any) -> Any:
    """The API tests' real worker, started once the short limit is in the environment."""
    return sandbox_worker


def _problem(pid: str, judge: str) -> None:
    problem = ProblemFactory(source="judges", pid=pid, time_limit_ms=1000)
    make_suite(problem, AB_TESTS[:2])  # two tests: a judge that times out costs its limit per call
    kit_create(problem=problem, origin="llm", validator=None,
               output_judge=judge_create(problem=problem, code=judge, origin="llm"))


@pytest.mark.parametrize("path", sorted(BROKEN))
def test_a_broken_judging_function_is_503_judging_error(api: Any, worker: Any, path: str) -> None:
    _problem(path, BROKEN[path])
    for code in (GOOD, WRONG):
        response = api.post("/api/v1/verify", {"problem": f"judges:{path}", "language": "python3", "code": code})
        assert response.status_code == 503, (path, response.content)
        assert response.json()["code"] == "judging_error" and "judging function" in response.json()["detail"]
    # nothing was kept: asked again, it is judged again (and fails again), never answered from a cache
    again = api.post("/api/v1/verify", {"problem": f"judges:{path}", "language": "python3", "code": GOOD})
    assert again.status_code == 503


def test_output_a_judge_cannot_read_is_the_programs_wa(api: Any, worker: Any) -> None:
    _problem("fair", FAIR)
    for code, verdict in ((GOOD, "AC"), (WRONG, "WA"), ("print('x')\n", "WA")):
        response = api.post("/api/v1/verify", {"problem": "judges:fair", "language": "python3", "code": code})
        assert response.status_code == 200, response.content
        assert response.json()["verdict"] == verdict
