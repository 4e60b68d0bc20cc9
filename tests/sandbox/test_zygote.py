"""The Python zygote: every test forked from a started interpreter gets the verdict and the
output a fresh `python3 -I main.py` gets, in the same isolation (HARDTESTS_SANDBOX_ZYGOTE)."""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import Limits, RunResult, Sandbox, Verdict
from sandbox.base import ZYGOTE_ENV

from .conftest import REPO, parent_pid
from .test_hostile import FORK_BOMB_VERDICTS

DEMO = REPO / "problems" / "demo_data"
HOSTILE_MODULES = ("test_hostile", "test_kernel_surface", "test_verdicts", "test_accounting", "test_docker_integrity")
HOSTILE_INPUTS = [b"1 2\n", b"3 4\n"]

# What a fresh interpreter does at the edges: recursion depth, tracebacks, exit statuses,
# atexit and threads at shutdown, files left open, signals, end of input.
SEMANTICS = {
    "recursion": "import sys\ndef f(n):\n    try:\n        return f(n + 1)\n    except RecursionError:\n"
                 "        return n\nprint(f(0), sys.getrecursionlimit())\nsys.setrecursionlimit(5000)\n"
                 "print(f(0), sys.getrecursionlimit())\n",
    "traceback": "print('before')\ndef g():\n    raise ValueError('boom')\ng()\n",
    "exit_message": "import sys\nprint('x', end='')\nsys.exit('bad thing')\n",
    "exit_status": "import sys, atexit, threading, time\natexit.register(lambda: print('atexit ran'))\n"
                   "def w():\n    time.sleep(0.05)\n    print('thread done')\nthreading.Thread(target=w).start()\n"
                   "print(sys.argv, __name__, __file__, type(__builtins__).__name__, __spec__)\nsys.exit(300)\n",
    "exit_none_true": "import sys\nprint(1)\nsys.exit(True)\n",
    "unclosed_file": "f = open('/dev/stdout', 'w')\nf.write('via file\\n')\nimport sys\n"
                     "print(sys.stdin.readline().strip(), sys.stdout.seekable(), sys.stdin.encoding, "
                     "sys.stdout.errors, sys.stdout.line_buffering, sys.stdin.closed)\n",
    "end_of_input": "input()\ninput()\ninput()\n",
    "segfault": "import ctypes\nctypes.string_at(0)\n",
    "own_signal": "import os, signal\nprint('hi', flush=True)\nos.kill(os.getpid(), signal.SIGTERM)\n",
    "keyboard_interrupt": "print('a')\nraise KeyboardInterrupt\n",
    "os_exit_unflushed": "import os\nprint('lost')\nos._exit(3)\n",
    "stderr_and_code": "import sys\nsys.stderr.write('warn\\n')\nprint(sum(map(int, sys.stdin.read().split())))\n",
    "del_at_exit": "class A:\n    def __del__(self):\n        print('deleted')\na = A()\nprint('end')\n",
}


@pytest.fixture()
def zygote(monkeypatch: pytest.MonkeyPatch) -> Iterator[callable]:
    def switch(on: bool) -> None:
        monkeypatch.setenv(ZYGOTE_ENV, "1" if on else "0")

    yield switch


# The one thing a program sees of how it was started: the command lines of the sandbox's
# processes (its test init is a copy of hts-runner, or of the zygote, and so is a forked
# program's own /proc/self/cmdline). They are masked before outputs are compared.
SANDBOX_CMDLINES = re.compile(rb"/\.hts-bin/hts-runner [^'\"\n]*|/usr/bin/python3 -I /\.hts-bin/zygote\.py [^'\"\n]*|"
                              rb"/usr/bin/python3 -I /\.hts-prog/main\.py ?")


def observable(result: RunResult) -> tuple:
    return str(result.verdict), result.exit_code, result.signal, SANDBOX_CMDLINES.sub(b"<sandbox>", result.stdout)


def both_ways(sb: Sandbox, zygote, source: str, inputs: list[bytes], limits: Limits) -> tuple[list, list]:
    """What the program does with the zygote off and on.  A program whose output changes from
    one fresh run to the next (it draws random numbers) is compared by its verdicts only, and
    one whose verdicts change too (a fork bomb hits the memory or the time limit first) by
    the verdicts it can get."""
    prog = sb.compile("python3", source)
    assert prog.ok, prog.message
    seen = []
    for on in (False, True, False):
        zygote(on)
        seen.append([observable(r) for r in sb.run(prog, inputs, limits)])
        if len(seen) == 2 and seen[0] == seen[1]:
            break
    if len(seen) == 3 and seen[2] != seen[0]:
        fresh, again, forked = ([r[0] for r in run] for run in (seen[0], seen[2], seen[1]))
        if fresh != again:
            return sorted(set(fresh) | set(again) | set(forked)), sorted(set(fresh) | set(again))
        return [r[:3] for r in seen[0]], [r[:3] for r in seen[1]]
    return seen[0], seen[1]


def hostile_programs() -> dict[str, str]:
    programs = {}
    for name in HOSTILE_MODULES:
        module = importlib.import_module(f"tests.sandbox.{name}")
        for attr, value in vars(module).items():
            if isinstance(value, dict) and isinstance(value.get("python3"), str):
                programs[f"{name}.{attr}"] = value["python3"]
            elif attr.isupper() and isinstance(value, str) and "\n" in value:
                try:
                    compile(value, attr, "exec")
                except SyntaxError:
                    continue  # C++ or Java
                programs[f"{name}.{attr}"] = value
    return programs


def test_the_zygote_is_what_runs_python_tests(sb: Sandbox, zygote) -> None:
    # the switch really switches: with it on, the program finds the zygote's modules loaded
    # and costs far less CPU a test (no interpreter start)
    source = "import sys\nprint('ctypes' in sys.modules)\n"
    prog = sb.compile("python3", source)
    times = {}
    for on in (False, True):
        zygote(on)
        results = sb.run(prog, [b""] * 12, Limits(time_s=2))
        assert {r.stdout for r in results} == {b"True\n" if on else b"False\n"}
        times[on] = statistics.median(r.time_ms for r in results)
    assert times[True] * 2 <= times[False], times


def test_interpreter_semantics_are_those_of_a_fresh_interpreter(sb: Sandbox, zygote) -> None:
    limits = Limits(time_s=2, memory_mb=256)
    for name, source in SEMANTICS.items():
        fresh, forked = both_ways(sb, zygote, source, [b"1 2\n"], limits)
        assert forked == fresh, name
    # the traceback names only the program's frames, as a fresh interpreter's does
    prog = sb.compile("python3", SEMANTICS["traceback"])
    [result] = sb.run(prog, [b""], limits)
    assert "zygote" not in result.stderr and 'File "/.hts-prog/main.py", line 4' in result.stderr


def test_every_demo_python_solution_gets_the_same_verdicts_and_outputs(sb: Sandbox, zygote) -> None:
    compared = 0
    for problem_dir in sorted(p for p in DEMO.iterdir() if (p / "problem.json").exists()):
        problem = json.loads((problem_dir / "problem.json").read_text())
        inputs = [s["input"].encode() for s in problem["samples"]]
        direct = problem_dir / "kit" / "direct_inputs.json"
        if direct.exists():
            inputs += [text.encode() for text in json.loads(direct.read_text())]
        limits = Limits(time_s=problem["time_limit_ms"] / 1000, memory_mb=problem["memory_limit_mb"])
        for solution in sorted((problem_dir / "solutions").glob("*.py")):
            fresh, forked = both_ways(sb, zygote, solution.read_text(), inputs, limits)
            assert forked == fresh, f"{problem_dir.name}/{solution.name}"
            compared += len(inputs)
    assert compared >= 200


def test_every_hostile_python_program_gets_the_same_verdicts_and_outputs(sb: Sandbox, zygote) -> None:
    programs = hostile_programs()
    assert len(programs) >= 20
    limits = Limits(time_s=0.5, memory_mb=64, wall_s=2)
    for name, source in programs.items():
        if name.endswith(".FORK_BOMB"):
            prog = sb.compile("python3", source)
            for on in (False, True):
                zygote(on)
                verdicts = {r.verdict for r in sb.run(prog, HOSTILE_INPUTS, limits)}
                assert verdicts <= FORK_BOMB_VERDICTS, (name, on, verdicts)
            continue
        fresh, forked = both_ways(sb, zygote, source, HOSTILE_INPUTS, limits)
        assert forked == fresh, name


def test_nothing_a_test_does_to_its_interpreter_reaches_the_next(sb: Sandbox, zygote) -> None:
    # each test plants state in its copy of the interpreter (a module attribute, a builtin,
    # sys.path, an open file) and in /tmp, and reports whether it found a previous test's
    zygote(True)
    source = (
        "import os, sys, builtins\n"
        "seen = [hasattr(os, 'planted'), hasattr(builtins, 'planted'), '/planted' in sys.path,\n"
        "        os.path.exists('/tmp/planted'), sys.getrecursionlimit(), 'random' in sys.modules]\n"
        "os.planted = builtins.planted = True\nsys.path.append('/planted')\nsys.setrecursionlimit(12345)\n"
        "open('/tmp/planted', 'w').write('x')\nimport random\nprint(seen, random.getrandbits(64))\n"
    )
    prog = sb.compile("python3", source)
    results = sb.run(prog, [b""] * 4, Limits(time_s=2))
    assert all(r.verdict == Verdict.OK for r in results)
    seen = [r.stdout.decode().rsplit(" ", 1) for r in results]
    assert [s[0] for s in seen] == ["[False, False, False, False, 1000, False]"] * 4
    # and each test's random module is seeded afresh, as in a fresh interpreter
    assert len({s[1] for s in seen}) == 4


def test_a_program_cannot_reach_its_test_init_or_the_zygote(sb: Sandbox, zygote) -> None:
    zygote(True)
    source = (
        "import os, signal\n"
        "out = []\n"
        "try:\n    os.open('/proc/1/mem', os.O_RDWR)\n    out.append('mem open')\n"
        "except OSError as e:\n    out.append(e.errno)\n"
        "for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):\n"
        "    try:\n        os.kill(1, sig)\n    except OSError as e:\n        out.append(e.errno)\n"
        "out.append(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
        "print(out)\n"
    )
    prog = sb.compile("python3", source)
    [result] = sb.run(prog, [b""], Limits(time_s=2))
    # the init shrugs the signals off (pid 1 with no handlers), the program sees only its
    # own PID namespace (the init and itself), and the verdict is the program's own
    assert result.verdict == Verdict.OK, result
    reported = result.stdout.decode()
    assert "mem open" not in reported and reported.endswith("[1, 2]]\n"), reported


def test_a_sleeper_is_tle_however_much_cpu_the_zygote_has_had(sb: Sandbox, zygote) -> None:
    # The wall-clock backstop tells a sleeping program (TLE) from a starved one (re-run, then
    # SE) by the CPU its test's processes had. The zygote is no process of a test, however
    # much CPU it has had: here it spends about a second compiling a 3 MB program.
    zygote(True)
    source = "data = [" + "7," * 1_500_000 + "]\nimport time\nif input() == 'sleep':\n    time.sleep(60)\n"
    prog = sb.compile("python3", source)
    assert prog.ok, prog.message
    # (compiling it takes most of a GB, here as in a fresh interpreter, hence the memory limit)
    limits = Limits(time_s=0.5, memory_mb=1536)
    results = sb.run(prog, [b"go\n", b"sleep\n"], limits)
    assert [r.verdict for r in results] == [Verdict.OK, Verdict.TLE], results[-1]
    # killed at the backstop as idle, not carried on as starved (3 x backstop + 5 s)
    assert results[-1].wall_ms < 2 * limits.wall_limit_s * 1000, results[-1]


def test_a_dead_zygote_is_a_sandbox_error_not_a_verdict(sb: Sandbox, zygote) -> None:
    # the zygote killed while a test runs (an out-of-memory kill, a crash): every test of the
    # batch is SE with the reason, never a verdict on the program
    zygote(True)
    # earlier tests' batches end off their callers' path (the reaper): one whose zygote still
    # held a killed test's process was once found instead of ours, and this batch ran OK/OK
    sb.settle_warm()
    earlier = _zygotes()
    # the first test spins for 3 s of CPU: the window to kill the zygote in widens with the
    # machine's load, as the search for the zygote below slows (a sleep's window did not: under
    # load the search once found the zygote after both tests were over, OK/OK)
    prog = sb.compile("python3", "import time\nif input() == 'spin':\n    t = time.process_time()\n"
                                 "    while time.process_time() - t < 3:\n        pass\nprint('done')\n")
    results: list[RunResult] = []
    runner = threading.Thread(target=lambda: results.extend(sb.run(prog, [b"spin\n", b"go\n"], Limits(time_s=5))))
    runner.start()
    # killed once it has forked the first test (the spinner): a zygote that dies before it has
    # the program, or while compiling it, makes the batch run exec'd instead (a compile over the
    # memory limit is the program's MLE), which is not what this test is about
    killed = None
    deadline = time.monotonic() + 20
    while killed is None and time.monotonic() < deadline:
        found = _our_zygote(exclude=earlier)
        if found is not None and _children(found):
            killed = found
        time.sleep(0.05)
    assert killed is not None
    os.kill(killed, signal.SIGKILL)
    runner.join(timeout=60)
    assert [r.verdict for r in results] == [Verdict.SE, Verdict.SE], results
    assert all(r.stderr.startswith("sandbox error:") for r in results), results


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _zygotes() -> set[int]:
    """The processes running zygote.py whose parent is a runner (a zygote's forks run it too)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or b"/.hts-bin/zygote.py" not in (entry / "cmdline").read_bytes():
                continue
            pid = int(entry.name)
            if b"hts-runner" in Path(f"/proc/{parent_pid(pid)}/cmdline").read_bytes():
                found.add(pid)
        except (OSError, ValueError, IndexError):
            continue
    return found


def _our_zygote(exclude: set[int]) -> int | None:
    """This process's batch's zygote: a zygote (not in `exclude`, those there before the batch)
    whose ancestors include us (other tests may run beside)."""
    for pid in sorted(_zygotes() - exclude):
        try:
            ancestor = pid
            while ancestor > 1:
                ancestor = parent_pid(ancestor)
                if ancestor == os.getpid():
                    return pid
        except (OSError, ValueError, IndexError):
            continue
    return None
