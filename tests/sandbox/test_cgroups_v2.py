"""cgroup v2 accounting, forced with HARDTESTS_SANDBOX_CGROUPS=v2, on the real unified hierarchy.

Skipped (with the reason printed) where no writable cgroup2 hierarchy exists.
Only what the host's v2 hierarchy offers is exercised: on a hybrid host whose
controllers are all bound to v1 that is cpu.stat and cgroup.kill; the memory
and pids paths run only where those controllers reach our cgroup.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import sandbox.bwrap
from sandbox import Limits, Sandbox, Verdict, cache, cgroups, languages
from sandbox.base import ALLOW_RUSAGE_ENV, BatchSpec, RawResult

from .conftest import run_one
from .test_hostile import host_processes_matching
from .test_verdicts import ADD, CRASH, LOOP

LANGS = ["cpp", "python3", "java"]


def _use(monkeypatch: pytest.MonkeyPatch, mode: str) -> cgroups.Accounting:
    monkeypatch.setenv(cgroups.ENV, mode)
    cgroups.reset()
    return cgroups.accounting()


@pytest.fixture
def v2(monkeypatch: pytest.MonkeyPatch) -> Iterator[cgroups.Accounting]:
    chosen = _use(monkeypatch, "v2")
    if chosen.version != "v2":
        own = cgroups.v2_own_dir()
        where = (
            "no cgroup2 mount shows our own cgroup (0:: line of /proc/self/cgroup)"
            if own is None
            else f"cannot create a writable {cgroups.SANDBOX_DIR} cgroup under {own}"
        )
        reason = f"no writable cgroup2 hierarchy: {where}"
        print(reason)
        cgroups.reset()
        pytest.skip(reason)
    yield chosen
    cgroups.reset()  # the next test probes again, with the setting monkeypatch restores


def raw_run(sb: Sandbox, language: str, source: str, inputs: list[str], limits: Limits) -> list[RawResult]:
    """What the runner measured, before judging, for each input of one batch."""
    prog = sb.compile(language, source)
    assert prog.ok, prog.message
    inputs_dir = cache.make_private_dir()
    try:
        for index, data in enumerate(inputs):
            (inputs_dir / str(index)).write_text(data)
        argv = languages.run_argv(language, main_class=prog.main_class, memory_mb=limits.memory_mb)
        spec = BatchSpec(
            argv=argv, language=language, limits=limits, inputs_dir=inputs_dir, prog_dir=Path(prog.path)
        )
        batch = sb.open_batch(spec)
        try:
            return [batch.run(index) for index in range(len(inputs))]
        finally:
            batch.close()
    finally:
        shutil.rmtree(inputs_dir, ignore_errors=True)


def our_batch_dirs(chosen: cgroups.Accounting) -> list[str]:
    assert chosen.base is not None
    return sorted(p.name for p in chosen.base.iterdir() if p.name.startswith(f"b-{os.getpid()}-"))


def test_forced_v2_is_chosen_and_says_what_it_covers(v2: cgroups.Accounting) -> None:
    own = cgroups.v2_own_dir()
    assert own is not None and v2.base == own / cgroups.SANDBOX_DIR
    assert "cpu" in v2.features
    assert ("kill" in v2.features) == (v2.base / "cgroup.kill").exists()
    controllers = (v2.base / "cgroup.controllers").read_text().split()
    assert ("memory" in v2.features) == ("memory" in controllers)
    assert ("pids" in v2.features) == ("pids" in controllers)
    assert v2.describe().startswith("v2 (cpu")
    print("v2 accounting here:", v2.describe())


def test_auto_keeps_v1_where_it_is_writable_and_zero_turns_cgroups_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    try:
        v1_writable = all(cgroups._probe_v1(c) for c in cgroups.CONTROLLERS)
        assert _use(monkeypatch, "auto").version == ("v1" if v1_writable else cgroups._select("v2").version)
        assert _use(monkeypatch, "1") == _use(monkeypatch, "auto")  # the former "on"
        assert _use(monkeypatch, "0") == cgroups.NONE and not cgroups.available()
    finally:
        cgroups.reset()


# each thread burns 0.3 s of its own CPU time: 0.9 s in all, over a 0.6 s limit.
# Small explicit stacks, because without a cgroup memory limit RLIMIT_AS is
# close to the memory limit and default thread stacks (RLIMIT_STACK) would not fit.
BURN_PTHREADS = (
    "#include <pthread.h>\n#include <ctime>\n"
    "static double cpu(){timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);"
    " return t.tv_sec+t.tv_nsec/1e9;}\n"
    "static void* burn(void*){while(cpu()<0.3){} return nullptr;}\n"
    "int main(){pthread_attr_t a; pthread_attr_init(&a); pthread_attr_setstacksize(&a, 1<<20);\n"
    "pthread_t t[3]; for(auto&x:t) pthread_create(&x,&a,burn,nullptr);\n"
    "for(auto&x:t) pthread_join(x,nullptr);}\n"
)
BURN_JAVA = (
    "import java.lang.management.*;\npublic class Main { public static void main(String[] a) throws Exception {\n"
    "ThreadMXBean mx = ManagementFactory.getThreadMXBean(); Thread[] ts = new Thread[3];\n"
    "for (int i = 0; i < 3; i++) { ts[i] = new Thread(() -> {\n"
    "while (mx.getCurrentThreadCpuTime() < 300_000_000L) { } }); ts[i].start(); }\n"
    "for (Thread t : ts) t.join(); } }\n"
)


@pytest.mark.parametrize(("language", "source"), [("cpp", BURN_PTHREADS), ("java", BURN_JAVA)])
def test_cpu_of_every_thread_is_counted_through_cpu_stat(
    sb: Sandbox, v2: cgroups.Accounting, language: str, source: str
) -> None:
    [raw] = raw_run(sb, language, source, [""], Limits(time_s=0.6, wall_s=30))
    # the runner stopped it on the cgroup's CPU time (killed=1), which under v2 is cpu.stat
    assert raw.killed == 1, raw
    assert raw.cg_cpu_us > 0.6 * 1.1 * 1e6
    result = run_one(sb, language, source, time_s=0.6, wall_s=30)
    assert result.verdict == Verdict.TLE and result.time_ms >= 600


# two children burn 0.4 s each and exit; the parent never waits for them, so
# their CPU time never reaches the rusage of the program: only the cgroup sees it
UNWAITED_CHILDREN = (
    "import os, time\nr, w = os.pipe()\nfor _ in range(2):\n    if os.fork() == 0:\n"
    "        os.close(r)\n        while time.process_time() < 0.4:\n            pass\n"
    "        os._exit(0)\nos.close(w)\nos.read(r, 1)  # EOF once both children have exited\n"
)


def test_cpu_of_children_nobody_waited_for_counts_only_with_the_cgroup(
    sb: Sandbox, v2: cgroups.Accounting, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_v2 = run_one(sb, "python3", UNWAITED_CHILDREN, time_s=0.6, wall_s=30)
    assert with_v2.verdict == Verdict.TLE and with_v2.time_ms >= 600
    prog = sb.compile("python3", UNWAITED_CHILDREN)
    _use(monkeypatch, "0")
    [refused] = sb.run(prog, [""], Limits(time_s=0.6, wall_s=30))
    assert refused.verdict == Verdict.SE and "HARDTESTS_SANDBOX_ALLOW_RUSAGE" in refused.stderr
    monkeypatch.setenv(ALLOW_RUSAGE_ENV, "1")
    without = run_one(sb, "python3", UNWAITED_CHILDREN, time_s=0.6, wall_s=30)
    assert without.verdict == Verdict.OK and without.time_ms < 400  # what rusage alone would say
    assert without.accounting == "rusage" and without.to_dict()["accounting"] == "rusage"


@pytest.mark.parametrize("language", LANGS)
def test_ordinary_verdicts_are_unchanged(sb: Sandbox, v2: cgroups.Accounting, language: str) -> None:
    prog = sb.compile(language, ADD[language])
    results = sb.run(prog, ["1 2\n", "40 2\n"], Limits(time_s=2))
    assert [(r.verdict, r.stdout) for r in results] == [(Verdict.OK, b"3\n"), (Verdict.OK, b"42\n")]
    assert all(0 <= r.time_ms < 2000 and r.memory_kb > 0 for r in results)
    loop = run_one(sb, language, LOOP[language], time_s=0.5, wall_s=60)
    assert loop.verdict == Verdict.TLE and loop.time_ms >= 500
    crash = run_one(sb, language, CRASH[language])
    assert crash.verdict == Verdict.RE


def test_measurements_come_from_the_controllers_that_are_there(sb: Sandbox, v2: cgroups.Accounting) -> None:
    [raw] = raw_run(sb, "python3", "x = bytearray(32 << 20)\nprint(len(x))\n", [""], Limits(time_s=2))
    assert raw.status == 0 and raw.stdout == b"33554432\n"
    assert 0 <= raw.cg_cpu_us < 2_000_000
    if "memory-peak" in v2.features:
        assert raw.cg_mem_kb >= 32 * 1024
    else:
        assert raw.cg_mem_kb == -1  # the memory figure is rusage's
        assert raw.maxrss_kb >= 32 * 1024
    assert raw.oom_kills == (0 if "oom" in v2.features else -1)


# the first test leaves a background process in a new session; the second looks for it
LEAVER = (
    "import os, subprocess, sys, time\nmode = input().strip()\n"
    "if mode == 'leave':\n    subprocess.Popen(['/usr/bin/sleep', '424243'], start_new_session=True)\n"
    "    print('left')\n    sys.exit(0)\n"
    "deadline = time.monotonic() + 2\nwhile True:\n"
    "    seen = [p for p in os.listdir('/proc') if p.isdigit()\n"
    "            and b'424243' in open(f'/proc/{p}/cmdline', 'rb').read()]\n"
    "    if not seen or time.monotonic() > deadline:\n        break\n    time.sleep(0.05)\n"
    "print('alive' if seen else 'gone')\n"
)


def test_background_children_do_not_survive_their_test(sb: Sandbox, v2: cgroups.Accounting) -> None:
    prog = sb.compile("python3", LEAVER)
    first, second = sb.run(prog, ["leave\n", "look\n"], Limits(time_s=2))
    assert (first.verdict, first.stdout) == (Verdict.OK, b"left\n")
    assert (second.verdict, second.stdout) == (Verdict.OK, b"gone\n")
    assert host_processes_matching("424243") == []


@pytest.mark.skipif(not Path("/proc/self/ns/pid").exists(), reason="no PID namespaces")
def test_cgroup_kill_takes_a_new_session_that_the_runner_alone_would_miss(
    sb: Sandbox, v2: cgroups.Accounting, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In flat mode (no PID namespace per test) only cgroup.kill reaches a setsid escape."""
    if "kill" not in v2.features:
        pytest.skip("this kernel has no cgroup.kill (Linux < 5.14)")
    plain: Callable[..., list[str]] = sandbox.bwrap.limit_options
    monkeypatch.setattr(
        sandbox.bwrap, "limit_options", lambda spec, *, cgroup: [*plain(spec, cgroup=cgroup), "-N"]
    )
    # a marker of its own: the serial pass runs a test a CPU, and the control below keeps its
    # escape alive on purpose while test_background_children_do_not_survive_their_test may
    # be looking for LEAVER's on the host
    leaver = LEAVER.replace("424243", "424244")
    [left, look] = raw_run(sb, "python3", leaver, ["leave\n", "look\n"], Limits(time_s=2))
    assert left.stdout == b"left\n" and look.stdout == b"gone\n"
    # the control: the same runner without a cgroup leaves the escape running until the sandbox ends
    _use(monkeypatch, "0")
    monkeypatch.setenv(ALLOW_RUSAGE_ENV, "1")
    [left, look] = raw_run(sb, "python3", leaver, ["leave\n", "look\n"], Limits(time_s=2))
    assert left.stdout == b"left\n" and look.stdout == b"alive\n"
    # the sandbox of a batch whose tests were all answered ends after the answer (the reaper);
    # this forced flat mode has no PID namespace per test, so the escape lives until that end
    sb.settle_warm()
    assert host_processes_matching("424244") == []


def test_no_cgroup_directory_is_left_after_a_batch(sb: Sandbox, v2: cgroups.Accounting) -> None:
    prog = sb.compile("python3", LEAVER.replace("424243", "424245"))  # a marker no other test looks for
    sb.settle_warm()  # the compile's own batch (a new text's syntax check) is reaped off its path
    before = our_batch_dirs(v2)
    inputs_dir = cache.make_private_dir()
    try:
        (inputs_dir / "0").write_text("leave\n")
        argv = languages.run_argv("python3")
        spec = BatchSpec(
            argv=argv,
            language="python3",
            limits=Limits(time_s=2),
            inputs_dir=inputs_dir,
            prog_dir=Path(prog.path),
        )
        batch = sb.open_batch(spec)
        try:
            assert len(our_batch_dirs(v2)) == len(before) + 1  # the batch really has a v2 cgroup
            assert batch.run(0).stdout == b"left\n"
        finally:
            batch.close()
    finally:
        shutil.rmtree(inputs_dir, ignore_errors=True)
    looped = run_one(sb, "cpp", LOOP["cpp"], time_s=0.3, wall_s=60)  # a batch whose test was killed
    assert looped.verdict == Verdict.TLE
    sb.settle_warm()  # closed batches end off their callers' path (bwrap.Reaper): wait for that
    assert our_batch_dirs(v2) == before


def test_a_cgroup_the_test_cannot_join_gives_rusage_figures_not_zeros(
    sb: Sandbox, v2: cgroups.Accounting, monkeypatch: pytest.MonkeyPatch
) -> None:
    # cgroup.procs opened read-only: the runner's write to join it fails with EBADF
    files = [("cgroup.procs", os.O_RDONLY, None), *cgroups.V2_FD_FILES[1:]]
    monkeypatch.setattr(cgroups, "V2_FD_FILES", tuple(files))
    burn = "import time\nwhile time.process_time() < 0.3:\n    pass\n"
    monkeypatch.setenv(ALLOW_RUSAGE_ENV, "1")
    prog = sb.compile("python3", burn)
    monkeypatch.delenv(ALLOW_RUSAGE_ENV)
    [refused] = sb.run(prog, [""], Limits(time_s=2, wall_s=60))
    assert refused.verdict == Verdict.SE and "rusage" in refused.stderr  # not rusage figures in silence
    monkeypatch.setenv(ALLOW_RUSAGE_ENV, "1")
    first, second = raw_run(sb, "python3", burn, ["", ""], Limits(time_s=2, wall_s=60))
    for raw in (first, second):
        assert raw.status == 0 and raw.cg_cpu_us == -1 and raw.cpu_us >= 300_000
    result = run_one(sb, "python3", burn, time_s=2, wall_s=60)
    assert result.verdict == Verdict.OK and result.time_ms >= 300 and result.accounting == "rusage"
