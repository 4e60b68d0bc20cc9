"""Sandbox overhead, side by side with bare execution, on the same programs and inputs.

    .venv/bin/python bench/sandbox.py [--tests 40] [--rounds 20] [--backend bwrap]

Bare execution is a plain subprocess of the same compiled binary (or the same
/usr/bin/python3 -I script) with no isolation at all.  The sandbox figure is the
whole `Sandbox.run` call for the batch (sandbox start-up included, amortised over
the tests) divided by the number of tests.  Like a sandbox worker, the script keeps
spare sandboxes started (HARDTESTS_SANDBOX_WARM): a batch takes one that came up before
it was needed, and its replacement starts after the batch.  The "cold" rows start every
sandbox inside the timed call.  Either way a spare's start is counted in the CPU time of
the batch that asked for it.  The best of several rounds is kept
for each, because this machine is shared and noisy.  Beside wall time, the CPU
time each costs is printed too: the cpuacct usage of a cgroup v1 the script
moves itself into (bwrap, the runner and the programs included, since the
batch cgroups nest under it), or rusage where that is not writable.  On a
loaded machine it moves far less than wall time, so it is the fairer
comparison of two versions of the sandbox.

The tests/s rows run 1 and 2 worker processes (spawned, spares on, as a sandbox worker
keeps them), each running 5 batches of --tests tests one after another; the best of
--throughput-rounds rounds is printed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox import Limits, cgroups, get_sandbox  # noqa: E402
from sandbox.base import ZYGOTE_ENV  # noqa: E402
from sandbox.languages import run_argv  # noqa: E402

PROGRAMS = {
    "cpp": "#include <bits/stdc++.h>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n",
    "python3": "a, b = map(int, input().split())\nprint(a + b)\n",
}
LIMITS = Limits(time_s=2, memory_mb=256)
# (row label, language, HARDTESTS_SANDBOX_ZYGOTE, spare sandboxes): Python with its tests forked
# from a started interpreter (the default) and with an interpreter started per test; C++ and
# Python with every sandbox started inside the timed call ("cold")
VARIANTS = [("cpp", "cpp", None, True), ("cpp cold", "cpp", None, False), ("python3", "python3", "1", True),
            ("py3 cold", "python3", "1", False), ("py3 exec", "python3", "0", True)]


def use_zygote(value: str | None) -> None:
    if value is not None:
        os.environ[ZYGOTE_ENV] = value


def inputs_for(count: int) -> list[bytes]:
    return [f"{i} {i * 7}\n".encode() for i in range(count)]


def bare_argv(language: str, path: str) -> list[str]:
    return [arg.replace("/.hts-prog", path) for arg in run_argv(language)]


CPU_CGROUP: Path | None = None


def enter_cpu_cgroup() -> None:
    """Move this process into a cpuacct cgroup of its own, so that cpu_seconds sees every descendant."""
    global CPU_CGROUP
    path = Path("/sys/fs/cgroup/cpuacct") / cgroups._own_path("cpuacct").lstrip("/") / f"hts-bench-{os.getpid()}"
    try:
        path.mkdir()
        (path / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return
    CPU_CGROUP = path
    cgroups.reset()  # the batch cgroups now nest under ours


def leave_cpu_cgroup() -> None:
    if CPU_CGROUP is None:
        return
    (CPU_CGROUP.parent / "cgroup.procs").write_text(str(os.getpid()))
    for child in (CPU_CGROUP / cgroups.SANDBOX_DIR, CPU_CGROUP):
        try:
            child.rmdir()
        except OSError:
            pass


def cpu_seconds() -> float:
    """CPU of this process and all its descendants (rusage: only those it waited for)."""
    if CPU_CGROUP is not None:
        return int((CPU_CGROUP / "cpuacct.usage").read_text()) / 1e9
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def time_bare(argv: list[str], inputs: list[bytes]) -> tuple[float, float]:
    started, cpu = time.perf_counter(), cpu_seconds()
    for data in inputs:
        subprocess.run(argv, input=data, capture_output=True, check=True)
    return time.perf_counter() - started, cpu_seconds() - cpu


def time_sandbox(backend: str, language: str, inputs: list[bytes], *, settle: bool = True) -> tuple[float, float]:
    sb = get_sandbox(backend)
    prog = sb.compile(language, PROGRAMS[language])
    started, cpu = time.perf_counter(), cpu_seconds()
    results = sb.run(prog, inputs, LIMITS)
    elapsed = time.perf_counter() - started
    if settle:
        sb.settle_warm()  # the spare this batch asked for has started: its CPU is this batch's
    used = cpu_seconds() - cpu
    assert all(r.ok for r in results), results[0]
    return elapsed, used


def worker(args: tuple[str, str, int, int]) -> int:
    backend, language, count, batches = args
    get_sandbox(backend).keep_warm()
    done = 0
    for _ in range(batches):
        # no waiting for spares here: a busy worker's next batch does not wait for them either
        time_sandbox(backend, language, inputs_for(count), settle=False)
        done += count
    return done


def throughput(backend: str, language: str, workers: int, count: int, batches: int, rounds: int = 1,
               work: Callable[[tuple[str, str, int, int]], int] = worker) -> float:
    """Tests per second of `workers` processes that each run `batches` batches of `count`
    tests, one after another; the best of `rounds` (this machine's speed swings between them).
    `work` is `worker`, or a function of the calling script's that calls it (spawn finds a
    function by its module's name, which a script loaded by path does not have)."""
    best = 0.0
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        pool.map(work, [(backend, language, count, 1)] * workers)  # warm-up: imports, compile cache
        for _ in range(rounds):
            started = time.perf_counter()
            done = sum(pool.map(work, [(backend, language, count, batches)] * workers))
            best = max(best, done / (time.perf_counter() - started))
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--backend", default="bwrap")
    parser.add_argument("--no-throughput", action="store_true", help="only the per-test overhead table")
    parser.add_argument("--throughput-rounds", type=int, default=3,
                        help="timed rounds of 5 batches a worker; the best is printed")
    args = parser.parse_args()
    enter_cpu_cgroup()
    try:
        return bench(args)
    finally:
        leave_cpu_cgroup()


def bench(args: argparse.Namespace) -> int:
    sb = get_sandbox(args.backend)
    inputs = inputs_for(args.tests)
    print(f"backend {args.backend}, {args.tests} tests per batch, best of {args.rounds} rounds")
    if args.backend == "bwrap":
        print(f"cgroup accounting: {cgroups.accounting().describe()}")
    print()
    print(f"CPU time from {'the cpuacct cgroup ' + str(CPU_CGROUP) if CPU_CGROUP else 'rusage'}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'language':<9} {'bare ms/test':>13} {'sandbox ms/test':>16} {'overhead ms':>12} {'ratio':>7}"
          f" {'bare cpu ms':>12} {'sandbox cpu ms':>15} {'cpu overhead':>13}")
    for label, language, zygote, warm in VARIANTS:
        use_zygote(zygote)
        sb.keep_warm(None if warm else 0)
        prog = sb.compile(language, PROGRAMS[language])
        assert prog.ok, prog.message
        argv = bare_argv(language, prog.path)
        bare = sandboxed = bare_cpu = sandbox_cpu = float("inf")
        for _ in range(args.rounds):
            # interleaved, so that both see the same background load
            wall, cpu = time_bare(argv, inputs)
            bare, bare_cpu = min(bare, wall), min(bare_cpu, cpu)
            wall, cpu = time_sandbox(args.backend, language, inputs)
            sandboxed, sandbox_cpu = min(sandboxed, wall), min(sandbox_cpu, cpu)
        per = 1000 / args.tests
        bare_ms, sandbox_ms = bare * per, sandboxed * per
        print(f"{label:<9} {bare_ms:>13.2f} {sandbox_ms:>16.2f} {sandbox_ms - bare_ms:>12.2f} "
              f"{sandbox_ms / bare_ms:>7.2f} {bare_cpu * per:>12.2f} {sandbox_cpu * per:>15.2f} "
              f"{(sandbox_cpu - bare_cpu) * per:>13.2f}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    if args.no_throughput:
        return 0
    print()
    for label, language, zygote, warm in VARIANTS:
        if not warm:
            continue
        use_zygote(zygote)  # the pool's processes inherit it
        one = throughput(args.backend, language, 1, args.tests, 5, args.throughput_rounds)
        two = throughput(args.backend, language, 2, args.tests, 5, args.throughput_rounds)
        print(f"{label:<9} sandbox tests/s: 1 worker {one:7.1f}   2 workers {two:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
