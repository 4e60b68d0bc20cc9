"""OpenRLHF's remote reward gives up after 5 tries 1 s apart and leaves the reward None
(v0.11.0 openrlhf/utils/agent.py), so the endpoint sends again, itself, the items the workers
could not judge (twice, with backoff) before answering 503. The workers' answers are scripted at
the batch seam (api.verification.batch_start); what is sent again is checked."""

from __future__ import annotations

from typing import Any

import pytest

import api.openrlhf
from api.verification import Outcome
from problems.models import Problem
from problems.verify_types import VerifyResult
from tests.api.conftest import GOOD, WRONG

pytestmark = pytest.mark.django_db

STARVED = Outcome("error", error="sandbox error on the worker: the wall-clock backstop stopped the program ... "
                                 "the machine is overloaded; retry")
AC = Outcome("finished", result=VerifyResult(verdict="AC", passed=4, total=4, complete=True, suite_id=1,
                                             suite_version=1, suite_origin="generated"))
WA = Outcome("finished", result=VerifyResult(verdict="WA", passed=1, total=4, complete=False, suite_id=1,
                                             suite_version=1, suite_origin="generated"))


def _script(monkeypatch: pytest.MonkeyPatch, rounds: list[list[Outcome]]) -> list[list[str]]:
    sent: list[list[str]] = []

    def batch_start(items: list[Any], *, owner_id: int) -> tuple[str, list[Outcome], list[Any]]:
        sent.append([item.request.code for item in items])
        return "b" * 32, rounds.pop(0), []

    monkeypatch.setattr(api.openrlhf, "batch_start", batch_start)
    monkeypatch.setattr(api.openrlhf.time, "sleep", lambda s: None)
    return sent


def _body() -> dict[str, Any]:
    return {"query": [f"```python\n{GOOD}```", f"```python\n{WRONG}```"], "prompts": ["", ""],
            "labels": ["test:ab/sum", "test:ab/sum"]}


def test_items_the_workers_could_not_judge_are_sent_again(api, ab_problem: Problem, monkeypatch) -> None:
    sent = _script(monkeypatch, [[STARVED, WA], [AC]])
    answer = api.post("/api/v1/openrlhf/reward", _body())
    assert answer.status_code == 200, answer.json()
    assert answer.json()["rewards"] == [1.0, 0.0]
    assert sent == [[GOOD, WRONG], [GOOD]]  # only the failed item went again


def test_an_item_still_failing_after_the_retries_is_a_503(api, ab_problem: Problem, monkeypatch) -> None:
    sent = _script(monkeypatch, [[STARVED, WA], [STARVED], [STARVED]])
    answer = api.post("/api/v1/openrlhf/reward", _body())
    assert answer.status_code == 503 and "rewards" not in answer.json()
    assert answer.json()["detail"].startswith("query[0]: judging failed on the sandbox side")
    assert len(sent) == 3
