"""The execution engine for untrusted programs.

A plain library: it imports nothing of Django or of the project, so that it
can run in any worker.  Compile once, run many inputs::

    sb = get_sandbox()
    prog = sb.compile("cpp", source)
    results = sb.run(prog, inputs, Limits(time_s=1, memory_mb=256))
"""

from __future__ import annotations

import os
import threading

from .base import Sandbox
from .compare import compare_default, compare_exact, compare_float, compare_outputs, compare_tokens
from .pycall import call_python
from .types import CallResult, CompiledProgram, Limits, RunResult, SandboxUnavailable, Verdict

__all__ = [
    "CallResult",
    "CompiledProgram",
    "Limits",
    "RunResult",
    "Sandbox",
    "SandboxUnavailable",
    "Verdict",
    "BACKENDS",
    "call_python",
    "compare_default",
    "compare_exact",
    "compare_outputs",
    "compare_tokens",
    "compare_float",
    "get_sandbox",
]

BACKENDS = ("bwrap", "docker")
_instances: dict[str, Sandbox] = {}
_lock = threading.Lock()


def get_sandbox(backend: str | None = None) -> Sandbox:
    """The sandbox for `backend` (default: $HARDTESTS_SANDBOX_BACKEND, else bwrap).

    Raises SandboxUnavailable naming what to install; there is no unsandboxed fallback.
    """
    name = backend or os.environ.get("HARDTESTS_SANDBOX_BACKEND") or "bwrap"
    if name not in BACKENDS:
        raise SandboxUnavailable(f"unknown sandbox backend {name!r}; choose one of {', '.join(BACKENDS)}")
    with _lock:
        if name not in _instances:
            if name == "bwrap":
                from .bwrap import BwrapSandbox

                _instances[name] = BwrapSandbox()
            else:
                from .docker_backend import DockerSandbox

                _instances[name] = DockerSandbox()
        return _instances[name]
