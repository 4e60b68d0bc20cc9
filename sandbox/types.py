"""Plain data types of the sandbox API (no behaviour beyond small helpers)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Verdict(enum.StrEnum):
    OK = "OK"
    TLE = "TLE"
    MLE = "MLE"
    RE = "RE"
    OLE = "OLE"
    CE = "CE"
    SE = "SE"


class SandboxUnavailable(RuntimeError):
    """The chosen backend cannot run here; the message names what to install."""


@dataclass(frozen=True)
class Limits:
    time_s: float = 2.0
    memory_mb: int = 256
    output_kb: int = 64 * 1024
    processes: int = 64
    wall_s: float | None = None

    @property
    def wall_limit_s(self) -> float:
        # the wall clock is only a backstop (sleeping, blocking); verdicts use CPU time
        return self.wall_s if self.wall_s is not None else 1.5 * self.time_s + 0.5


@dataclass
class RunResult:
    verdict: Verdict
    exit_code: int | None = None
    signal: int | None = None
    time_ms: int = 0
    wall_ms: int = 0
    memory_kb: int = 0
    stdout: bytes = b""
    stdout_truncated: bool = False
    stderr: str = ""
    # "cgroup": time and memory of every process of the test; "rusage": only what the
    # program waited for (allowed by HARDTESTS_SANDBOX_ALLOW_RUSAGE where no cgroup works)
    accounting: str = "cgroup"
    # set when Sandbox.run(expected=...) compared the output while reading it; stdout then
    # keeps only a prefix, and stdout_size / stdout_sha256 describe the whole output
    matched: bool | None = None
    stdout_size: int = -1
    stdout_sha256: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict == Verdict.OK

    def to_dict(self) -> dict[str, Any]:
        data = {
            "verdict": str(self.verdict),
            "exit_code": self.exit_code,
            "signal": self.signal,
            "time_ms": self.time_ms,
            "wall_ms": self.wall_ms,
            "memory_kb": self.memory_kb,
            "stdout": self.stdout.decode("utf-8", "replace"),
            "stderr": self.stderr,
        }
        if self.accounting != "cgroup":
            data["accounting"] = self.accounting
        return data


@dataclass
class CompiledProgram:
    language: str
    verdict: Verdict
    message: str = ""
    # directory holding the artifact (binary, classes or the Python source)
    path: str = ""
    argv: list[str] = field(default_factory=list)
    main_class: str = ""
    compile_ms: int = 0
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.verdict == Verdict.OK


@dataclass
class CallResult:
    ok: bool
    value: Any = None
    error: str | None = None
    verdict: Verdict = Verdict.OK
    time_ms: int = 0
