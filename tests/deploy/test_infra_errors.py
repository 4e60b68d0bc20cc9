"""What a worker reports that is not a verdict on the program becomes an error, never reward 0."""

from __future__ import annotations

from types import SimpleNamespace

from rq.results import Result

from api.endpoints import _batch_out
from api.verification import _outcome


def _result(value: dict) -> SimpleNamespace:
    return SimpleNamespace(type=Result.Type.SUCCESSFUL, return_value=value, created_at=None, exc_string="")


def test_a_sandbox_error_is_an_error_with_its_reason_not_a_verdict() -> None:
    outcome = _outcome(_result({"verdict": "SE", "message": "no CPU accounting for the test's processes",
                                "passed": 0, "total": 4}), None)
    assert outcome.status == "error" and outcome.result is None
    assert "no CPU accounting" in outcome.error


def test_a_wrong_answer_stays_a_verdict() -> None:
    assert _outcome(_result({"verdict": "WA", "passed": 1, "total": 4}), None).status == "finished"


def test_batch_items_in_error_carry_no_result_and_no_reward() -> None:
    crashed = SimpleNamespace(type=Result.Type.FAILED, return_value=None, created_at=None,
                              exc_string="Traceback...\nproblems.blobs.BlobUnavailable: test storage down")
    out = _batch_out("b" * 32, [_outcome(crashed, None)], [{"version": 1, "origin": "generated", "total": 4}], 0.0)
    [item] = out["items"]
    assert (out["status"], item["status"]) == ("finished", "error")
    assert "result" not in item and "BlobUnavailable" in item["error"]
