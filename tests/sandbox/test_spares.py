"""Spare sandboxes (HARDTESTS_SANDBOX_WARM): started before a batch needs them, fresh all the same.

A spare is a bubblewrap sandbox whose runner came up and waits for its batch's limits; the
batch links its inputs and program into the spare's own directories and sends the limits.
These tests show that a batch really takes one (no bubblewrap is started for it), that it
serves that batch's program and limits and no earlier batch's, that verdicts and outputs are
those of a sandbox started for the batch on the whole hostile suite, and that spares are
neither inherited by a forked child nor left behind by a process that ends.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import sandbox.bwrap
from sandbox import Limits, RunResult, Sandbox, Verdict

from .conftest import REPO
from .test_hostile import FORK_BOMB_VERDICTS
from .test_verdicts import ADD
from .test_zygote import HOSTILE_INPUTS, HOSTILE_MODULES, observable

LIMITS = Limits(time_s=2, memory_mb=256)
# touches n MB, then prints it
TOUCH = "#include <bits/stdc++.h>\nint main(){int n;std::cin>>n;std::vector<char> v((size_t)n<<20,1);" \
        "long long s=0;for(size_t i=0;i<v.size();i+=4096)s+=v[i];std::cout<<s*4096/(1<<20)<<'\\n';}\n"
# burns n ms of CPU, then prints "done"
BURN = "#include <bits/stdc++.h>\nint main(){int n;std::cin>>n;auto t=std::clock();volatile long x=0;" \
       "while((std::clock()-t)*1000.0/CLOCKS_PER_SEC<n)x++;std::cout<<\"done\\n\";}\n"
# 50,000 frames of 1 KB that the compiler cannot fold away: more than a default 8 MB stack
DEEP = "#include <cstdio>\nint f(int n){volatile char buf[1024]; buf[0]=(char)n; if(n==0) return 0;" \
       "int r=f(n-1); return r+1+(buf[0]-(char)n);}\nint main(){std::printf(\"%d\\n\", f(50000));}\n"
OTHER = "#include <cstdio>\nint main(){std::puts(\"other\");}\n"
SLEEP = "#include <bits/stdc++.h>\nint main(){int n;std::cin>>n;std::this_thread::sleep_for(std::chrono::milliseconds(n));" \
        "std::puts(\"slept\");}\n"
# Python (forked from a zygote that a spare started before its batch was known): touches n MB;
# burns n ms of CPU; prints its stack limit in MB, which is the batch's memory limit
PY_TOUCH = "n = int(input())\nb = bytearray(n << 20)\nprint(len(b) >> 20)\n"
PY_BURN = "import time\nn = int(input())\nt = time.process_time()\n" \
          "while time.process_time() - t < n / 1000:\n    pass\nprint('done')\n"
PY_STACK = "import resource\nprint(resource.getrlimit(resource.RLIMIT_STACK)[0] >> 20)\n"


@pytest.fixture()
def spares(sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Spares on (one per kind of batch), and a count of the batches that took one."""
    seen = {"taken": 0, "started": 0}
    take, start = sandbox.bwrap.SPARES.take, sandbox.bwrap._Started.__init__

    def counted_take(spec):
        spare = take(spec)
        seen["taken"] += spare is not None
        return spare

    def counted_start(self, sandbox_, spec, *, spare):
        seen["started"] += not spare
        start(self, sandbox_, spec, spare=spare)

    monkeypatch.setattr(sandbox.bwrap.SPARES, "take", counted_take)
    monkeypatch.setattr(sandbox.bwrap._Started, "__init__", counted_start)
    with sandbox.bwrap.SPARES.lock:
        sandbox.bwrap.SPARES.wanted.clear()  # no kind of batch from an earlier test
    sb.keep_warm(1)
    yield seen
    sb.keep_warm(0)
    sb.settle_warm()  # the thread has stopped every spare


def run(sb: Sandbox, source: str, inputs: list[str], limits: Limits = LIMITS, language: str = "cpp") -> list[RunResult]:
    prog = sb.compile(language, source)
    assert prog.ok, prog.message
    return sb.run(prog, inputs, limits)


def test_a_batch_takes_a_spare_and_starts_no_sandbox(sb: Sandbox, spares: dict[str, int]) -> None:
    sb.compile("cpp", ADD["cpp"])
    spares.update(taken=0, started=0)
    run(sb, ADD["cpp"], ["0 0\n"])  # the first batch of its kind starts its own
    assert spares == {"taken": 0, "started": 1}
    for round_ in range(3):
        sb.settle_warm()
        results = run(sb, ADD["cpp"], [f"{round_} {i}\n" for i in range(5)])
        assert [r.stdout for r in results] == [f"{round_ + i}\n".encode() for i in range(5)]
    assert spares == {"taken": 3, "started": 1}


def test_without_spares_every_batch_starts_its_own(sb: Sandbox, spares: dict[str, int]) -> None:
    sb.keep_warm(0)
    sb.compile("cpp", ADD["cpp"])
    spares.update(taken=0, started=0)
    for _ in range(3):
        run(sb, ADD["cpp"], ["1 2\n"])
        sb.settle_warm()
    assert spares == {"taken": 0, "started": 3}


def test_a_spare_runs_its_batch_s_program_and_inputs(sb: Sandbox, spares: dict[str, int]) -> None:
    """Every C++ program has the same argv: the spare left by one serves the next."""
    run(sb, ADD["cpp"], ["5 6\n"])
    sb.settle_warm()
    [other] = run(sb, OTHER, ["5 6\n"])
    sb.settle_warm()
    [add] = run(sb, ADD["cpp"], ["7 8\n"])
    assert (other.stdout, add.stdout) == (b"other\n", b"15\n")
    assert spares["taken"] == 2


def test_a_spare_is_held_to_its_batch_s_limits(sb: Sandbox, spares: dict[str, int]) -> None:
    """The spare was started with the previous batch's limits; the batch's own apply."""
    [fits] = run(sb, TOUCH, ["100\n"], Limits(time_s=2, memory_mb=256))
    assert (fits.verdict, fits.stdout) == (Verdict.OK, b"100\n")
    sb.settle_warm()
    [over] = run(sb, TOUCH, ["100\n"], Limits(time_s=2, memory_mb=48))
    assert over.verdict == Verdict.MLE, over
    sb.settle_warm()
    [again] = run(sb, TOUCH, ["100\n"], Limits(time_s=2, memory_mb=256))  # the limit goes up again
    assert (again.verdict, again.stdout) == (Verdict.OK, b"100\n")
    sb.settle_warm()
    [slow] = run(sb, BURN, ["600\n"], Limits(time_s=0.2, memory_mb=256))
    assert slow.verdict == Verdict.TLE, slow
    sb.settle_warm()
    [quick] = run(sb, BURN, ["600\n"], Limits(time_s=3, memory_mb=256))
    assert (quick.verdict, quick.stdout) == (Verdict.OK, b"done\n")
    sb.settle_warm()
    # the program's own rlimits are the batch's too: the stack is the memory limit
    [deep] = run(sb, DEEP, [""], Limits(time_s=2, memory_mb=512))
    assert (deep.verdict, deep.stdout) == (Verdict.OK, b"50000\n"), deep
    assert spares["taken"] == 5


def hostile_sources() -> dict[str, tuple[str, str]]:
    """Every C++ and Python program of the hostile suites, by name: (language, source)."""
    programs = {}
    for module_name in HOSTILE_MODULES:
        if "docker" in module_name:
            continue
        module = importlib.import_module(f"tests.sandbox.{module_name}")
        for attr, value in vars(module).items():
            if isinstance(value, dict):
                for language in ("cpp", "python3"):
                    if isinstance(value.get(language), str):
                        programs[f"{module_name}.{attr}.{language}"] = (language, value[language])
    return programs


def test_spares_give_the_verdicts_and_outputs_of_fresh_sandboxes(sb: Sandbox, spares: dict[str, int]) -> None:
    programs = hostile_sources()
    assert len(programs) >= 30
    limits = Limits(time_s=0.5, memory_mb=64, wall_s=2)
    for language in ("cpp", "python3"):
        run(sb, ADD[language], ["1 2\n"], limits, language)  # a spare of this kind from here on
    differing = []
    for name, (language, source) in programs.items():
        prog = sb.compile(language, source)
        assert prog.ok, (name, prog.message)
        if ".FORK_BOMB." in name:
            # which limit a fork bomb hits first is a race, in any sandbox
            for warm in (False, True):
                sb.keep_warm(1 if warm else 0)
                sb.settle_warm()
                verdicts = {r.verdict for r in sb.run(prog, HOSTILE_INPUTS, limits)}
                assert verdicts <= FORK_BOMB_VERDICTS, (name, warm, verdicts)
            continue
        seen = []
        for warm in (False, True, False):
            sb.keep_warm(1 if warm else 0)
            sb.settle_warm()
            taken = spares["taken"]
            seen.append([observable(r) for r in sb.run(prog, HOSTILE_INPUTS, limits)])
            if warm:
                assert spares["taken"] > taken, name
            if len(seen) == 2 and seen[0] == seen[1]:
                break
        if len(seen) == 3:
            # a program whose output changes between fresh runs (a fork bomb, a clock) is held
            # to the verdicts fresh sandboxes gave it
            fresh = {o[0] for run_ in (seen[0], seen[2]) for o in run_}
            if seen[0] == seen[2] or not {o[0] for o in seen[1]} <= fresh:
                differing.append((name, seen))
    assert differing == []


def test_no_spare_starts_while_a_batch_of_this_process_runs_and_its_end_is_not_waited_for(
    sb: Sandbox, spares: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Starting a spare (bubblewrap's namespaces, the runner's filter) would take CPU from the
    tests of the batch that took the last one: the replacement starts once the batch is over.
    A closed batch's sandbox is ended once, as it closes."""
    run(sb, ADD["cpp"], ["1 2\n"])
    assert sb.compile("cpp", SLEEP).ok  # its compile is a batch too: not the one under watch
    sb.settle_warm()
    started_at: list[float] = []
    start = sandbox.bwrap._Started.__init__

    def noted(self, sandbox_, spec, *, spare):
        if spare:
            started_at.append(time.monotonic())
        start(self, sandbox_, spec, spare=spare)

    monkeypatch.setattr(sandbox.bwrap._Started, "__init__", noted)
    ended: list[int] = []
    stop = sandbox.bwrap._Started.stop
    monkeypatch.setattr(sandbox.bwrap._Started, "stop", lambda self: (stop(self), ended.append(self.proc.pid)))
    began = time.monotonic()
    # 0.15 s asleep (under the 0.25 s after which spares start anyway)
    [slept] = run(sb, SLEEP, ["150\n"])
    over = time.monotonic()
    assert (slept.verdict, slept.stdout, spares["taken"]) == (Verdict.OK, b"slept\n", 1)
    assert [t for t in started_at if began <= t <= over] == []
    sb.settle_warm()
    assert len(started_at) == 1 and started_at[0] > over  # the replacement, after the batch
    assert len(ended) == 1  # the batch's own sandbox


def test_a_forked_child_has_no_spares_and_the_parent_keeps_its_own(sb: Sandbox, spares: dict[str, int]) -> None:
    run(sb, ADD["cpp"], ["1 1\n"])
    sb.settle_warm()
    assert sum(map(len, sandbox.bwrap.SPARES.spares.values())) == 1
    pid = os.fork()
    if pid == 0:
        pool = sandbox.bwrap.SPARES
        os._exit(0 if pool.count == 0 and not pool.spares and pool.thread is None else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    [result] = run(sb, ADD["cpp"], ["2 2\n"])
    assert result.stdout == b"4\n"
    assert spares["taken"] == 1


LEAVES = """
import json, sys
sys.path.insert(0, {repo!r})
from sandbox import Limits, get_sandbox, bwrap
sb = get_sandbox("bwrap")
sb.keep_warm(2)
prog = sb.compile("cpp", {source!r})
assert sb.run(prog, ["1 2\\n"], Limits())[0].stdout == b"3\\n"
sb.settle_warm()
held = []
for found in bwrap.SPARES.spares.values():
    for spare in found:
        held += [str(spare.in_dir), str(spare.prog_dir), str(spare.proc.pid)]
        cg = spare.cgroup
        held += [str(p) for p in getattr(cg, "dirs", {{}}).values()] + ([str(cg.path)] if hasattr(cg, "path") else [])
print(json.dumps(held))
"""


def test_a_process_that_ends_leaves_no_spare_behind(sb: Sandbox) -> None:
    proc = subprocess.run([sys.executable, "-c", LEAVES.format(repo=str(REPO), source=ADD["cpp"])],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    held = json.loads(proc.stdout)
    pids = [int(x) for x in held if x.isdigit()]
    paths = [Path(x) for x in held if not x.isdigit()]
    assert len(pids) == 2 and len(paths) >= 6
    assert [p for p in paths if p.exists()] == []
    assert [pid for pid in pids if Path(f"/proc/{pid}").exists()] == []


def test_a_spare_s_python_zygote_is_held_to_its_batch_s_limits(sb: Sandbox, spares: dict[str, int]) -> None:
    """A spare starts its Python zygote before the batch is known; the batch's limits and
    program reach it later, and a batch whose stack would not fit that early start (over
    1 GiB) gets a zygote started for it."""
    def py(source: str, data: str, limits: Limits) -> RunResult:
        sb.settle_warm()
        [result] = run(sb, source, [data], limits, language="python3")
        return result

    py(PY_TOUCH, "1\n", LIMITS)  # the first batch of its kind starts its own sandbox
    fits = py(PY_TOUCH, "100\n", Limits(time_s=2, memory_mb=256))
    assert (fits.verdict, fits.stdout) == (Verdict.OK, b"100\n"), fits
    over = py(PY_TOUCH, "100\n", Limits(time_s=2, memory_mb=48))
    assert over.verdict == Verdict.MLE, over
    slow = py(PY_BURN, "600\n", Limits(time_s=0.2, memory_mb=256))
    assert slow.verdict == Verdict.TLE, slow
    quick = py(PY_BURN, "300\n", Limits(time_s=3, memory_mb=256))
    assert (quick.verdict, quick.stdout) == (Verdict.OK, b"done\n"), quick
    for memory_mb in (300, 1100):
        stack = py(PY_STACK, "", Limits(time_s=2, memory_mb=memory_mb))
        assert (stack.verdict, stack.stdout) == (Verdict.OK, f"{memory_mb}\n".encode()), stack
    assert spares["taken"] == 6


def test_a_spare_s_python_zygote_is_in_its_cgroup_before_a_batch_takes_it(sb: Sandbox, spares: dict[str, int]) -> None:
    """cgroup v1: a spare's zygote joins the spare's test cgroup as it starts, so the move's
    wait for the kernel's cgroup lock (an RCU grace period after a quiet spell, 5-15 ms) is
    not on the first test of the batch that takes it; the batch still runs under its limits."""
    from sandbox import cgroups

    if cgroups.accounting().version != "v1":
        pytest.skip("cgroup v2: the zygote does not stay in a test cgroup (cgroup.kill after each test)")
    run(sb, PY_TOUCH, ["1\n"], LIMITS, language="python3")  # the first batch of its kind starts its own
    sb.settle_warm()
    with sandbox.bwrap.SPARES.lock:
        ready = [s for found in sandbox.bwrap.SPARES.spares.values() for s in found if s.spec.zygote]
    assert ready, "no Python spare was started"
    for spare in ready:
        assert spare.ready(10)
        for directory in spare.cgroup.dirs.values():
            tasks = (directory / "cgroup.procs").read_text().split()
            assert len(tasks) == 1, (directory, tasks)  # the zygote, and nothing of a test yet
    fits, over = (run(sb, PY_TOUCH, ["100\n"], Limits(time_s=2, memory_mb=mb), language="python3")[0]
                  for mb in (256, 48))
    assert (fits.verdict, fits.stdout, over.verdict) == (Verdict.OK, b"100\n", Verdict.MLE), (fits, over)


# prints its nice value and its RLIMIT_NICE (a program may lower its priority, never raise it)
NICE = {
    "cpp": "#include <cstdio>\n#include <sys/resource.h>\nint main(){struct rlimit r; getrlimit(RLIMIT_NICE, &r);"
           "std::printf(\"%d %d\\n\", getpriority(PRIO_PROCESS, 0), (int)r.rlim_cur);}\n",
    "python3": "import os, resource\nprint(os.getpriority(os.PRIO_PROCESS, 0), resource.getrlimit(resource.RLIMIT_NICE)[0])\n",
}


def _tree(root: int) -> list[int]:
    """`root` and the processes under it."""
    return list(dict.fromkeys(pid for pid, _ in sandbox.bwrap.process_threads(root)))


def _nice_of_tree(root: int) -> dict[str, set[int]]:
    """The nice values of the processes under `root`, by command name."""
    seen: dict[str, set[int]] = {}
    for pid in _tree(root):
        stat = Path(f"/proc/{pid}/stat").read_text()
        nice = int(stat[stat.rindex(")") + 2:].split()[16])
        seen.setdefault(Path(f"/proc/{pid}/comm").read_text().strip(), set()).add(nice)
    return seen


@pytest.fixture()
def low_priority_spares() -> int:
    nice = sandbox.bwrap.spare_nice()
    if nice == 0:
        pytest.skip("spares run at normal priority here (no CAP_SYS_NICE and RLIMIT_NICE cannot reach 20)")
    return nice


@pytest.mark.parametrize("language", ["cpp", "python3"])
def test_a_spare_waits_at_low_priority_and_its_batch_runs_at_normal_priority(
    sb: Sandbox, spares: dict[str, int], low_priority_spares: int, language: str
) -> None:
    """Starting a spare (the runner's filter, a Python zygote's interpreter) yields the CPU to
    the work of now; the batch that takes it, and every test of it, runs at nice 0."""
    run(sb, NICE[language], ["\n"], language=language)  # the first batch of its kind starts its own
    sb.settle_warm()
    with sandbox.bwrap.SPARES.lock:
        [waiting] = [s for found in sandbox.bwrap.SPARES.spares.values() for s in found if s.spec.language == language]
    assert waiting.ready(10)
    nices = _nice_of_tree(waiting.proc.pid)
    inside = {"cpp": "hts-runner", "python3": "python3"}[language]  # the runner; the zygote
    assert nices["hts-runner"] == {low_priority_spares} and nices[inside] == {low_priority_spares}, nices
    results = run(sb, NICE[language], ["\n"] * 4, language=language)
    assert spares["taken"] == 1
    assert [(r.verdict, r.stdout) for r in results] == [(Verdict.OK, b"0 0\n")] * 4, results


@pytest.mark.parametrize("language", ["cpp", "python3"])
def test_a_taken_spare_is_brought_back_by_one_call_on_its_process_group(
    sb: Sandbox, spares: dict[str, int], low_priority_spares: int, monkeypatch: pytest.MonkeyPatch, language: str
) -> None:
    """The runner, its launcher and its zygote share the sandbox's session: one setpriority of
    that process group brings them back to nice 0, not a walk of every thread's /proc files
    (0.2-1.5 ms of a batch's start), and every test runs at nice 0."""
    run(sb, NICE[language], ["\n"], language=language)  # the first batch of its kind starts its own
    sb.settle_warm()
    walked: list[int] = []
    monkeypatch.setattr(sandbox.bwrap, "_walk_to_normal_priority", walked.append)
    results = run(sb, NICE[language], ["\n"] * 2, language=language)
    assert spares["taken"] == 1 and walked == [], walked
    assert [(r.verdict, r.stdout) for r in results] == [(Verdict.OK, b"0 0\n")] * 2, results


def test_the_runner_refuses_a_batch_while_its_spare_is_at_low_priority(
    sb: Sandbox, spares: dict[str, int], low_priority_spares: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should the host not bring a spare back to nice 0, its batch is a sandbox error, never
    tests run at a spare's priority (their wall time would be the load's, not theirs)."""
    run(sb, NICE["python3"], ["\n"], language="python3")
    sb.settle_warm()
    monkeypatch.setattr(sandbox.bwrap, "_normal_priority", lambda root: None)
    [result] = run(sb, NICE["python3"], ["\n"], language="python3")
    assert spares["taken"] == 1
    assert result.verdict == Verdict.SE and "not brought back to normal priority" in result.stderr, result


def test_a_batch_does_not_wait_for_a_low_priority_spare_that_is_not_up(
    sb: Sandbox, spares: dict[str, int], low_priority_spares: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spare still coming up at nice 19 may be held back for long by busy cores: the batch
    starts its own sandbox instead of waiting, and the spare stays for a later batch."""
    run(sb, ADD["cpp"], ["1 2\n"])
    sb.settle_warm()
    waits: list[float] = []
    ready = sandbox.bwrap._Started.ready

    def not_up_yet(self, timeout_s: float) -> bool:
        waits.append(timeout_s)
        return False

    monkeypatch.setattr(sandbox.bwrap._Started, "ready", not_up_yet)
    spares.update(taken=0, started=0)
    [result] = run(sb, ADD["cpp"], ["3 4\n"])
    assert result.stdout == b"7\n"
    assert spares == {"taken": 0, "started": 1} and waits == [0], (spares, waits)
    monkeypatch.setattr(sandbox.bwrap._Started, "ready", ready)
    [result] = run(sb, ADD["cpp"], ["5 6\n"])
    assert (result.stdout, spares["taken"]) == (b"11\n", 1)


def test_a_spare_that_cannot_be_brought_back_is_dropped_and_later_ones_start_at_normal_priority(
    sb: Sandbox, spares: dict[str, int], low_priority_spares: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(sb, ADD["cpp"], ["1 2\n"])
    sb.settle_warm()

    def refused(root: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(sandbox.bwrap, "_normal_priority", refused)
    monkeypatch.setattr(sandbox.bwrap, "_RENICE_FAILED", threading.Event())
    spares.update(taken=0, started=0)
    [result] = run(sb, ADD["cpp"], ["3 4\n"])
    assert (result.verdict, result.stdout) == (Verdict.OK, b"7\n")
    assert spares == {"taken": 0, "started": 1}
    assert sandbox.bwrap.spare_nice() == 0
    for _ in range(2):  # a spare started low before that is dropped the same way when taken
        sb.settle_warm()
        run(sb, ADD["cpp"], ["1 1\n"])
    sb.settle_warm()
    spares.update(taken=0, started=0)
    [result] = run(sb, NICE["cpp"], ["\n"])
    assert (result.stdout, spares) == (b"0 0\n", {"taken": 1, "started": 0})
    sb.settle_warm()
    with sandbox.bwrap.SPARES.lock:
        waiting = [s for found in sandbox.bwrap.SPARES.spares.values() for s in found]
    assert waiting and all(_nice_of_tree(s.proc.pid)["hts-runner"] == {0} for s in waiting)


def test_a_spare_that_ended_while_waiting_is_dropped_and_spares_stay_low_priority(
    sb: Sandbox, spares: dict[str, int], low_priority_spares: int
) -> None:
    """A spare killed while it waited is dropped like one that never came up, and the batch
    starts its own; that is no reason to give up low-priority spares."""
    run(sb, ADD["cpp"], ["1 2\n"])
    sb.settle_warm()
    with sandbox.bwrap.SPARES.lock:
        [waiting] = [s for found in sandbox.bwrap.SPARES.spares.values() for s in found]
    assert waiting.ready(10)
    runner = next(pid for pid in _tree(waiting.proc.pid) if Path(f"/proc/{pid}/comm").read_text().strip() == "hts-runner")
    os.kill(runner, 9)
    waiting.proc.wait(timeout=10)  # bubblewrap ends with its runner
    spares.update(taken=0, started=0)
    [result] = run(sb, ADD["cpp"], ["3 4\n"])
    assert (result.verdict, result.stdout) == (Verdict.OK, b"7\n"), result
    assert spares == {"taken": 0, "started": 1}
    assert sandbox.bwrap.spare_nice() == low_priority_spares
