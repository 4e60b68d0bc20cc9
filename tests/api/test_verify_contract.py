"""The typed verification contract (problems/verify_types.py): the wire round trip, a mode no
one knows refused at every boundary of the API (4xx, nothing enqueued) and never guessed at by
the worker, and a verdict cache key that covers every field of the request and the snapshot."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from typing import Any, get_args

import pytest
from django.test import override_settings

from api import schemas
from core.queues import verification_queue
from problems.jobs import judge_code_job
from problems.judging import judge_code
from problems.models import Problem, TestSuite
from problems.verify_contract import suite_from_snapshot, verdict_cache_key, verdict_cache_parse
from problems.verify_types import Mode, SuiteSnapshot, VerifyRequest, VerifyResult, WireError
from tests.api.conftest import GOOD

REQUEST = VerifyRequest(problem_id=7, suite_id=11, language="cpp", code="int main() {}\n", mode=Mode.ALL,
                        subset="fast")
SNAPSHOT = SuiteSnapshot(suite_id=11, problem_id=7, version=3, created_at=datetime(2026, 1, 2, 3, 4, 5, 6789, tzinfo=UTC),
                         origin="generated", order_revision=4, comparison="tokens", time_limit_ms=1500,
                         memory_limit_mb=256, judging="d" * 64)
RESULT = VerifyResult(verdict="WA", passed=2, total=5, complete=False, suite_id=11, suite_version=3,
                      suite_origin="generated", subset="fast", elapsed_ms=42, phases={"load": 0.5, "tests": 30.0},
                      message="wrong answer", tests=({"index": 0, "ordinal": 1, "kind": "direct", "verdict": "AC",
                                                      "time_ms": 1, "wall_ms": 2, "memory_kb": 3, "message": ""},),
                      timings={"enqueued": 1.0, "picked_up": 2.0, "returned": 3.0})


def _through_json(wire: dict[str, Any]) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(json.dumps(wire))
    return decoded


# -- the wire -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [REQUEST, SNAPSHOT, RESULT, replace(RESULT, timings=None)],
                         ids=["request", "snapshot", "result", "result-without-timings"])
def test_every_type_comes_back_equal_from_its_wire_through_json(value: Any) -> None:
    wire = value.to_wire()
    assert type(value).from_wire(_through_json(wire)) == value
    # every field is on the wire, as plain JSON values (no enum member, no datetime)
    assert {f.name for f in fields(value)} - {"timings"} <= set(wire)
    assert json.loads(json.dumps(wire)) == wire


def test_the_request_s_wire_is_the_judging_job_s_keyword_arguments() -> None:
    # an earlier release took these positionally under the same names: it takes them as before
    assert REQUEST.to_wire() == {"problem_id": 7, "suite_id": 11, "language": "cpp", "code": "int main() {}\n",
                                 "mode": "all", "subset": "fast"}
    assert type(REQUEST.to_wire()["mode"]) is str  # an enum member would pickle as a class an old worker lacks


def test_a_result_s_wire_is_what_the_api_and_an_earlier_release_read() -> None:
    wire = RESULT.to_wire()
    assert (wire["reward"], wire["pass_fraction"], wire["verdict"], wire["tests"][0]["ordinal"]) == (0, 0.4, "WA", 1)
    assert "timings" not in replace(RESULT, timings=None).to_wire()


def test_a_snapshot_s_stand_in_carries_its_values() -> None:
    suite = SNAPSHOT.stand_in()
    assert (suite.pk, suite.problem_id, suite.version, suite.created_at, suite.origin, suite.order_revision) == (
        11, 7, 3, SNAPSHOT.created_at, "generated", 4)
    assert (suite.problem.comparison, suite.problem.time_limit_ms, suite.problem.memory_limit_mb) == (
        "tokens", 1500, 256)
    assert SuiteSnapshot.of(suite, judging="d" * 64) == SNAPSHOT


@pytest.mark.parametrize("wire", [{}, {"verdict": "AC"}, {**RESULT.to_wire(), "tests": "x"},
                                  {**RESULT.to_wire(), "passed": None}])
def test_a_result_of_another_shape_is_a_wire_error_and_a_cache_miss(wire: dict[str, Any]) -> None:
    with pytest.raises(WireError):
        VerifyResult.from_wire(wire)
    assert verdict_cache_parse(json.dumps(wire).encode()) is None
    assert verdict_cache_parse(json.dumps(RESULT.to_wire()).encode()) == RESULT


def test_a_snapshot_of_another_shape_is_read_from_the_database() -> None:
    assert suite_from_snapshot({k: v for k, v in SNAPSHOT.to_wire().items() if k != "judging"}) is None
    assert suite_from_snapshot({**SNAPSHOT.to_wire(), "created_at": "yesterday"}) is None


# -- the mode -------------------------------------------------------------------------------


def test_the_api_schema_s_modes_are_the_contract_s() -> None:
    assert set(get_args(schemas.Mode)) == {mode.value for mode in Mode}


@pytest.mark.parametrize("mode", ["ALL", "fast", "", "all "])
def test_a_mode_no_one_knows_is_refused_on_the_wire_and_never_guessed(mode: str) -> None:
    with pytest.raises(ValueError, match="is not a valid Mode") as raised:
        VerifyRequest.from_wire({**REQUEST.to_wire(), "mode": mode})
    assert not isinstance(raised.value, WireError)  # a bug to report, not another release's shape
    with pytest.raises(TypeError, match="must be a Mode"):
        VerifyRequest(problem_id=1, suite_id=1, language="python3", code="x", mode=mode)  # type: ignore[arg-type]
    # judging itself: no test runs, the unknown string is not read as fail-fast
    with pytest.raises(ValueError, match="is not a valid Mode"):
        judge_code(problem=Problem(), suite=TestSuite(), language="python3", code=GOOD, mode=mode)  # type: ignore[arg-type]


@pytest.mark.django_db
def test_the_worker_refuses_a_job_with_a_mode_no_one_knows(ab_problem: Problem) -> None:
    suite = ab_problem.suites.get()
    # the same job with a known mode judges (the refusal is the mode's, nothing else)
    assert judge_code_job(ab_problem.pk, suite.pk, "python3", GOOD, "all")["verdict"] == "AC"
    with pytest.raises(ValueError, match="'fast' is not a valid Mode"):
        judge_code_job(ab_problem.pk, suite.pk, "python3", GOOD, "fast")


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["ALL", "fast", 1, None])
def test_the_api_refuses_a_mode_no_one_knows_before_anything_is_queued(api: Any, ab_problem: Problem,
                                                                        fake_worker: Any, mode: Any) -> None:
    body = {"problem": "ab/sum", "language": "python3", "code": GOOD, "mode": mode}
    one = api.post("/api/v1/verify", body)
    assert one.status_code == 400, one.content
    assert [(e["loc"][-1], e["msg"]) for e in one.json()["errors"]] == [("mode", "Input should be 'fail_fast' or 'all'")]
    batch = api.post("/api/v1/verify/batch", {"items": [{**body, "mode": "all"}, body]})
    assert batch.status_code == 400, batch.content
    assert [(e["loc"][-3:], e["msg"]) for e in batch.json()["errors"]] == [
        (["items", "1", "mode"], "Input should be 'fail_fast' or 'all'")]
    submit = api.post("/sandboxfusion/submit", {"dataset": "x", "id": "ab/sum", "completion": f"```python\n{GOOD}```",
                                                "config": {"extra": {"mode": mode}}})
    assert submit.status_code == 400, submit.content
    assert submit.json()["detail"] == "config.extra.mode must be fail_fast or all"
    assert verification_queue().count == 0


# -- the verdict cache's key ----------------------------------------------------------------


def _other(value: Any) -> Any:
    """A value of the same type as `value`, and not equal to it."""
    if isinstance(value, Mode):
        return next(mode for mode in Mode if mode is not value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, datetime):
        return value + timedelta(microseconds=1)
    if value in ("full", "fast"):
        return "full" if value == "fast" else "fast"
    if isinstance(value, str):
        return value + "x"
    raise AssertionError(f"no other value for {value!r}: teach _other this field's type")


@pytest.mark.parametrize("of", ["request", "snapshot"])
def test_the_verdict_cache_key_changes_with_every_field_of_the_request_and_the_snapshot(of: str) -> None:
    key = verdict_cache_key(REQUEST, SNAPSHOT, owner_id=1)
    assert verdict_cache_key(replace(REQUEST), replace(SNAPSHOT), owner_id=1) == key  # by value
    assert verdict_cache_key(REQUEST, SNAPSHOT, owner_id=2) != key
    value = REQUEST if of == "request" else SNAPSHOT
    # over the dataclass's fields: a field added later is checked without editing this test
    names = [f.name for f in fields(value)]
    assert len(names) >= 6
    for name in names:
        changed = replace(value, **{name: _other(getattr(value, name))})
        other = verdict_cache_key(changed, SNAPSHOT, owner_id=1) if of == "request" else \
            verdict_cache_key(REQUEST, changed, owner_id=1)  # type: ignore[arg-type]
        assert other != key, f"the verdict cache key ignores {of}.{name}"


def test_the_verdict_cache_key_changes_with_the_judging_function_s_limits() -> None:
    key = verdict_cache_key(REQUEST, SNAPSHOT, owner_id=1)
    with override_settings(HARDTESTS_CHECKER_TIME_S=99):
        assert verdict_cache_key(REQUEST, SNAPSHOT, owner_id=1) != key
    with override_settings(HARDTESTS_CHECKER_MEMORY_MB=9999):
        assert verdict_cache_key(REQUEST, SNAPSHOT, owner_id=1) != key
