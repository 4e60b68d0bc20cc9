"""Data passed between the materialisation steps, and the limits they use."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings

from generation.models import FailureReason
from problems import judging
from sandbox import Limits

# What a run of a problem with no oracle at all says, wherever it stops (pre-flight, agreement).
NO_ORACLE_MESSAGE = (
    "the problem has no oracle (no solution known to be correct); a suite without one is built by the "
    "oracle-free modes: `manage.py generate_tests PID --mode oracle_free` (HardTests A.7) or `--mode acecoder`, "
    "or the problem page's oracle-free button; or add oracles and run again"
)


class MaterialiseError(RuntimeError):
    """Materialisation cannot produce a suite; `reason` is from the fixed taxonomy."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class Cancelled(MaterialiseError):
    def __init__(self, message: str = "cancelled on request") -> None:
        super().__init__(FailureReason.CANCELLED, message)


class RunFailed(Exception):
    """A run cannot go on; `reason` is from FailureReason (raised by the LLM steps and the lifecycle)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class Progress(Protocol):
    """What materialisation reports to (a GenerationRun recorder, or a bench printer)."""

    def stage(self, name: str) -> None: ...

    def log(self, message: str) -> None: ...

    def check_cancel(self) -> None: ...

    def counts(self, counts: dict[str, dict[str, int]]) -> None: ...


class NullProgress:
    def stage(self, name: str) -> None:
        pass

    def log(self, message: str) -> None:
        pass

    def check_cancel(self) -> None:
        pass

    def counts(self, counts: dict[str, dict[str, int]]) -> None:
        pass


@dataclass
class Candidate:
    """One input and where it came from."""

    text: str
    kind: str
    generator: str = ""
    call_number: int | None = None
    seed: int | None = None


COUNT_KEYS = ("generated", "failed", "duplicate", "invalid", "validator_error", "disagreement", "kept")


@dataclass
class Tally:
    """Counts per test kind: generated, failed (calls that gave no input), duplicate, invalid,
    validator_error (the validator crashed or timed out), disagreement (oracles did not agree), kept."""

    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, kind: str, key: str, amount: int = 1) -> None:
        row = self.by_kind.setdefault(kind, dict.fromkeys(COUNT_KEYS, 0))
        row[key] += amount

    def as_dict(self) -> dict[str, dict[str, int]]:
        total = dict.fromkeys(COUNT_KEYS, 0)
        for row in self.by_kind.values():
            for key in COUNT_KEYS:
                total[key] += row[key]
        return {**{k: dict(v) for k, v in self.by_kind.items()}, "total": total}


class SandboxClock:
    """Sum of the CPU time the sandbox reported, across threads (for the bench and the log)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.ms = 0
        self.runs = 0

    def add(self, results: list[Any]) -> None:
        with self._lock:
            self.ms += sum(int(getattr(r, "time_ms", 0) or 0) for r in results)
            self.runs += len(results)


def threads() -> int:
    return max(1, settings.HARDTESTS_MATERIALISE_THREADS)


def generator_limits() -> Limits:
    return Limits(time_s=settings.HARDTESTS_GENERATOR_TIME_S, memory_mb=settings.HARDTESTS_GENERATOR_MEMORY_MB,
                  output_kb=64 * 1024)


def batch_generator_limits() -> Limits:
    return Limits(time_s=settings.HARDTESTS_BATCH_GENERATOR_TIME_S, memory_mb=settings.HARDTESTS_GENERATOR_MEMORY_MB,
                  output_kb=256 * 1024)


def checker_limits() -> Limits:
    """Validators and output judging functions: the one set of limits judging uses too."""
    return judging.checker_limits()
