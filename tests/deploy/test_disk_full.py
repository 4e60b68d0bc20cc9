"""A full disk while a kit is materialised is the machine's failure (`sandbox_error`), never the
kit's or the oracles' (`validator_invalid`, `no_valid_oracle`, ...), and the same run succeeds
once there is space again.

The sandbox's compile cache and work directory (where every compile writes) are on a small disk
of the test's own, filled while the run needs it: each stage's programs are new (a numbered
comment), so each stage compiles on the full disk while the others' programs come from the cache.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from generation.models import FailureReason, GenerationRun
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.models import CodeOrigin, Problem
from problems.services import kit_create, validator_create
from sandbox import Limits, Verdict, get_sandbox
from tests.deploy.faults import fill, small_disk
from tests.generation.conftest import HACKING, ORACLE_PY, ORACLE_PY_ALT, REGULAR, VALIDATOR, make_problem
from tests.generation.conftest import small_counts as small_counts  # noqa: PLC0414 - the fixture, shared

pytestmark = [pytest.mark.slow, pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="hardtests-disk-"))
    root.chmod(0o755)
    with small_disk(root / "disk") as path:
        (path / "tmp").mkdir()
        (path / "tmp").chmod(0o1777)
        monkeypatch.setenv("HARDTESTS_SANDBOX_CACHE", str(path / "sandbox-cache"))
        monkeypatch.setenv("HARDTESTS_SANDBOX_WORK_DIR", str(path / "work"))
        monkeypatch.setattr(tempfile, "tempdir", str(path / "tmp"))
        # the sandbox's own tools (the runner) built on this disk while there is room, as on a node
        sb = get_sandbox()
        [warm] = sb.run(sb.compile("python3", fresh("print(1)")), [""], Limits(time_s=2, memory_mb=256))
        assert warm.verdict == Verdict.OK, warm
        assert any((path / "work").glob("hardtests-sandbox-*")), "the sandbox does not work on the test's disk"
        yield path


def fresh(code: str) -> str:
    return f"{code}\n# {uuid.uuid4().hex}\n"


def kit(problem: Problem, *, validator: str = VALIDATOR, regular: str = REGULAR, hacking: str = HACKING) -> None:
    v = validator_create(problem=problem, code=validator, origin=CodeOrigin.IMPORTED)
    kit_create(problem=problem, origin=CodeOrigin.IMPORTED, validator=v, direct_inputs=["1 2\n", "5 5\n"],
               regular_generator=regular, hacking_generator=hacking)


def run(problem: Problem) -> GenerationRun:
    started = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False)
    return generation_run_execute(run_id=started.pk)


def run_on_full_disk(problem: Problem, disk: Path) -> GenerationRun:
    filler = disk / "filler"
    fill(filler)
    try:
        return run(problem)
    finally:
        filler.unlink()


def test_a_full_disk_fails_the_run_as_a_sandbox_error_at_every_stage_and_the_run_succeeds_once_freed(
        disk: Path) -> None:
    oracles = [("python3", fresh(ORACLE_PY)), ("python3", fresh(ORACLE_PY_ALT))]
    problem = make_problem(oracles=oracles)
    validator, regular, hacking = fresh(VALIDATOR), fresh(REGULAR), fresh(HACKING)
    kit(problem, validator=validator, regular=regular, hacking=hacking)
    # the oracles' compiles (the pre-flight, first) need the disk
    failed = run_on_full_disk(problem, disk)
    assert (failed.status, failed.failure_reason) == (GenerationRun.Status.FAILED, FailureReason.SANDBOX_ERROR), \
        (failed.failure_reason, failed.error)
    assert "No space left on device" in failed.error and "oracle" in failed.error, failed.error

    ok = run(problem)  # space again: the same run succeeds, and every program is now in the cache
    assert ok.status == GenerationRun.Status.SUCCEEDED, (ok.failure_reason, ok.error)
    assert ok.suite is not None and ok.suite.tests.count() > 0

    stages = {"validator": {"validator": fresh(VALIDATOR), "regular": regular, "hacking": hacking},
              "generator": {"validator": validator, "regular": fresh(REGULAR), "hacking": hacking}}
    for stage, code in stages.items():
        kit(problem, **code)
        failed = run_on_full_disk(problem, disk)
        assert (failed.status, failed.failure_reason) == (GenerationRun.Status.FAILED, FailureReason.SANDBOX_ERROR), \
            (stage, failed.failure_reason, failed.error)
        assert stage in failed.error and "No space left on device" in failed.error, failed.error
        again = run(problem)
        assert again.status == GenerationRun.Status.SUCCEEDED, (stage, again.failure_reason, again.error)


def test_a_disk_too_small_for_the_header_cache_is_never_filled_by_building_it(disk: Path) -> None:
    # The C++ header cache is 100-120 MB, more than this disk: building it here would fill the
    # disk while it writes, and every compile beside it would find no space. It is not tried: the
    # compile goes without it (slower, the same program), and the disk never runs low.
    sb = get_sandbox()
    lowest = [shutil.disk_usage(disk).free]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            lowest[0] = min(lowest[0], shutil.disk_usage(disk).free)
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        # any C++ compile asks for the header cache first; this one needs no more than <cstdio>
        prog = sb.compile("cpp", f"#include <cstdio>\nint main(){{ printf(\"42\"); }}\n// {uuid.uuid4().hex}\n")
    finally:
        done.set()
        watcher.join()
    assert prog.verdict == Verdict.OK, prog.message
    [result] = sb.run(prog, [""], Limits(time_s=2, memory_mb=256))
    assert result.stdout == b"42"
    assert not list((disk / "sandbox-cache").glob("pch/*")), "a header cache was built on a disk too small for it"
    # the compile's own files (a few MB) are all it wrote
    assert lowest[0] > 24 * 1024 * 1024, lowest[0]
