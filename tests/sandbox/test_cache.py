"""The compile cache stays under its size cap, least recently used first, safely under concurrency."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import Limits, Sandbox, SandboxUnavailable, Verdict, base, cache, languages
from tests.sandbox.conftest import mounted_tmpfs

KB = 1024


@pytest.fixture
def cache_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # not below pytest's private tmp_path: the sandbox user must reach the build directories
    root = Path(tempfile.mkdtemp(prefix="hts-cache-test-"))
    root.chmod(0o755)
    monkeypatch.setenv("HARDTESTS_SANDBOX_CACHE", str(root / "cache"))
    monkeypatch.setenv(cache.MAX_MB_ENV, "1")
    monkeypatch.setattr(cache, "EVICT_GRACE_S", 0.0)
    yield root / "cache"
    shutil.rmtree(root, ignore_errors=True)


def add_entry(key: str, size: int) -> Path:
    build = cache.build_dir()
    (build / "a.out").write_bytes(os.urandom(size))
    cache.write_meta(build, {"verdict": "OK", "message": ""})
    return cache.publish("prog", key, build)


def entries(root: Path) -> dict[str, int]:
    return {p.name: cache.tree_size(p) for p in (root / "prog").iterdir()}


def test_least_recently_used_entries_go_first(cache_dir: Path) -> None:
    for i in range(3):
        path = add_entry(f"k{i}", 300 * KB)
        os.utime(path, (time.time() - 1000 + i, time.time() - 1000 + i))  # k0 oldest
    cache.entry_path("prog", "k0")  # a lookup is a use: k0 is now the most recent
    add_entry("k3", 300 * KB)  # 1.2 MB > 1 MB: the least recently used (k1) goes
    kept = entries(cache_dir)
    assert sorted(kept) == ["k0", "k2", "k3"]
    assert sum(kept.values()) <= 1024 * KB
    assert cache.read_meta(cache_dir / "prog" / "k0") == {"verdict": "OK", "message": "", "size": 300 * KB}
    # nothing evicted is left lying around
    assert [p.name for p in (cache_dir / "staging").iterdir()] == []


def test_the_cap_holds_at_every_insert_even_for_recent_entries(cache_dir: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "EVICT_GRACE_S", 600.0)
    for i in range(5):
        add_entry(f"k{i}", 300 * KB)
        # every entry was used just now: the cap holds all the same, the oldest going first
        assert sum(entries(cache_dir).values()) <= 1024 * KB
    assert sorted(entries(cache_dir)) == ["k2", "k3", "k4"]


def test_a_batch_view_outlives_the_eviction_of_its_entry(cache_dir: Path) -> None:
    entry = add_entry("k0", 300 * KB)
    view = cache.batch_view(entry)
    try:
        for i in range(1, 5):
            add_entry(f"k{i}", 300 * KB)
        assert not entry.exists()
        # a running batch binds its own links: its program is still all there
        assert (view / "a.out").stat().st_size == 300 * KB
        assert view.parent in (cache.memory_root(), cache.neutral_root())
        assert str(Path(cache.__file__).resolve().parents[1]) not in str(view)
    finally:
        shutil.rmtree(view)


def test_a_source_beside_the_batch_s_directory_is_linked_and_a_cache_entry_is_mirrored(cache_dir: Path) -> None:
    """A new Python program's source, written on the memory root for one verification, is
    linked into the batch's directory from where it is (no copy of this process's own is made
    and evicted for every new program); a cache entry elsewhere still gets its private copy,
    which the cache's eviction cannot pull from under a batch."""
    source = cache.make_private_dir(cache.memory_root())
    targets = [cache.make_private_dir(cache.memory_root()) for _ in range(2)]
    try:
        (source / "main.py").write_text("print(1)\n")
        kept = dict(cache._mirrors.items)
        cache.link_program(source, targets[0])
        assert (targets[0] / "main.py").stat().st_ino == (source / "main.py").stat().st_ino
        assert dict(cache._mirrors.items) == kept  # nothing copied, nothing evicted
        shutil.rmtree(source)  # the verification ends: the batch's link holds its program
        assert (targets[0] / "main.py").read_text() == "print(1)\n"

        entry = add_entry("k-mirrored", 10 * KB)
        cache.link_program(entry, targets[1])
        mirror = cache._mirrors.items[entry]
        assert mirror.parent == targets[1].parent and mirror != entry
        assert (targets[1] / "a.out").stat().st_ino == (mirror / "a.out").stat().st_ino
        assert (targets[1] / "a.out").stat().st_ino != (entry / "a.out").stat().st_ino
    finally:
        for path in (source, *targets):
            shutil.rmtree(path, ignore_errors=True)


def test_an_entry_over_the_cache_cap_is_not_kept(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.MAX_ARTIFACT_MB_ENV, "64")  # the cache's own cap (1 MB) is the lower
    build = cache.build_dir()
    (build / "a.out").write_bytes(os.urandom(1100 * KB))
    meta = {"verdict": "OK", "message": ""}
    cache.write_meta(build, meta)
    assert meta["verdict"] == "CE" and "over the 1 MB limit" in meta["message"]
    cache.publish("prog", "big", build)
    assert entries(cache_dir)["big"] < 4 * KB


def test_the_cache_lives_under_the_var_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HARDTESTS_SANDBOX_CACHE", raising=False)
    monkeypatch.setenv("HARDTESTS_VAR_DIR", str(tmp_path / "var"))
    assert cache.cache_root() == tmp_path / "var" / "sandbox-cache"
    assert (tmp_path / "var" / "sandbox-cache").is_dir()


def test_an_oversized_build_becomes_ce_and_leaves_nothing(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.MAX_ARTIFACT_MB_ENV, "1")
    build = cache.build_dir()
    with open(build / "a.out", "wb") as f:
        f.truncate(3 * 1024 * KB)
    meta = {"verdict": "OK", "message": ""}
    cache.write_meta(build, meta)
    assert meta["verdict"] == "CE" and "over the 1 MB limit" in meta["message"]
    final = cache.publish("prog", "big", build)
    assert sorted(p.name for p in final.iterdir()) == ["meta.json"]
    assert cache.read_meta(final)["verdict"] == "CE"


@pytest.mark.slow
def test_a_huge_binary_is_a_compile_error(sb: Sandbox, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.MAX_ARTIFACT_MB_ENV, "2")
    monkeypatch.setenv(cache.MAX_MB_ENV, "4096")  # room for the C++ header cache
    prog = sb.compile("cpp", "char big[8 << 20] = {1};\nint main(){return big[12345];}\n")
    assert prog.verdict == Verdict.CE, prog.message
    assert "over the 2 MB limit" in prog.message
    again = sb.compile("cpp", "char big[8 << 20] = {1};\nint main(){return big[12345];}\n")
    assert again.cached and again.verdict == Verdict.CE
    assert cache.tree_size(Path(again.path)) < 64 * KB


def _publisher(root: str, prefix: str, count: int) -> None:
    os.environ["HARDTESTS_SANDBOX_CACHE"] = root
    os.environ[cache.MAX_MB_ENV] = "1"
    cache.EVICT_GRACE_S = 0.0
    for i in range(count):
        add_entry(f"{prefix}{i}", 100 * KB)


def test_two_workers_publish_and_evict_the_same_cache(cache_dir: Path) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_publisher, args=(str(cache_dir), name, 40)) for name in ("a", "b")]
    for worker in workers:
        worker.start()
    incomplete: list[tuple[str, int]] = []
    while any(w.is_alive() for w in workers):
        # through its path, an entry is whole or absent: never a half-deleted program
        for path in list((cache_dir / "prog").glob("*")) if (cache_dir / "prog").exists() else []:
            try:
                size = len((path / "a.out").read_bytes())
            except FileNotFoundError:
                continue
            if size != 100 * KB:
                incomplete.append((path.name, size))
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert incomplete == []
    cache.evict()  # a publish that found the other worker evicting left the rest to the next one
    kept = entries(cache_dir)
    assert sum(kept.values()) <= 1024 * KB
    assert len(kept) >= 5  # eviction stops at 90% of the cap, it does not empty the cache
    assert [p.name for p in (cache_dir / "staging").iterdir()] == []


@pytest.fixture
def noexec_tmpfs() -> Iterator[Path]:
    with mounted_tmpfs("noexec,size=64m", "hts-noexec-") as where:
        yield where


def test_programs_are_never_bound_from_a_noexec_filesystem(
    sb: Sandbox, noexec_tmpfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Docker's /dev/shm and some hardened hosts' /tmp are mounted noexec: a program bound from
    there could not start in the sandbox, and every verdict would be the machine's doing."""
    monkeypatch.setattr(cache, "MEMORY_SCRATCH", noexec_tmpfs)
    assert not str(cache.memory_root()).startswith(str(noexec_tmpfs))
    view = cache.program_view(Path(sb.compile("cpp", "int main(){return 0;}\n").path))
    try:
        assert not str(view).startswith(str(noexec_tmpfs))
    finally:
        shutil.rmtree(view, ignore_errors=True)
    prog = sb.compile("cpp", "#include <cstdio>\nint main(){puts(\"7\");}\n")
    [result] = sb.run(prog, [""], Limits(time_s=2, memory_mb=256))
    assert result.verdict == Verdict.OK and result.stdout == b"7\n"


def test_a_noexec_work_dir_is_refused_with_its_reason(noexec_tmpfs: Path) -> None:
    cache._neutral_root.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="noexec"):
            cache._neutral_root(str(cache.cache_root()), os.geteuid(), str(noexec_tmpfs / "work"))
    finally:
        cache._neutral_root.cache_clear()


def test_a_header_cache_that_could_not_be_built_is_not_tried_again_at_every_compile(
        sb: Sandbox, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # each try is seconds of CPU; a failed one is remembered (base.PCH_RETRY_S), and the compiles
    # go on without it
    monkeypatch.setenv(cache.MAX_MB_ENV, "4096")
    monkeypatch.setattr(base, "_pch_failed_at", {})
    tries = []

    def failing_step(header: str, cpp_std: str) -> list[str]:
        tries.append(cpp_std)
        return ["/bin/false"]

    monkeypatch.setattr(languages, "pch_step", failing_step)
    for n in range(3):
        prog = sb.compile("cpp", f"#include <cstdio>\nint main(){{ printf(\"{n}\"); }}\n")
        assert prog.verdict == Verdict.OK, prog.message
    assert tries == ["c++17"]
    assert not (cache_dir / "pch").exists() or not list((cache_dir / "pch").iterdir())
