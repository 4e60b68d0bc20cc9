"""cgroup v1 accounting for one batch: memory limit and peak, pids limit, CPU of all tasks.

The trusted parent creates the cgroup and opens its control files; the runner
inside the sandbox only inherits those descriptors (it cannot see /sys), joins
the cgroup for each test and resets / reads the counters.  Where no writable
v1 hierarchy exists the runner falls back to rusage and rlimits alone.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

V1_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpuacct")
# order expected by hts-runner's -g option
FD_FILES = (
    ("memory", "cgroup.procs", os.O_WRONLY),
    ("pids", "cgroup.procs", os.O_WRONLY),
    ("cpuacct", "cgroup.procs", os.O_WRONLY),
    ("memory", "memory.max_usage_in_bytes", os.O_RDWR),
    ("memory", "memory.usage_in_bytes", os.O_RDONLY),
    ("memory", "memory.oom_control", os.O_RDONLY),
    ("cpuacct", "cpuacct.usage", os.O_RDWR),
)

_available: bool | None = None


def _own_path(controller: str) -> str:
    """Nest under our own cgroup so a worker's limits also bound its sandboxes."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
    return "/"


def _base(controller: str) -> Path:
    return V1_ROOT / controller / _own_path(controller).lstrip("/") / "hardtests-sandbox"


def available() -> bool:
    global _available
    if _available is None:
        if os.environ.get("HARDTESTS_SANDBOX_CGROUPS", "1") == "0":
            _available = False
        else:
            _available = all(_probe(c) for c in CONTROLLERS)
    return _available


def _probe(controller: str) -> bool:
    try:
        base = _base(controller)
        base.mkdir(exist_ok=True)
        return os.access(base, os.W_OK) and (base / "cgroup.procs").exists()
    except OSError:
        return False


class BatchCgroup:
    """One cgroup per batch (per controller); tests run in it one after another."""

    def __init__(self, memory_bytes: int, pids: int) -> None:
        name = f"b-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.dirs = {c: _base(c) / name for c in CONTROLLERS}
        self.fds: list[int] = []
        try:
            for path in self.dirs.values():
                path.mkdir()
            mem = self.dirs["memory"]
            (mem / "memory.limit_in_bytes").write_text(str(memory_bytes))
            swap = mem / "memory.memsw.limit_in_bytes"
            if swap.exists():
                # no swap either, so the limit is real memory
                with contextlib.suppress(OSError):
                    swap.write_text(str(memory_bytes))
            with contextlib.suppress(OSError):
                (mem / "memory.swappiness").write_text("0")
            (self.dirs["pids"] / "pids.max").write_text(str(pids))
            for controller, filename, flags in FD_FILES:
                self.fds.append(os.open(self.dirs[controller] / filename, flags | os.O_CLOEXEC))
        except OSError:
            self.close()
            raise

    def runner_arg(self) -> str:
        return ",".join(str(fd) for fd in self.fds)

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []
        for path in self.dirs.values():
            # the runner's processes are gone, but the kernel may take a moment to release them
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
