"""Opted in (HARDTESTS_KILL_ORDER_FROM_API), the verifications sent to the API teach a suite its
kill order: a program that passed the earlier tests and failed a later one moves that test
ahead, and the next program wrong the same way fails on its first test. Real worker, real
sandbox; no candidate of the problem is known."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.conftest import GOOD

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# Right everywhere but on 0 + 0, which kind order judges last (a "direct" test).
ZERO_WRONG = [
    "a, b = map(int, input().split())\nprint(a + b if a + b else 1)\n",
    "a, b = map(int, input().split())\nprint(a + b or -1)\n",
]
ZERO_WRONG_TOO = "a, b = map(int, input().split())\ns = a + b\nprint(s if s != 0 else 7)\n"


@pytest.fixture(scope="module", autouse=True)
def _api_teaches() -> Iterator[None]:
    """The module's worker (started after this) records what the API's programs fail, and
    computes the order again at each new row."""
    wanted = {"HARDTESTS_KILL_ORDER_FROM_API": "1",
              "HARDTESTS_KILL_ORDER_REFRESH_S": "0"}
    before = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _verify(api: Any, code: str) -> dict[str, Any]:
    response = api.post("/api/v1/verify", {"problem": "ab/sum", "language": "python3", "code": code})
    assert response.status_code == 200, response.content
    return dict(response.json())


def _until(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + 30
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_failures_sent_to_the_api_teach_the_order(api, ab_problem, sandbox_worker):
    from problems.models import KillEvidence

    suite = ab_problem.suites.get()
    answers = [_verify(api, code) for code in ZERO_WRONG]
    # kind order: the hacking test, the regular one, the two direct ones; 0 + 0 fails last
    assert [[t["kind"] for t in a["tests"]] for a in answers] == [["hacking", "regular", "direct", "direct"]] * 2
    assert {(a["verdict"], a["reward"], a["passed"]) for a in answers} == {("WA", 0, 3)}
    zero = answers[0]["tests"][-1]["ordinal"]
    assert answers[1]["tests"][-1]["ordinal"] == zero
    # recorded after the answer left: one row a program and failing test
    _until(lambda: KillEvidence.objects.filter(suite=suite).count() == 2, "two rows of evidence")
    assert set(KillEvidence.objects.filter(suite=suite).values_list("ordinal", "source")) == {(zero, "api")}
    _until(lambda: (suite.refresh_from_db() or suite.judge_order[:1]) == [zero], "the order to move 0 + 0 first")
    assert suite.kill_counts == {str(zero): 2}
    # the next program wrong on 0 + 0 fails on its first test; a right one still passes them all
    third = _verify(api, ZERO_WRONG_TOO)
    assert (third["verdict"], third["reward"], [t["ordinal"] for t in third["tests"]]) == ("WA", 0, [zero])
    good = _verify(api, GOOD)
    assert (good["verdict"], good["reward"], good["passed"], good["tests"][0]["ordinal"]) == ("AC", 1, 4, zero)
