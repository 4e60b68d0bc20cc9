"""The verification contract's types, each written once: the judging `Mode`, what is asked
(`VerifyRequest`), what the API resolved of the suite (`SuiteSnapshot`) and what the worker
answers (`VerifyResult`).

Each has `to_wire()` / `from_wire()`: the JSON-able dict that travels (the judging job's keyword
arguments, the snapshot in its meta, the result on its streams, in RQ's result and in the verdict
cache) and the one place that reads such a dict back. `from_wire` raises WireError (a
ValueError) for a dict of another shape, and ValueError for a mode or subset it does not know:
the worker never guesses what a string meant. The plumbing (the queue, the result streams, the
caches) is problems/verify_contract.py; this module imports nothing of the project but the
models, so judging (problems/judging.py) can take a Mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, get_args

from problems.models import Problem, TestSuite


class Mode(StrEnum):
    """How much of a suite judging runs."""

    FAIL_FAST = "fail_fast"  # stop at the first failing test (the answer is the same)
    ALL = "all"  # run every test


Subset = Literal["full", "fast"]
SUBSET_NAMES: tuple[str, ...] = get_args(Subset)


class WireError(ValueError):
    """A wire dict of another shape (another release's, or damaged)."""


def _subset(value: object) -> Subset:
    if value == "full":
        return "full"
    if value == "fast":
        return "fast"
    raise ValueError(f"{value!r} is not a suite subset (one of {', '.join(SUBSET_NAMES)})")


def _plain(value: Any) -> Any:
    """A field's value as JSON carries it."""
    if isinstance(value, StrEnum):
        return value.value  # a plain str: an enum member would pickle as this module's class
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value


def _wire(instance: Any) -> dict[str, Any]:
    # over the dataclass's fields, so a field added is on the wire (and in every cache key) at once
    return {f.name: _plain(getattr(instance, f.name)) for f in fields(instance)}


@dataclass(frozen=True, slots=True)
class VerifyRequest:
    """One program to judge against one suite: what the judging job is asked."""

    problem_id: int
    suite_id: int
    language: str
    code: str
    mode: Mode = Mode.FAIL_FAST
    subset: Subset = "full"  # "fast": the suite's fast subset (problems/kill_order.py)

    def __post_init__(self) -> None:
        if not isinstance(self.mode, Mode):
            # a string reaching here was not converted at the boundary: a bug, not a mode to guess
            raise TypeError(f"mode must be a Mode, not {self.mode!r}")
        _subset(self.subset)

    def to_wire(self) -> dict[str, Any]:
        """The judging job's keyword arguments (problems.jobs.judge_code_job's parameter names, so
        a worker of the previous release, which took them positionally, takes them as before)."""
        return _wire(self)

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> VerifyRequest:
        try:
            return cls(problem_id=int(wire["problem_id"]), suite_id=int(wire["suite_id"]),
                       language=str(wire["language"]), code=str(wire["code"]), mode=Mode(wire["mode"]),
                       subset=_subset(wire.get("subset", "full")))
        except (KeyError, TypeError) as exc:
            raise WireError(f"not a verification request: {exc!r}") from exc


@dataclass(frozen=True, slots=True)
class SuiteSnapshot:
    """What judging reads of a complete suite and its problem, as the API resolved it: with it a
    worker that has the suite's bodies cached judges without a query. The problem's limits are
    those of the moment it was taken; `judging` names what judges the outputs
    (problems.judging.judging_digest) as it was then."""

    suite_id: int
    problem_id: int
    version: int
    created_at: datetime
    origin: str
    order_revision: int
    comparison: str
    time_limit_ms: int
    memory_limit_mb: int
    judging: str

    @classmethod
    def of(cls, suite: TestSuite, *, judging: str) -> SuiteSnapshot:
        problem = suite.problem
        return cls(suite_id=suite.pk, problem_id=suite.problem_id, version=suite.version,
                   created_at=suite.created_at, origin=suite.origin, order_revision=suite.order_revision,
                   comparison=problem.comparison, time_limit_ms=problem.time_limit_ms,
                   memory_limit_mb=problem.memory_limit_mb, judging=judging)

    def stand_in(self) -> TestSuite:
        """An unsaved suite (and problem) carrying the snapshot's values, for judging without a query."""
        problem = Problem(pk=self.problem_id, comparison=self.comparison, time_limit_ms=self.time_limit_ms,
                          memory_limit_mb=self.memory_limit_mb)
        return TestSuite(pk=self.suite_id, problem=problem, version=self.version, created_at=self.created_at,
                         origin=self.origin, order_revision=self.order_revision)

    def to_wire(self) -> dict[str, Any]:
        return _wire(self)

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> SuiteSnapshot:
        try:
            created = wire["created_at"]
            return cls(suite_id=int(wire["suite_id"]), problem_id=int(wire["problem_id"]),
                       version=int(wire["version"]),
                       created_at=created if isinstance(created, datetime) else datetime.fromisoformat(created),
                       origin=str(wire["origin"]), order_revision=int(wire["order_revision"]),
                       comparison=str(wire["comparison"]), time_limit_ms=int(wire["time_limit_ms"]),
                       memory_limit_mb=int(wire["memory_limit_mb"]), judging=str(wire["judging"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise WireError(f"not a suite snapshot: {exc!r}") from exc


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """A judging job's answer (problems.judging.JudgeResult.to_dict, plus the job's timings)."""

    verdict: str
    passed: int
    total: int
    complete: bool
    suite_id: int
    suite_version: int
    suite_origin: str
    subset: Subset = "full"
    elapsed_ms: int = 0
    # where the time went on the worker (ms): load, compile, tests
    phases: dict[str, float] = field(default_factory=dict)
    message: str = ""
    # one dict per test run (index, ordinal, kind, verdict, time_ms, wall_ms, memory_kb, message)
    tests: tuple[dict[str, Any], ...] = ()
    # this job's clock (epoch seconds: enqueued, picked_up, returned); None in the verdict cache,
    # whose answers are not this call's
    timings: dict[str, float | None] | None = None

    @property
    def reward(self) -> int:
        return int(self.verdict == "AC")

    @property
    def pass_fraction(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def to_wire(self) -> dict[str, Any]:
        wire = _wire(self)
        if self.timings is None:
            del wire["timings"]
        wire["reward"], wire["pass_fraction"] = self.reward, self.pass_fraction
        return wire

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> VerifyResult:
        try:
            tests, phases, timings = wire["tests"], wire.get("phases") or {}, wire.get("timings")
            if not isinstance(tests, list | tuple) or not all(isinstance(t, dict) for t in tests):
                raise TypeError("tests is not a list of objects")
            if not isinstance(phases, dict) or not (timings is None or isinstance(timings, dict)):
                raise TypeError("phases or timings is not an object")
            return cls(verdict=str(wire["verdict"]), passed=int(wire["passed"]), total=int(wire["total"]),
                       complete=bool(wire["complete"]), suite_id=int(wire["suite_id"]),
                       suite_version=int(wire["suite_version"]), suite_origin=str(wire["suite_origin"]),
                       subset=_subset(wire.get("subset", "full")), elapsed_ms=int(wire.get("elapsed_ms") or 0),
                       phases=phases, message=str(wire.get("message") or ""), tests=tuple(tests), timings=timings)
        except (KeyError, TypeError, ValueError) as exc:
            raise WireError(f"not a verification result: {exc!r}") from exc
