"""On-disk cache shared by all workers: compiled programs, the C runner, PCH.

Entries are built in a private temporary directory and published with an
atomic rename, so a reader never sees a half-written entry; a per-key lock
file only avoids doing the same work twice when workers race.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .types import SandboxUnavailable

RUNNER_SOURCE = Path(__file__).with_name("runner.c")
NOBODY = 65534


def cache_root() -> Path:
    env = os.environ.get("HARDTESTS_SANDBOX_CACHE")
    root = Path(env) if env else Path(__file__).resolve().parent.parent / "var" / "sandbox-cache"
    root.mkdir(parents=True, exist_ok=True, mode=0o755)
    return root


def key_of(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()[:40]


def tool_fingerprint(path: str) -> str:
    """Identifies an installed compiler without running it (an upgrade changes it)."""
    real = os.path.realpath(shutil.which(path) or path)
    try:
        st = os.stat(real)
    except OSError:
        return f"{real}:missing"
    return f"{real}:{st.st_size}:{int(st.st_mtime)}"


def sandbox_uid() -> int | None:
    """Host uid the sandboxes run as: never root, so a kernel escape lands as nobody."""
    return NOBODY if os.geteuid() == 0 else None


def make_private_dir(parent: Path | None = None, *, writable_by_sandbox: bool = False) -> Path:
    path = Path(tempfile.mkdtemp(prefix="hts-", dir=parent))
    uid = sandbox_uid()
    if uid is not None:
        # the sandbox runs as nobody and must read (or, for builds, write) it
        if writable_by_sandbox:
            os.chown(path, uid, uid)
        else:
            path.chmod(0o755)
    return path


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
    lock_dir.mkdir(exist_ok=True)
    with open(lock_dir / f"{kind}-{key}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def entry_path(kind: str, key: str) -> Path:
    return cache_root() / kind / key


def publish(kind: str, key: str, build_dir: Path) -> Path:
    """Atomically move a finished build into the cache; the first writer wins."""
    final = entry_path(kind, key)
    final.parent.mkdir(parents=True, exist_ok=True)
    _restore_owner(build_dir)
    try:
        os.rename(build_dir, final)
    except OSError:
        if not final.exists():
            raise
        shutil.rmtree(build_dir, ignore_errors=True)
    return final


def read_meta(path: Path) -> dict | None:
    try:
        return json.loads((path / "meta.json").read_text())
    except (OSError, ValueError):
        return None


def write_meta(path: Path, meta: dict) -> None:
    (path / "meta.json").write_text(json.dumps(meta))


def build_dir() -> Path:
    staging = cache_root() / "staging"
    staging.mkdir(exist_ok=True)
    return make_private_dir(staging, writable_by_sandbox=True)


def tool_dir(source_path: Path, binary: str) -> Path:
    """A directory holding one of our own C helpers, built once per source version."""
    source = source_path.read_bytes()
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise SandboxUnavailable("a C compiler is needed to build the sandbox runner: apt-get install gcc")
    key = key_of(binary, source, tool_fingerprint(cc))
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
    """The C runner, compiled once per source version with the host's gcc (trusted code)."""
    source = RUNNER_SOURCE.read_bytes()
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise SandboxUnavailable("a C compiler is needed to build the sandbox runner: apt-get install gcc")
    key = key_of("runner", source, tool_fingerprint(cc))
    final = entry_path("runner", key)
    if (final / "hts-runner").exists():
        return final
    with key_lock("runner", key):
        if (final / "hts-runner").exists():
            return final
        staging = build_dir()
        proc = subprocess.run(
            [cc, "-O2", "-Wall", "-o", str(staging / "hts-runner"), str(RUNNER_SOURCE)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise SandboxUnavailable(f"cannot build the sandbox runner: {proc.stderr.strip()}")
        return publish("runner", key, staging)
