"""cgroup accounting for one batch: memory limit and peak, pids limit, CPU of all tasks, OOM kills.

The trusted parent creates the cgroup and opens its control files; the runner
inside the sandbox only inherits those descriptors (it cannot see /sys), joins
the cgroup for each test and resets / reads the counters.  Two layouts:

v1  one directory per batch in each of the memory, pids and cpuacct
    hierarchies (/sys/fs/cgroup/<controller>/<our cgroup>/hardtests-sandbox/b-...).
v2  one directory per batch in the unified hierarchy (/sys/fs/cgroup, or
    /sys/fs/cgroup/unified on a hybrid host), under <our cgroup>/hardtests-sandbox.
    cpu.stat (CPU of every task) and cgroup.kill exist in every v2 cgroup; memory
    and pids limits need those controllers, which v2 hands down only through
    each parent's cgroup.subtree_control, and a non-root cgroup that holds
    processes cannot hand them down ("no internal processes").  So they are
    enabled where that is allowed: always in hardtests-sandbox (it holds no
    process), and in our own cgroup if it is the root, or if this worker is
    the only process in it, after moving itself into the leaf hardtests-worker.
    Whatever is missing falls back to rlimits and rusage.  The memory peak of
    one test needs memory.peak to be resettable per descriptor (Linux >= 6.12);
    before that the peak comes from rusage, while memory.max and the OOM count
    still apply.

Scheduling weight ("cpu-weight"): every batch is also a CPU cgroup of its own (v1: a
directory in the cpu hierarchy, which the runner joins at its start, so that its launcher,
zygote and every test are born in it; where cpu and cpuacct share a hierarchy the cpuacct
directory is that cgroup already; v2: the cpu controller, enabled like memory and pids).
Its weight is the harness's, set here: the default (cpu.shares 1024, cpu.weight 100, the
weight of one nice-0 task or session), or the least while a spare waits (`held_back`).
A task in a CPU cgroup other than the root is not scheduled by its session's autogroup,
so a program's write to /proc/self/autogroup moves nothing, and however many threads or
processes a test runs, they share that one weight.  hardtests-sandbox itself weighs one
default per CPU, so that one batch per CPU weighs as one nice-0 session each, as each
program did in an autogroup of its own.

HARDTESTS_SANDBOX_CGROUPS chooses: ``auto`` (default; v1 where writable, else
v2, else none), ``v1``, ``v2``, or ``0`` (rlimits and rusage only).  ``1`` is
read as ``auto``.  `accounting()` says what is in use.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

ENV = "HARDTESTS_SANDBOX_CGROUPS"
MODES = ("auto", "v1", "v2", "0")
SANDBOX_DIR = "hardtests-sandbox"
WORKER_LEAF = "hardtests-worker"

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
    # the file cache a test brought in, left out of its reported peak
    ("memory", "memory.stat", os.O_RDONLY),
)
# the hierarchy of the scheduling weight (v1); optional: without it the runner still refuses
# "starved" to a test that raised its autogroup's nice value
CPU_CONTROLLER = "cpu"
# v2 controllers we enable; CPU time needs none (cpu.stat's usage_usec is always there),
# the cpu controller gives each batch a scheduling weight of its own
V2_CONTROLLERS = ("memory", "pids", "cpu")
# the scheduling weight of a batch (one nice-0 task's), and of a spare that waits (the least)
V1_SHARES, V1_SHARES_HELD = 1024, 2
V2_WEIGHT, V2_WEIGHT_HELD = 100, 1
# order expected by hts-runner's -G option, each with the feature it needs (None: always)
V2_FD_FILES = (
    ("cgroup.procs", os.O_WRONLY, None),
    ("cpu.stat", os.O_RDONLY, None),
    ("cgroup.kill", os.O_WRONLY, "kill"),
    ("memory.peak", os.O_RDWR, "memory-peak"),
    ("memory.current", os.O_RDONLY, "memory-peak"),
    ("memory.events", os.O_RDONLY, "oom"),
    ("memory.stat", os.O_RDONLY, "memory-peak"),
)


@dataclass(frozen=True)
class Accounting:
    """Which cgroup accounting the sandbox uses, and what it covers."""

    version: str  # "v1", "v2" or "none"
    # what the cgroup provides: cpu, memory (limit), memory-peak, oom, pids, kill,
    # cpu-weight (a scheduling weight of the batch's own)
    features: frozenset[str] = frozenset()
    base: Path | None = None  # v2: the directory that holds the batch cgroups

    @property
    def bounds_memory(self) -> bool:
        return "memory" in self.features

    def describe(self) -> str:
        if self.version == "none":
            return "none (rlimits and rusage)"
        order = ("cpu", "memory", "memory-peak", "oom", "pids", "kill", "cpu-weight")
        text = f"{self.version} ({', '.join(f for f in order if f in self.features)})"
        missing = [f for f in ("memory", "pids") if f not in self.features]
        if missing:
            text += f"; rlimits and rusage for {' and '.join(missing)}"
        return text


NONE = Accounting("none")
V1_FEATURES = frozenset({"cpu", "memory", "memory-peak", "oom", "pids"})
_accounting: Accounting | None = None


def accounting() -> Accounting:
    """The accounting chosen by HARDTESTS_SANDBOX_CGROUPS, probed once per process."""
    global _accounting
    if _accounting is None:
        _accounting = _select(os.environ.get(ENV, "auto").strip().lower() or "auto")
        log.info("sandbox cgroup accounting: %s", _accounting.describe())
    return _accounting


def reset() -> None:
    """Forget the choice, so that the next batch probes again (after a change of the setting)."""
    global _accounting
    _accounting = None


def available() -> bool:
    return accounting().version != "none"


def _select(mode: str) -> Accounting:
    if mode == "1":
        mode = "auto"
    if mode not in MODES:
        log.warning("%s=%r is not one of %s; using auto", ENV, mode, ", ".join(MODES))
        mode = "auto"
    if mode == "0":
        return NONE
    if mode in ("auto", "v1") and all(_probe_v1(c) for c in CONTROLLERS):
        return Accounting("v1", V1_FEATURES | ({"cpu-weight"} if _probe_v1_cpu() else set()))
    if mode in ("auto", "v2"):
        found = _probe_v2()
        if found is not None:
            return found
    if mode != "auto":
        log.warning("%s=%s: no writable cgroup %s hierarchy; using rlimits and rusage", ENV, mode, mode)
    return NONE


def open_batch(memory_bytes: int, pids: int, *, held_back: bool = False) -> BatchCgroup | None:
    """The cgroup for a new batch, or None where cgroups are not used.  `held_back`: a spare
    that waits at a low priority, whose scheduling weight is the least until `set_limits`."""
    chosen = accounting()
    if chosen.version == "v1":
        return V1BatchCgroup(chosen, memory_bytes, pids, held_back=held_back)
    if chosen.version == "v2":
        return V2BatchCgroup(chosen, memory_bytes, pids, held_back=held_back)
    return None


def _weigh_base(path: Path, name: str, default: int, most: int) -> None:
    """hardtests-sandbox's own weight: one default per CPU (see the module's docstring)."""
    with contextlib.suppress(OSError):
        (path / name).write_text(str(min(most, default * max(1, os.cpu_count() or 1))))


# -- v1 ---------------------------------------------------------------------


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
    return V1_ROOT / controller / _own_path(controller).lstrip("/") / SANDBOX_DIR


def _same_hierarchy(one: str, other: str) -> bool:
    """Whether two v1 controllers are mounted together (cpu,cpuacct): one directory for both."""
    try:
        return os.path.samefile(V1_ROOT / one, V1_ROOT / other)
    except OSError:
        return False


def _probe_v1_cpu() -> bool:
    """Whether batches get a CPU cgroup of their own (v1): the cpu hierarchy, writable."""
    if not (V1_ROOT / CPU_CONTROLLER / "cpu.shares").exists() or not _probe_v1(CPU_CONTROLLER):
        return False
    _weigh_base(_base(CPU_CONTROLLER), "cpu.shares", V1_SHARES, 262144)
    return True


def _probe_v1(controller: str) -> bool:
    if not (V1_ROOT / controller / "cgroup.clone_children").exists():
        return False  # not a v1 hierarchy (on a v2 host this could be a cgroup that happens to have the name)
    try:
        base = _base(controller)
        base.mkdir(exist_ok=True)
        return os.access(base, os.W_OK) and (base / "cgroup.procs").exists()
    except OSError:
        return False


# -- v2 ---------------------------------------------------------------------


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def v2_own_dir() -> Path | None:
    """Our own cgroup in the unified hierarchy, as a directory, or None where there is none."""
    try:
        own = next(
            (
                line[3:]
                for line in Path("/proc/self/cgroup").read_text().splitlines()
                if line.startswith("0::")
            ),
            None,
        )
        mountinfo = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    if own is None or not own.startswith("/") or "/../" in f"{own}/" or own.endswith(" (deleted)"):
        return None
    mounts: list[tuple[str, str]] = []
    for line in mountinfo:
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if sep and right.split()[:1] == ["cgroup2"] and len(fields) >= 5:
            mounts.append((_unescape(fields[4]), _unescape(fields[3])))
    preferred = {"/sys/fs/cgroup": 0, "/sys/fs/cgroup/unified": 1}
    for point, root in sorted(mounts, key=lambda m: preferred.get(m[0], 2)):
        root = root.rstrip("/")
        if own != root and not own.startswith(f"{root}/"):
            continue  # this mount shows another part of the hierarchy
        path = Path(point) / own[len(root) :].lstrip("/")
        if path.name == WORKER_LEAF:
            path = path.parent  # we moved ourselves (or a parent worker did) into the leaf
        if (path / "cgroup.procs").exists():
            return path
    return None


def _words(path: Path) -> set[str]:
    try:
        return set(path.read_text().split())
    except OSError:
        return set()


def _enable(cgroup: Path, controllers: list[str]) -> bool:
    """Enable what we can in cgroup.subtree_control; False if processes in it forbid it (EBUSY)."""
    busy = False
    for name in controllers:
        try:
            (cgroup / "cgroup.subtree_control").write_text(f"+{name}")
        except OSError as exc:
            busy = busy or exc.errno == errno.EBUSY
            log.debug("cannot enable the %s controller in %s: %s", name, cgroup, exc)
    return not busy


def _alone_in(cgroup: Path) -> bool:
    return _words(cgroup / "cgroup.procs") == {str(os.getpid())}


def _probe_v2() -> Accounting | None:
    own = v2_own_dir()
    if own is None:
        return None
    wanted = [c for c in V2_CONTROLLERS if c in _words(own / "cgroup.controllers")]
    missing = [c for c in wanted if c not in _words(own / "cgroup.subtree_control")]
    if missing and not _enable(own, missing) and _alone_in(own):
        # a non-root cgroup with processes cannot enable controllers for its children;
        # when those processes are only us, a leaf of our own frees it
        try:
            leaf = own / WORKER_LEAF
            leaf.mkdir(exist_ok=True)
            (leaf / "cgroup.procs").write_text(str(os.getpid()))
            log.info("moved the sandbox worker into %s to enable %s below %s", leaf, ", ".join(missing), own)
            _enable(own, missing)
        except OSError as exc:
            log.info("cannot move the sandbox worker into a leaf cgroup: %s", exc)
    base = own / SANDBOX_DIR
    try:
        base.mkdir(exist_ok=True)
    except OSError:
        return None
    if not (
        os.access(base, os.W_OK)
        and os.access(own / "cgroup.procs", os.W_OK)
        and (base / "cgroup.procs").exists()
        and (base / "cpu.stat").exists()
    ):
        return None
    # no process lives in hardtests-sandbox, so it may hand down whatever it was given
    given = [c for c in wanted if c in _words(base / "cgroup.controllers")]
    _enable(base, [c for c in given if c not in _words(base / "cgroup.subtree_control")])
    enabled = _words(base / "cgroup.subtree_control")
    features = {"cpu"}
    if "cpu" in enabled:
        features.add("cpu-weight")
        _weigh_base(base, "cpu.weight", V2_WEIGHT, 10000)
    if (base / "cgroup.kill").exists():
        features.add("kill")
    if "memory" in enabled:
        features |= {"memory", "oom"}
        with contextlib.suppress(OSError):
            # writable from Linux 6.12: a write resets the peak seen through that descriptor
            if (base / "memory.peak").stat().st_mode & 0o200:
                features.add("memory-peak")
    if "pids" in enabled:
        features.add("pids")
    return Accounting("v2", frozenset(features), base)


# -- batches ------------------------------------------------------------------


def _remove(path: Path) -> None:
    # the runner's processes are gone, but the kernel may take a moment to release them
    # (usually well under a millisecond: short waits first, about half a second in all)
    delay = 0.0005
    for _ in range(60):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(delay)
            delay = min(delay * 2, 0.01)


class BatchCgroup:
    """One cgroup per batch; tests run in it one after another."""

    fds: list[int]
    bounds_memory = True
    limits: tuple[int, int] | None = None
    held_back = False

    def runner_args(self) -> list[str]:
        raise NotImplementedError

    def pids(self) -> list[int]:
        """Every process in the batch's cgroup now (empty when it cannot be read)."""
        found: list[int] = []
        for path in self._procs_files():
            with contextlib.suppress(OSError, ValueError):
                found += [int(x) for x in path.read_text().split()]
        return found

    def _procs_files(self) -> list[Path]:
        return []

    def set_limits(self, memory_bytes: int, pids: int) -> None:
        """The limits of the batch it now serves (a spare sandbox's cgroup is opened before its
        batch is known); a value that has not changed is not written again.  A spare held
        back gets the harness's scheduling weight here, before its batch's first test."""
        if (memory_bytes, pids) != self.limits:
            self._write_limits(memory_bytes, pids)
            self.limits = (memory_bytes, pids)
        if self.held_back:
            self._write_weight(held_back=False)
            self.held_back = False

    def _write_limits(self, memory_bytes: int, pids: int) -> None:
        raise NotImplementedError

    def _write_weight(self, *, held_back: bool) -> None:
        """The batch's scheduling weight, where it has a CPU cgroup: a failure to set it is an
        error (a batch must never run at a weight other than the harness's)."""

    def close(self) -> None:
        raise NotImplementedError

    def _close_fds(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []


class V1BatchCgroup(BatchCgroup):
    """One directory per controller."""

    def __init__(self, chosen: Accounting, memory_bytes: int, pids: int, *, held_back: bool = False) -> None:
        name = f"b-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.dirs = {c: _base(c) / name for c in CONTROLLERS}
        # the CPU cgroup: the cpuacct directory where both share a hierarchy, else one of its own
        self.cpu_dir: Path | None = None
        self.cpu_own = False
        if "cpu-weight" in chosen.features:
            self.cpu_own = not _same_hierarchy(CPU_CONTROLLER, "cpuacct")
            self.cpu_dir = _base(CPU_CONTROLLER) / name if self.cpu_own else self.dirs["cpuacct"]
        self.fds = []
        try:
            for path in self.dirs.values():
                path.mkdir()
            if self.cpu_own and self.cpu_dir is not None:
                self.cpu_dir.mkdir()
            with contextlib.suppress(OSError):
                (self.dirs["memory"] / "memory.swappiness").write_text("0")
            self._write_weight(held_back=held_back)
            self.held_back = held_back
            self.set_limits(memory_bytes, pids)
            for controller, filename, flags in FD_FILES:
                self.fds.append(os.open(self.dirs[controller] / filename, flags | os.O_CLOEXEC))
            if self.cpu_own and self.cpu_dir is not None:
                # the runner joins it at its start (hts-runner's ninth -g descriptor)
                self.fds.append(os.open(self.cpu_dir / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            self.close()
            raise

    def _write_weight(self, *, held_back: bool) -> None:
        if self.cpu_dir is not None:
            (self.cpu_dir / "cpu.shares").write_text(str(V1_SHARES_HELD if held_back else V1_SHARES))

    def _write_limits(self, memory_bytes: int, pids: int) -> None:
        mem = self.dirs["memory"]
        swap = mem / "memory.memsw.limit_in_bytes"
        # no swap either, so the limit is real memory; memsw may never be below the memory
        # limit, so it is written after the memory limit going down, before it going up
        raising = self.limits is not None and memory_bytes > self.limits[0]
        if raising and swap.exists():
            with contextlib.suppress(OSError):
                swap.write_text(str(memory_bytes))
        (mem / "memory.limit_in_bytes").write_text(str(memory_bytes))
        if not raising and swap.exists():
            with contextlib.suppress(OSError):
                swap.write_text(str(memory_bytes))
        (self.dirs["pids"] / "pids.max").write_text(str(pids))

    def runner_args(self) -> list[str]:
        return ["-g", ",".join(str(fd) for fd in self.fds)]

    def _procs_files(self) -> list[Path]:
        return [self.dirs["pids"] / "cgroup.procs"]

    def close(self) -> None:
        self._close_fds()
        for path in self.dirs.values():
            _remove(path)
        if self.cpu_own and self.cpu_dir is not None:
            _remove(self.cpu_dir)


class V2BatchCgroup(BatchCgroup):
    """One directory in the unified hierarchy, with whatever controllers it was given."""

    def __init__(self, chosen: Accounting, memory_bytes: int, pids: int, *, held_back: bool = False) -> None:
        assert chosen.base is not None
        self.features = chosen.features
        self.bounds_memory = "memory" in self.features
        self.path = chosen.base / f"b-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.fds = []
        self.slots: list[int] = []
        self.kill_fd = -1
        self.path.mkdir()
        try:
            if "memory" in self.features:
                with contextlib.suppress(OSError):
                    # no swap either, so the limit is real memory
                    (self.path / "memory.swap.max").write_text("0")
            self._write_weight(held_back=held_back)
            self.held_back = held_back
            self.set_limits(memory_bytes, pids)
            for filename, flags, needs in V2_FD_FILES:
                if needs is not None and needs not in self.features:
                    self.slots.append(-1)
                    continue
                fd = os.open(self.path / filename, flags | os.O_CLOEXEC)
                self.fds.append(fd)
                self.slots.append(fd)
                if filename == "cgroup.kill":
                    self.kill_fd = fd
        except OSError:
            self.close()
            raise

    def _write_limits(self, memory_bytes: int, pids: int) -> None:
        if "memory" in self.features:
            (self.path / "memory.max").write_text(str(memory_bytes))
        if "pids" in self.features:
            (self.path / "pids.max").write_text(str(pids))

    def _write_weight(self, *, held_back: bool) -> None:
        if "cpu-weight" in self.features:
            (self.path / "cpu.weight").write_text(str(V2_WEIGHT_HELD if held_back else V2_WEIGHT))

    def runner_args(self) -> list[str]:
        return ["-G", ",".join(str(fd) for fd in self.slots)]

    def _procs_files(self) -> list[Path]:
        return [self.path / "cgroup.procs"]

    def close(self) -> None:
        if self.kill_fd >= 0:
            # nothing should be left (the runner kills each test's leftovers), but if the
            # runner itself died mid-test, its test must not outlive the batch
            with contextlib.suppress(OSError):
                os.write(self.kill_fd, b"1")
            self.kill_fd = -1
        self._close_fds()
        _remove(self.path)
