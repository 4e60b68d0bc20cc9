"""On-disk cache shared by all workers: compiled programs, the C runner, PCH.

Entries are built in a private temporary directory and published with an
atomic rename, so a reader never sees a half-written entry; a per-key lock
file only avoids doing the same work twice when workers race.

The compiled programs and PCH are bounded: HARDTESTS_COMPILE_CACHE_MAX_MB
(default 2048) in all, evicted least recently used first at every publish, and
no single build over HARDTESTS_COMPILE_MAX_ARTIFACT_MB (default 256) or over the
cache's own cap is kept: it becomes a CE.  Eviction is the mirror of publishing:
an entry is renamed out of the cache first (atomic, so a reader sees all of it
or nothing), then deleted; one worker at a time evicts (a file lock).  A batch
never runs an entry in place: it binds hard links of its files made for it
(`batch_view`), so an entry evicted while the batch runs goes on existing for
it.  A running total kept beside the locks tells a publish whether to scan.

The cache lives under $HARDTESTS_SANDBOX_CACHE, else $HARDTESTS_VAR_DIR/sandbox-cache,
else the checkout's var/sandbox-cache.  Nothing is bound into a sandbox from there:
/proc/self/mountinfo shows each bind's path within its filesystem, which would name
the installation.  Sandboxes bind from `neutral_root()` instead, a directory named
after nothing of the installation (hard links on the cache's filesystem, copies on
/dev/shm where no such directory shares it), or in $HARDTESTS_SANDBOX_WORK_DIR when set.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import dataclasses
import errno
import fcntl
import functools
import hashlib
import json
import os
import shutil
import stat as stat_mod
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from .types import SandboxUnavailable

RUNNER_SOURCE = Path(__file__).with_name("runner.c")
# beside the runner in its directory (bound read-only into every sandbox): what it includes
# and the Python zygote it starts for -Z
RUNNER_PARTS = ("runner_zygote.h", "wipe_tree.h", "zygote.py")
# every library call resolved when the runner starts (once per batch), not at its first call in
# each test's init and program process (a symbol lookup and a copy-on-write fault each, per test)
RUNNER_FLAGS = ("-O2", "-Wall", "-Wl,-z,now")
NOBODY = 65534
MB = 1024 * 1024
MAX_MB_ENV = "HARDTESTS_COMPILE_CACHE_MAX_MB"
MAX_ARTIFACT_MB_ENV = "HARDTESTS_COMPILE_MAX_ARTIFACT_MB"
DEFAULT_MAX_MB = 2048
DEFAULT_MAX_ARTIFACT_MB = 256
# the kinds eviction may remove; our own tools (runner, hts-dock) are tiny and always needed
EVICTABLE = ("prog", "pch")
# an entry used this recently is evicted only when the cap cannot be met otherwise (running
# batches hold links of their own, see batch_view; this keeps a just compiled program for
# the run that follows its compile)
EVICT_GRACE_S = 600.0
NEUTRAL_PREFIX = "hardtests-sandbox-"
# the parent of the neutral directory, chosen by the operator (a disk of its own, a mount point
# whose path names nothing); empty: found as below
WORK_DIR_ENV = "HARDTESTS_SANDBOX_WORK_DIR"


def cache_root() -> Path:
    return _cache_root(os.environ.get("HARDTESTS_SANDBOX_CACHE"), os.environ.get("HARDTESTS_VAR_DIR"))


@functools.lru_cache(maxsize=8)
def _cache_root(env: str | None, var: str | None) -> Path:
    # once per setting, not on each of the 3-4 lookups of every verification (0.2 ms of CPU)
    if env:
        root = Path(env)
    elif var:
        root = Path(var) / "sandbox-cache"
    else:
        root = Path(__file__).resolve().parent.parent / "var" / "sandbox-cache"
    root.mkdir(parents=True, exist_ok=True, mode=0o755)
    return root


def neutral_root() -> Path:
    """Where everything bound into a sandbox comes from: a directory whose path names nothing
    of the installation, on the cache's filesystem where one of the usual scratch
    directories shares it (hard links and renames then work), else on /dev/shm."""
    root = cache_root()
    return _neutral_root(str(root), os.geteuid(), os.environ.get(WORK_DIR_ENV, ""))


@functools.cache
def _neutral_root(root: str, uid: int, chosen: str = "") -> Path:
    dev = os.stat(root).st_dev
    name = f"{NEUTRAL_PREFIX}{uid}-{key_of(root)[:10]}"
    if chosen:
        with contextlib.suppress(OSError):
            Path(chosen).mkdir(parents=True, exist_ok=True, mode=0o755)
        path = _own_dir(Path(chosen) / name, uid)
        if path is None:
            raise SandboxUnavailable(f"{WORK_DIR_ENV}={chosen}: cannot make a private directory {name} there")
        if not _allows_exec(path):
            raise SandboxUnavailable(f"{WORK_DIR_ENV}={chosen} is on a filesystem mounted noexec: "
                                     "programs bound from there cannot run; choose a directory that allows exec")
        return path
    candidates = [Path("/var/tmp"), Path(tempfile.gettempdir()), Path("/tmp"), MEMORY_SCRATCH]
    same = [c for c in candidates if _usable(c) and os.stat(c).st_dev == dev and not _names_checkout(c)]
    for parent in [*same, MEMORY_SCRATCH, Path(tempfile.gettempdir())]:
        if not _usable(parent):
            continue
        path = _own_dir(parent / name, uid)
        if path is not None:
            return path
    raise SandboxUnavailable(f"no private directory for the sandboxes' binds (tried {name} in /var/tmp, /tmp, "
                             f"/dev/shm: each must be writable and allow exec; or set {WORK_DIR_ENV})")


def memory_root() -> Path:
    """The neutral directory on /dev/shm (tmpfs) where there is one, else neutral_root():
    a batch's copy of its program costs no disk journal there (hard links and their removal
    on a loaded ext4 took 14 ms of wall time a batch)."""
    root = str(cache_root())
    uid = os.geteuid()
    found = _memory_root(root, uid) if _usable(MEMORY_SCRATCH) else None
    return found or _neutral_root(root, uid, os.environ.get(WORK_DIR_ENV, ""))


@functools.cache
def _memory_root(root: str, uid: int) -> Path | None:
    return _own_dir(MEMORY_SCRATCH / f"{NEUTRAL_PREFIX}{uid}-{key_of(root)[:10]}", uid)


def _own_dir(path: Path, uid: int) -> Path | None:
    """`path` made (or found) as a directory of ours that nobody else may write, else None."""
    with contextlib.suppress(FileExistsError, OSError):
        path.mkdir(mode=0o755)
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        # a world-writable parent: someone else may have made it first, or a symlink
        if stat_mod.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o022:
            path.chmod(0o755)
            return path
    return None


def _usable(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK) and _allows_exec(path)


def _allows_exec(path: Path) -> bool:
    """Whether programs may run from `path`'s filesystem: a bind of a file from a noexec mount
    stays noexec inside the sandbox (Docker's /dev/shm, hardened hosts' /tmp), and every
    program bound from there would fail to start."""
    try:
        return not os.statvfs(path).f_flag & os.ST_NOEXEC
    except OSError:
        return False


def _names_checkout(path: Path) -> bool:
    checkout = str(Path(__file__).resolve().parent.parent)
    return str(path.resolve()).startswith(checkout)


def link_tree(source: Path, target: Path) -> None:
    """Hard links to every file under `source` in `target` (copies across filesystems)."""
    for dirpath, dirnames, filenames in os.walk(source):
        here = target / os.path.relpath(dirpath, source)
        for name in dirnames:
            (here / name).mkdir(mode=0o755)
        for name in filenames:
            link_file(os.path.join(dirpath, name), here / name)


def link_file(source: str | Path, target: str | Path) -> None:
    """A hard link to `source` at `target` (a copy across filesystems)."""
    try:
        os.link(source, target)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM):
            raise
        shutil.copy2(source, target)


def batch_view(entry: Path) -> Path:
    """A private copy of a cache entry (a compiled program: at most a compile's 16 MB file
    limit) for one batch to bind, on /dev/shm where it can be: the entry may be evicted while
    the batch runs; the caller removes the view when the batch ends."""
    return _filled_dir(memory_root(), "v-", lambda view: link_tree(entry, view))


def _filled_dir(parent: Path | None, prefix: str, fill: Callable[[Path], None]) -> Path:
    """A new private directory under `parent`, filled by `fill`; removed again if that fails."""
    made = make_private_dir(parent, prefix=prefix)
    try:
        fill(made)
    except BaseException:
        shutil.rmtree(made, ignore_errors=True)
        raise
    return made


K = TypeVar("K")
V = TypeVar("V")


class _KeptDirs(Generic[K, V]):
    """Directories this process keeps, by key, most recently used last (`items`, under `lock`):
    removed when the process exits; a forked child starts with none (they are its parent's)."""

    def __init__(self, path_of: Callable[[V], Path]) -> None:
        self.lock = threading.Lock()
        self.items: collections.OrderedDict[K, V] = collections.OrderedDict()
        self._path_of = path_of
        atexit.register(self.drop)
        os.register_at_fork(after_in_child=self.forget)

    def drop(self) -> None:
        with self.lock:
            for value in self.items.values():
                shutil.rmtree(self._path_of(value), ignore_errors=True)
            self.items.clear()

    def forget(self) -> None:
        self.lock = threading.Lock()
        self.items.clear()


# Programs a batch binds come from a copy of their cache entry on /dev/shm made once per process
# (a batch then links it, where it copied the entry: 0.3-1.4 ms of a batch's start, on the
# verification's path); the most recent few are kept.
MIRRORS_KEPT = 8
_mirrors: _KeptDirs[Path, Path] = _KeptDirs(lambda mirror: mirror)


def link_program(entry: Path, target: Path) -> None:
    """Links in `target` (a batch's program directory) to a private copy of the cache entry
    `entry` on `target`'s filesystem (memory_root()), copied once per process.

    The copy is this process's own: the cache's eviction never pulls it from under a batch,
    and no path of the installation is in it. Batches of one program share its files, which
    they bind read-only: a file on tmpfs is always resident and a read-only mount changes no
    time stamp, so nothing of one batch reaches another through them.

    An `entry` already beside `target` (a caller's own directory on memory_root(): a new
    Python program's source, written there for one verification) is linked from directly:
    only its caller removes it, the links outlive that, and a copy of it would be made and
    evicted for every new program (0.3-0.5 ms of its first test's path)."""
    if entry.parent == target.parent:
        link_tree(entry, target)
        return
    with _mirrors.lock:
        mirrors = _mirrors.items
        mirror = mirrors.get(entry)
        if mirror is None or not mirror.is_dir() or mirror.parent != target.parent:
            mirror = _filled_dir(target.parent, "m-", lambda made: link_tree(entry, made))
            mirrors[entry] = mirror
        mirrors.move_to_end(entry)
        while len(mirrors) > MIRRORS_KEPT:
            shutil.rmtree(mirrors.popitem(last=False)[1], ignore_errors=True)
        link_tree(mirror, target)


def program_view(entry: Path) -> Path:
    """A batch's own directory of links to its program (see link_program); the caller removes it."""
    return _filled_dir(memory_root(), "v-", lambda view: link_program(entry, view))


# A set of inputs a caller names (judging: a suite's inputs, by their digest) is written once per
# process and kept for the next batches that read it: writing a 40-test suite's inputs took each
# lane 2-3 ms of every verification, on its path. Batches bind it read-only (a spare links it into
# a directory of its own); entries in use are never removed.
INPUTS_KEPT = 16
INPUTS_KEPT_BYTES = 128 * MB


@dataclasses.dataclass
class _Inputs:
    path: Path
    size: int
    users: int = 0


_inputs: _KeptDirs[str, _Inputs] = _KeptDirs(lambda kept: kept.path)


def _write_inputs(target: Path, raw: Sequence[bytes]) -> None:
    for index, data in enumerate(raw):
        (target / str(index)).write_bytes(data)


def inputs_write(raw: Sequence[bytes]) -> Path:
    """A new private directory holding input i as file `i` (the caller removes it)."""
    return _filled_dir(inputs_parent(sum(map(len, raw))), "hts-", lambda made: _write_inputs(made, raw))


def inputs_acquire(key: str, raw: Sequence[bytes]) -> Path:
    """The directory of `raw` (input i as file `i`) kept under `key` (the caller vouches that one
    key names one content), written now if this process has not kept it; inputs_release(key)
    when the batch is over."""
    with _inputs.lock:
        kept = _inputs.items.get(key)
        if kept is not None and kept.users == 0 and not kept.path.is_dir():
            del _inputs.items[key]  # removed under us (a cleaned /dev/shm): written again below
        elif kept is not None:
            kept.users += 1
            _inputs.items.move_to_end(key)
            return kept.path
    made = inputs_write(raw)  # outside the lock: another suite's batch need not wait for it
    with _inputs.lock:
        kept = _inputs.items.get(key)
        if kept is None:
            kept = _inputs.items[key] = _Inputs(made, sum(map(len, raw)))
        else:
            shutil.rmtree(made, ignore_errors=True)  # another lane wrote the same meanwhile
        kept.users += 1
        _inputs.items.move_to_end(key)
        _inputs_evict()
        return kept.path


def inputs_release(key: str) -> None:
    with _inputs.lock:
        kept = _inputs.items.get(key)
        if kept is not None:
            kept.users = max(0, kept.users - 1)
        _inputs_evict()


def _inputs_evict() -> None:
    """Under the lock: remove the least recently used entries no batch reads, past the budget."""
    kept_sets = _inputs.items
    total = sum(kept.size for kept in kept_sets.values())
    for key in list(kept_sets):
        if len(kept_sets) <= INPUTS_KEPT and total <= INPUTS_KEPT_BYTES:
            return
        kept = kept_sets[key]
        if kept.users == 0:
            del kept_sets[key]
            total -= kept.size
            shutil.rmtree(kept.path, ignore_errors=True)


def tool_view(entry: Path) -> Path:
    """A lasting view of one of our own tools (the runner, hts-dock: never evicted) or of a
    precompiled header (about 100 MB: linked, not copied per compile; an evicted header's
    view stays until the next boot's /tmp cleaning, or until removed by hand)."""
    view = neutral_root() / f"{entry.parent.name}-{entry.name}"
    if view.is_dir():
        return view
    fresh = make_private_dir(neutral_root(), prefix=".new-")
    link_tree(entry, fresh)
    try:
        os.rename(fresh, view)
    except OSError:
        shutil.rmtree(fresh, ignore_errors=True)
        if not view.is_dir():
            raise
    return view


def key_of(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()[:40]


# a compiler's fingerprint is looked at again after this long: every verification asks (the
# cache key of its program), and the PATH walk and stats cost ~0.3 ms of CPU each time
FINGERPRINT_TTL_S = 5.0
_fingerprints: dict[str, tuple[float, str]] = {}


def tool_fingerprint(path: str) -> str:
    """Identifies an installed compiler without running it (an upgrade changes it within
    FINGERPRINT_TTL_S)."""
    now = time.monotonic()
    known = _fingerprints.get(path)
    if known is not None and now - known[0] < FINGERPRINT_TTL_S:
        return known[1]
    real = os.path.realpath(shutil.which(path) or path)
    try:
        st = os.stat(real)
        found = f"{real}:{st.st_size}:{int(st.st_mtime)}"
    except OSError:
        found = f"{real}:missing"
    _fingerprints[path] = (now, found)
    return found


def sandbox_uid() -> int | None:
    """Host uid the sandboxes run as: never root, so a kernel escape lands as nobody."""
    return NOBODY if os.geteuid() == 0 else None


def make_private_dir(parent: Path | None = None, *, writable_by_sandbox: bool = False, prefix: str = "hts-") -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    uid = sandbox_uid()
    if uid is not None:
        # the sandbox runs as nobody and must read (or, for builds, write) it
        if writable_by_sandbox:
            os.chown(path, uid, uid)
        else:
            path.chmod(0o755)
    return path


MEMORY_SCRATCH = Path("/dev/shm")


def inputs_parent(total_bytes: int) -> Path | None:
    """Where a batch's inputs are written: a memory filesystem when it has room for them
    (creating and deleting a file per test on ext4 cost ~0.3 ms a test, a fifth of the
    sandbox's overhead), else the default temporary directory."""
    try:
        st = os.statvfs(MEMORY_SCRATCH)
    except OSError:
        return neutral_root()
    free = st.f_bavail * st.f_frsize
    return MEMORY_SCRATCH if os.access(MEMORY_SCRATCH, os.W_OK) and free > 4 * total_bytes + 64 * MB else neutral_root()


def _restore_owner(path: Path) -> None:
    if os.geteuid() != 0:
        return
    for dirpath, dirnames, filenames in os.walk(path):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), 0, 0)
    os.chown(path, 0, 0)
    path.chmod(0o755)


@contextlib.contextmanager
def key_lock(kind: str, key: str) -> Iterator[None]:
    lock_dir = cache_root() / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / f"{kind}-{key}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _env_mb(name: str, default: int) -> int:
    try:
        value = int(os.environ.get(name, "") or default)
    except ValueError:
        return default
    return max(value, 1)


def max_cache_bytes() -> int:
    return _env_mb(MAX_MB_ENV, DEFAULT_MAX_MB) * MB


def max_artifact_bytes() -> int:
    """The largest compiled program kept (the same cap serves any backend's compile)."""
    return _env_mb(MAX_ARTIFACT_MB_ENV, DEFAULT_MAX_ARTIFACT_MB) * MB


def tree_size(path: Path) -> int:
    total = 0
    for dirpath, _, filenames in os.walk(path):
        for name in filenames:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def entry_path(kind: str, key: str) -> Path:
    """Where an entry lives; looking it up counts as a use (its mtime orders eviction)."""
    path = cache_root() / kind / key
    with contextlib.suppress(OSError):
        os.utime(path)
    return path


def publish(kind: str, key: str, build_dir: Path) -> Path:
    """Atomically move a finished build into the cache; the first writer wins."""
    final = entry_path(kind, key)
    final.parent.mkdir(parents=True, exist_ok=True)
    _restore_owner(build_dir)
    if os.stat(build_dir).st_dev != os.stat(final.parent).st_dev:
        # built on /dev/shm (no neutral directory on the cache's filesystem): copied over first
        moved = make_private_dir(staging_dir())
        shutil.copytree(build_dir, moved, dirs_exist_ok=True, symlinks=True)
        shutil.rmtree(build_dir, ignore_errors=True)
        build_dir = moved
    try:
        os.rename(build_dir, final)
    except OSError:
        if not final.exists():
            raise
        shutil.rmtree(build_dir, ignore_errors=True)
    if kind in EVICTABLE and _add_usage(_entry_size(final)) > max_cache_bytes():
        evict(keep=final)
    return final


def _add_usage(delta: int, *, exact: int | None = None) -> int:
    """The running total of the evictable entries' sizes, so that a publish need not scan the cache.

    Kept in a file under a lock; it may drift (entries removed by hand, races with a
    scan) and every eviction scan sets it right again.
    """
    lock_dir = cache_root() / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / "usage", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        text = handle.read().strip()
        if exact is not None:
            total = exact
        elif text.isdigit():
            total = int(text) + delta
        else:
            total = sum(size for _, size, _ in _scan())  # first use: measure what is there
        handle.seek(0)
        handle.truncate()
        handle.write(str(max(total, 0)))
    return total


def _scan() -> list[tuple[float, int, Path]]:
    entries: list[tuple[float, int, Path]] = []
    for kind in EVICTABLE:
        with contextlib.suppress(FileNotFoundError):
            for path in (cache_root() / kind).iterdir():
                with contextlib.suppress(OSError):
                    entries.append((path.stat().st_mtime, _entry_size(path), path))
    return entries


def _entry_size(path: Path) -> int:
    """A program's size is in its meta.json (no extra file in the entry); anything else is measured."""
    meta = read_meta(path)
    size = meta.get("size") if meta is not None else None
    if isinstance(size, int):
        return size
    return tree_size(path)


def evict(max_bytes: int | None = None, *, grace_s: float | None = None, keep: Path | None = None) -> int:
    """Remove least recently used entries until the cache fits in max_bytes; bytes freed.

    Stops at 90% of the cap so that every publish does not evict again (entries used
    within `grace_s` go only as far as the cap needs).
    """
    limit = max_cache_bytes() if max_bytes is None else max_bytes
    grace = EVICT_GRACE_S if grace_s is None else grace_s
    root = cache_root()
    lock_dir = root / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    freed = 0
    # one evictor at a time, and the next one looks again after it: the cap holds when
    # every publish returns, not eventually
    with open(lock_dir / "evict.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        entries = _scan()
        total = sum(size for _, size, _ in entries)
        if total <= limit:
            _add_usage(0, exact=total)
            return 0
        trash = root / "staging"
        trash.mkdir(exist_ok=True)
        now = time.time()
        # the cap holds after every publish: entries used within the grace go too, last,
        # when the older ones are not enough (running batches hold links of their own)
        ordered = sorted(entries, key=lambda e: (now - e[0] < grace, e[0]))
        for used, size, path in ordered:
            if total - freed <= (0.9 * limit if now - used >= grace else limit):
                break
            if path == keep:
                continue  # its publisher is about to use it
            target = trash / f"evicted-{uuid.uuid4().hex}"
            try:
                os.rename(path, target)  # gone for readers in one step
            except OSError:
                continue  # evicted by someone else, or republished meanwhile
            shutil.rmtree(target, ignore_errors=True)
            freed += size
        _add_usage(0, exact=total - freed)
    return freed


def read_meta(path: Path) -> dict[str, Any] | None:
    try:
        meta: dict[str, Any] = json.loads((path / "meta.json").read_text())
        return meta
    except (OSError, ValueError):
        return None


def write_meta(path: Path, meta: dict[str, Any]) -> None:
    """Record a finished build; a build over the artifact cap becomes a CE here.

    `meta` is updated in place, so that the caller reports what the cache holds.
    """
    size = tree_size(path)
    # an entry the cache could not keep within its cap is not kept at all
    cap = min(max_artifact_bytes(), max_cache_bytes())
    if meta.get("verdict") == "OK" and size > cap:
        for child in path.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
        meta["verdict"] = "CE"
        meta["message"] = (f"the compiled program is {size / MB:.1f} MB, over the {cap / MB:.0f} MB "
                           f"limit ({MAX_ARTIFACT_MB_ENV}, {MAX_MB_ENV})")
        size = 0
    meta["size"] = size
    (path / "meta.json").write_text(json.dumps(meta))


def staging_dir() -> Path:
    """Where builds are made before they are published (the cache's own filesystem)."""
    staging = cache_root() / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    return staging


def build_dir() -> Path:
    """A compile's directory, bound writable into its sandbox: under the neutral root."""
    return make_private_dir(neutral_root(), writable_by_sandbox=True)


def tool_dir(source_path: Path, binary: str, parts: tuple[str, ...] = ()) -> Path:
    """A directory holding one of our own C helpers, built once per version of its source and of
    the files beside it that it includes (`parts`)."""
    source = source_path.read_bytes()
    included = [source_path.with_name(name).read_bytes() for name in parts]
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise SandboxUnavailable("a C compiler is needed to build the sandbox runner: apt-get install gcc")
    key = key_of(binary, source, *included, tool_fingerprint(cc))
    kind = "tools"
    final = entry_path(kind, key)
    if (final / binary).exists():
        return final
    with key_lock(kind, key):
        if (final / binary).exists():
            return final
        staging = build_dir()
        proc = subprocess.run(
            [cc, "-O2", "-Wall", "-o", str(staging / binary), str(source_path)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise SandboxUnavailable(f"cannot build {binary}: {proc.stderr.strip()}")
        return publish(kind, key, staging)


def runner_dir() -> Path:
    """The C runner, compiled once per source version with the host's gcc (trusted code), and
    the Python zygote beside it."""
    source = RUNNER_SOURCE.read_bytes()
    parts = [(name, RUNNER_SOURCE.with_name(name).read_bytes()) for name in RUNNER_PARTS]
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise SandboxUnavailable("a C compiler is needed to build the sandbox runner: apt-get install gcc")
    key = key_of("runner", source, *(data for _, data in parts), tool_fingerprint(cc), " ".join(RUNNER_FLAGS))
    final = entry_path("runner", key)
    if (final / "hts-runner").exists():
        return final
    with key_lock("runner", key):
        if (final / "hts-runner").exists():
            return final
        staging = build_dir()
        proc = subprocess.run(
            [cc, *RUNNER_FLAGS, "-o", str(staging / "hts-runner"), str(RUNNER_SOURCE)],
            capture_output=True,
            text=True,
        )
        if proc.returncode == 0:
            # the same code as a library, for the Python zygote's program processes
            proc = subprocess.run(
                [cc, "-O2", "-Wall", "-Wno-unused-function", "-Wno-unused-const-variable", "-shared", "-fPIC",
                 "-DHTS_LIBRARY", "-o", str(staging / "hts-zygote.so"), str(RUNNER_SOURCE)],
                capture_output=True,
                text=True,
            )
        if proc.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise SandboxUnavailable(f"cannot build the sandbox runner: {proc.stderr.strip()}")
        (staging / "zygote.py").write_bytes(dict(parts)["zygote.py"])
        (staging / "zygote.py").chmod(0o644)
        return publish("runner", key, staging)
