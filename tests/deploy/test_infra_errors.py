"""What a worker reports that is not a verdict on the program becomes an error, never reward 0."""

from __future__ import annotations

from types import SimpleNamespace

from rq.results import Result

from api.endpoints import _batch_out
from api.verification import _outcome
from problems.verify_types import VerifyResult


def _result(verdict: str, **fields: object) -> SimpleNamespace:
    """A worker's answer as the judging job writes it (the contract's wire)."""
    value = VerifyResult(verdict=verdict, complete=True, suite_id=1, suite_version=1, suite_origin="generated",
                         **fields).to_wire()  # type: ignore[arg-type]
    return SimpleNamespace(type=Result.Type.SUCCESSFUL, return_value=value, created_at=None, exc_string="")


def test_a_sandbox_error_is_an_error_with_its_reason_not_a_verdict() -> None:
    outcome = _outcome(_result("SE", message="no CPU accounting for the test's processes", passed=0, total=4), None)
    assert outcome.status == "error" and outcome.result is None
    assert "no CPU accounting" in outcome.error


def test_a_wrong_answer_stays_a_verdict() -> None:
    outcome = _outcome(_result("WA", passed=1, total=4), None)
    assert outcome.status == "finished" and outcome.result is not None and outcome.result.reward == 0


def test_an_answer_of_another_shape_is_an_error_never_a_verdict() -> None:
    outcome = _outcome(SimpleNamespace(type=Result.Type.SUCCESSFUL, return_value={"verdict": "WA", "passed": 1},
                                       created_at=None, exc_string=""), None)
    assert outcome.status == "error" and outcome.result is None and "not a verification result" in outcome.error


def test_batch_items_in_error_carry_no_result_and_no_reward() -> None:
    crashed = SimpleNamespace(type=Result.Type.FAILED, return_value=None, created_at=None,
                              exc_string="Traceback...\nproblems.blobs.BlobUnavailable: test storage down")
    out = _batch_out("b" * 32, [_outcome(crashed, None)], [{"version": 1, "origin": "generated", "total": 4}], 0.0)
    [item] = out["items"]
    assert (out["status"], item["status"]) == ("finished", "error")
    assert "result" not in item and "BlobUnavailable" in item["error"]
