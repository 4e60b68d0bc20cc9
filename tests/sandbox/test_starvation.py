""""Starved" (SE) is the machine's doing only: no program can lower its own scheduling weight
or make its threads' waits pass for a machine that withheld the CPU (issue #46, item 2).

A program that lowers its priority (its session's autogroup through /proc/self/autogroup,
setpriority, sched_setattr, sched_setscheduler) is TLE like a plain loop, never SE; threads
that wait for each other are not a test the machine withheld; a test the harness itself holds
back (a CPU quota on its cgroup) is still SE.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import sandbox.base
from sandbox import Limits, RunResult, Sandbox, Verdict, cgroups

# 16 threads that spin, in a session whose autogroup the program set to nice 19 (1-6% of a CPU
# when its tests were scheduled by their autogroups: SE on every run where a loop was TLE)
AUTOGROUP_SPINNER = r"""
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *spin(void *a) { volatile unsigned long x = 0; for (;;) x++; return a; }
int main() {
  int fd = open("/proc/self/autogroup", O_WRONLY), n = -1;
  // the kernel takes one unprivileged change of an autogroup's nice a tenth of a second,
  // machine-wide, and answers EAGAIN otherwise (another test process may have just made one):
  // a program that wants it tries again
  for (int i = 0; fd >= 0 && i < 200; i++) {
    n = (int)write(fd, "19", 2);
    if (n >= 0 || errno != EAGAIN) break;
    usleep(10000);
  }
  fprintf(stderr, "autogroup write: %d\n", n);
  pthread_t t[16];
  for (int i = 0; i < 16; i++) pthread_create(&t[i], 0, spin, 0);
  for (;;) pause();
}
"""

# the same through every system call that sets a priority, in each thread, by number too
SYSCALL_SPINNER = r"""
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
struct attr { uint32_t size, policy; uint64_t flags; int32_t nice; uint32_t prio; uint64_t rt, dl, per;
              uint32_t umin, umax; };
static void lower(void) {
  struct attr a; memset(&a, 0, sizeof a); a.size = sizeof a; a.policy = SCHED_IDLE; a.nice = 19;
  syscall(SYS_sched_setattr, 0, &a, 0);
  struct sched_param p = {0};
  sched_setscheduler(0, SCHED_BATCH, &p);
  syscall(SYS_sched_setscheduler, 0, SCHED_IDLE, &p);
  setpriority(PRIO_PROCESS, 0, 19);
  setpriority(PRIO_PGRP, 0, 19);
  syscall(SYS_setpriority, PRIO_PROCESS, syscall(SYS_gettid), 19);
  if (nice(19) < 0) {}
}
static void *spin(void *x) { lower(); volatile unsigned long n = 0; for (;;) n++; return x; }
int main() {
  lower();
  fprintf(stderr, "policy %d nice %d\n", sched_getscheduler(0), getpriority(PRIO_PROCESS, 0));
  pthread_t t[16];
  for (int i = 0; i < 16; i++) pthread_create(&t[i], 0, spin, 0);
  for (;;) pause();
}
"""

PLAIN_LOOP = "int main(){ volatile unsigned long x = 0; for (;;) x++; }\n"

# 56 threads that wake at the same instants (every 25 ms), each spins 20 us, and sleep again:
# their waits for each other, summed over threads, exceeded the wall time, which read as a
# test the machine withheld (SE at the "starved" limit) on a machine that was not loaded
THUNDERING_HERD = r"""
#include <pthread.h>
#include <time.h>
static long long ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static void *herd(void *x) {
  struct timespec at; clock_gettime(CLOCK_MONOTONIC, &at);
  for (;;) {
    at.tv_nsec = (at.tv_nsec / 25000000 + 1) * 25000000;
    if (at.tv_nsec >= 1000000000) { at.tv_sec++; at.tv_nsec -= 1000000000; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, 0);
    long long end = ns() + 20000;
    while (ns() < end) {}
  }
  return x;
}
int main() {
  pthread_t t[55];
  for (int i = 0; i < 55; i++) pthread_create(&t[i], 0, herd, 0);
  herd(0);
}
"""

# a program that wants the CPU all the time, on one thread or on four
BUSY = {
    "one thread": PLAIN_LOOP,
    "four threads": "#include <pthread.h>\nstatic void *spin(void *a){ volatile unsigned long x = 0; for(;;) x++; return a; }\n"
                    "int main(){ pthread_t t[3]; for(int i=0;i<3;i++) pthread_create(&t[i],0,spin,0); spin(0); }\n",
}


@pytest.fixture
def one_loaded_cpu(any_sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A loaded machine, deterministically: the sandbox runs on one CPU (bubblewrap inherits
    this thread's affinity; the Docker backend makes it the container's cpuset) that three host
    processes spin on at nice 0.  A test at the harness's weight gets a good part of it; one
    at a nice-19 weight gets about 1%."""
    # not the first CPU, which test_accounting's starved test loads the same way
    cpu = max(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    spin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass\n"
    spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(3)]
    os.sched_setaffinity(0, {cpu})
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, before)
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def _run_five(sb: Sandbox, source: str, limits: Limits) -> list[RunResult]:
    prog = sb.compile("cpp", source)
    assert prog.ok, prog.message
    return sb.run(prog, [""] * 5, limits)


@pytest.mark.serial
@pytest.mark.parametrize("source", [AUTOGROUP_SPINNER, SYSCALL_SPINNER, PLAIN_LOOP], ids=["autogroup", "syscalls", "loop"])
def test_a_program_that_lowers_its_priority_is_tle_like_a_plain_loop(
    any_sb: Sandbox, source: str, one_loaded_cpu: int
) -> None:
    """Its scheduling weight is the harness's (the batch's CPU cgroup, which its autogroup does
    not reach; the filter makes the system calls no-ops): on a loaded CPU it gets the share a
    plain loop gets, and is TLE, 5 times of 5, never SE."""
    limits = Limits(time_s=1)
    results = _run_five(any_sb, source, limits)
    assert [r.verdict for r in results] == [Verdict.TLE] * 5, [(r.verdict, r.time_ms, r.stderr) for r in results]
    # it ran at a nice-0 weight against three nice-0 spinners and the machine's other load
    # (12-50% of the CPU here), where a nice-19 group gets 15 / 1039 of it at most: TLE on its
    # CPU time, or (a raised autogroup nice forfeits the "starved" grace) at the backstop
    shares = [r.time_ms / r.wall_ms for r in results]
    assert all(share >= 0.05 for share in shares), [(r.time_ms, r.wall_ms) for r in results]
    if source is SYSCALL_SPINNER:
        # the calls did nothing (where autogroups are on, a thread's own nice would only move
        # weight within its group; where they are off, it is the test's weight)
        assert all("policy 0 nice 0" in r.stderr for r in results), results[0].stderr
    if source is not AUTOGROUP_SPINNER:
        assert all(r.time_ms >= 1000 for r in results), [(r.time_ms, r.wall_ms, r.stderr[-300:]) for r in results]


@pytest.fixture
def no_cpu_cgroup(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Batches with no CPU cgroup of their own (a host whose cpu controller is not ours): the
    programs' sessions are scheduled by their autogroups, as on the host of the report."""
    if not Path("/proc/self/autogroup").exists():
        pytest.skip("no autogroups in this kernel (CONFIG_SCHED_AUTOGROUP)")
    if Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() != "1":
        pytest.skip("autogroups are disabled here (kernel.sched_autogroup_enabled=0)")
    monkeypatch.setattr(cgroups, "_probe_v1_cpu", lambda: False)
    monkeypatch.setattr(cgroups, "V2_CONTROLLERS", tuple(c for c in cgroups.V2_CONTROLLERS if c != "cpu"))
    cgroups.reset()
    if cgroups.accounting().version == "none":
        pytest.skip("no cgroup accounting here")
    if cgroups.accounting().version == "v2" and "cpu-weight" in cgroups.accounting().features:
        pytest.skip("the v2 cpu controller is already enabled above us")
    yield
    cgroups.reset()


@pytest.mark.serial
def test_without_a_cpu_cgroup_a_raised_autogroup_nice_is_tle_at_the_backstop(
    sb: Sandbox, no_cpu_cgroup: None
) -> None:
    """The runner reads each process's autogroup nice: a test that raised it is never starved
    (it would be, at 1-6% of a CPU), TLE at the backstop like an idle one, 5 times of 5."""
    limits = Limits(time_s=1)
    results = _run_five(sb, AUTOGROUP_SPINNER, limits)
    assert all(b"autogroup write: 2" in r.stderr.encode() for r in results), [r.stderr[-200:] for r in results]
    assert [r.verdict for r in results] == [Verdict.TLE] * 5, [(r.verdict, r.time_ms, r.stderr) for r in results]
    # stopped at the backstop, not carried on to the "starved" limit (3 x backstop + 5 s)
    assert all(r.wall_ms <= 2 * limits.wall_limit_s * 1000 for r in results), [r.wall_ms for r in results]


@pytest.mark.serial
def test_threads_that_wait_for_each_other_are_idle_not_starved(any_sb: Sandbox) -> None:
    """56 threads woken together wait for each other, summed, most of the wall time (SE at the
    "starved" limit when waits were summed over threads), yet the test is hardly ever both
    wanting a CPU and running none: idle, TLE at the backstop."""
    limits = Limits(time_s=2)
    prog = any_sb.compile("cpp", THUNDERING_HERD)
    assert prog.ok, prog.message
    [result] = any_sb.run(prog, [""], limits)
    assert result.verdict == Verdict.TLE, (result.verdict, result.time_ms, result.wall_ms, result.stderr)
    assert result.time_ms < 2000  # not its CPU limit: the backstop stopped it
    assert result.wall_ms <= 2 * limits.wall_limit_s * 1000, result.wall_ms


def _throttle_bwrap(monkeypatch: pytest.MonkeyPatch, share: float) -> None:
    """Every new batch cgroup gets a CPU quota of `share` of one CPU: the harness withholds it."""
    original: Callable[..., cgroups.BatchCgroup | None] = cgroups.open_batch

    def throttled(*args: Any, **kwargs: Any) -> cgroups.BatchCgroup | None:
        batch = original(*args, **kwargs)
        if isinstance(batch, cgroups.V1BatchCgroup) and batch.cpu_dir is not None:
            (batch.cpu_dir / "cpu.cfs_period_us").write_text("100000")
            (batch.cpu_dir / "cpu.cfs_quota_us").write_text(str(int(100000 * share)))
        elif isinstance(batch, cgroups.V2BatchCgroup) and "cpu-weight" in batch.features:
            (batch.path / "cpu.max").write_text(f"{int(100000 * share)} 100000")
        else:
            pytest.skip("no CPU cgroup per batch here: nothing to throttle")
        return batch

    monkeypatch.setattr(cgroups, "open_batch", throttled)


def _throttle_docker(monkeypatch: pytest.MonkeyPatch, sb: Sandbox, share: float) -> None:
    api: Any = sb.client.api  # type: ignore[attr-defined]
    original = api.create_host_config

    def throttled(**kwargs: Any) -> Any:
        return original(**kwargs, cpu_period=100000, cpu_quota=int(100000 * share))

    monkeypatch.setattr(api, "create_host_config", throttled)


@pytest.mark.serial
@pytest.mark.parametrize("name", list(BUSY))
def test_a_test_the_harness_holds_back_is_still_starved(
    any_sb: Sandbox, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CPU quota of 5% of one CPU on the test's cgroup (Docker: on its container): the
    machine withholds the CPU from a program that wants it, which is SE (re-run once, then
    "overloaded"), on one thread or on four."""
    monkeypatch.setattr(sandbox.base, "STARVED_FACTOR", 1)
    monkeypatch.setattr(sandbox.base, "STARVED_EXTRA_S", 0.0)
    prog = any_sb.compile("cpp", BUSY[name])  # compiled at full speed
    assert prog.ok, prog.message
    if any_sb.name == "docker":
        _throttle_docker(monkeypatch, any_sb, 0.05)
    else:
        _throttle_bwrap(monkeypatch, 0.05)
    [result] = any_sb.run(prog, [""], Limits(time_s=5, wall_s=1.5))
    assert result.verdict == Verdict.SE, (result.verdict, result.time_ms, result.wall_ms, result.stderr)
    assert "overloaded" in result.stderr
    assert result.time_ms < 1000
