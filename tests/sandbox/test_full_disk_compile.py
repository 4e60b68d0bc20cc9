"""A compile that meets the machine's full disk (here its linker: "final link failed: No space
left on device") is the machine's failure (SE, nothing cached), never the program's CE: a right
program must not be cached as reward 0 for a disk that was full for a moment. (A build that is
itself too big stays CE: tests/sandbox/test_cache.py.)"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import Sandbox, Verdict, cache
from tests.sandbox.conftest import mounted_tmpfs

PROGRAM = "#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);}\n"


@pytest.fixture
def small_disk() -> Iterator[Path]:
    with mounted_tmpfs("size=8m", "hts-full-") as where:
        yield where


def _fill(disk: Path, leave: int) -> Path:
    filler = disk / "filler"
    with filler.open("wb") as out:
        chunk = b"\0" * 65536
        try:
            while True:
                out.write(chunk)
                out.flush()
        except OSError:
            pass
    # give back just `leave` bytes: the compiler starts, its output does not fit
    st = os.statvfs(disk)
    size = filler.stat().st_size - max(0, leave - st.f_bavail * st.f_frsize)
    os.truncate(filler, size)
    return filler


def test_a_compile_on_a_full_disk_is_a_sandbox_error_and_heals(sb: Sandbox, small_disk: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    builds = small_disk / "builds"
    builds.mkdir(mode=0o755)
    monkeypatch.setattr(cache, "build_dir", lambda: cache.make_private_dir(builds, writable_by_sandbox=True))
    filler = _fill(small_disk, leave=12288)
    source = PROGRAM + f"// full disk {os.getpid()} {id(small_disk)}\n"  # never compiled before
    full = sb.compile("cpp", source)
    assert full.verdict == Verdict.SE, (full.verdict, full.message)
    assert "disk is full" in full.message and "No space left" in full.message
    filler.unlink()
    healed = sb.compile("cpp", source)  # nothing of the fault was cached as the program's
    assert healed.verdict == Verdict.OK, healed.message
