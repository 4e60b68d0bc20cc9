"""Interactive runs (sandbox/interactive.py): a program and an interactor in two sandboxes joined
by FIFOs, each under its own limits; whichever side ends first, the other sees the end of
its pipes as with a bare pipe pair; the interactor's CPU time never counts against the
program, and a program waiting while the interactor computes is not idle."""

from __future__ import annotations

import pytest

import sandbox.bwrap
from sandbox import Limits, Sandbox, Verdict
from sandbox.base import BatchSpec
from sandbox.interactive import LOG_KEPT, run_interactive

# reads the prelude (one line "a b"), asks the program, checks its answer
A_PLUS_B = r"""
import sys
a, b = map(int, sys.stdin.readline().split())
print(a, b, flush=True)
got = sys.stdin.readline()
sys.stderr.write("got %r\n" % got)
sys.exit(0 if got.strip() == str(a + b) else 1)
"""
RIGHT = "a, b = map(int, input().split())\nprint(a + b)\n"


@pytest.fixture(params=["bwrap", "docker"])
def backend(request: pytest.FixtureRequest) -> Sandbox:
    return request.getfixturevalue("sb" if request.param == "bwrap" else "docker_sb")  # type: ignore[no-any-return]
WRONG = "a, b = map(int, input().split())\nprint(a - b)\n"


def test_a_plus_b_between_two_sandboxes(backend: Sandbox) -> None:
    sb = backend
    interactor = sb.compile("python3", A_PLUS_B)
    right = run_interactive(sb, sb.compile("python3", RIGHT), interactor, [b"1 2\n", b"40 2\n"], Limits(time_s=2),
                            Limits(time_s=5))
    assert [r.program.verdict for r in right] == [Verdict.OK, Verdict.OK]
    assert [(r.interactor.verdict, r.interactor.stderr) for r in right] == [
        (Verdict.OK, "got '3\\n'\n"), (Verdict.OK, "got '42\\n'\n")]
    # nothing of the program's stdout is captured: it went to the interactor
    assert all(r.program.stdout == b"" for r in right)
    wrong = run_interactive(sb, sb.compile("cpp", "#include <cstdio>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);"
                                           "printf(\"%d\\n\",a-b);}"), interactor, [b"1 2\n"], Limits(time_s=2),
                            Limits(time_s=5))
    assert wrong[0].program.verdict == Verdict.OK
    assert (wrong[0].interactor.exit_code, wrong[0].interactor.stderr) == (1, "got '-1\\n'\n")


@pytest.mark.serial
def test_the_interactor_s_cpu_time_never_counts_against_the_program(backend: Sandbox) -> None:
    sb = backend
    # the interactor computes ~1.2 s of CPU before it asks; the program's limit is 0.5 s (its
    # wall-clock backstop alone, 1.25 s, would have stopped it as idle)
    busy = A_PLUS_B.replace("print(a, b, flush=True)", "import time\nt = time.process_time()\n"
                            "while time.process_time() - t < 1.2: pass\nprint(a, b, flush=True)")
    [run] = run_interactive(sb, sb.compile("python3", RIGHT), sb.compile("python3", busy), [b"1 2\n"],
                            Limits(time_s=0.5), Limits(time_s=5))
    assert run.program.verdict == Verdict.OK, run.program
    assert run.program.time_ms < 300
    assert run.interactor.verdict == Verdict.OK and run.interactor.time_ms >= 1100
    assert run.program.wall_ms >= 1100


def test_the_side_that_ends_first_gives_the_other_the_end_of_its_pipes(backend: Sandbox) -> None:
    sb = backend
    # the interactor leaves at once: the program reading its stdin gets EOF, not a hang
    leaves = "import sys\nsys.stdin.readline()\nsys.stderr.write('bye\\n')\n"
    reads = "import sys\ndata = sys.stdin.read()\nsys.stderr.write('eof after %d bytes\\n' % len(data))\n"
    [run] = run_interactive(sb, sb.compile("python3", reads), sb.compile("python3", leaves), [b"1 2\n"],
                            Limits(time_s=2), Limits(time_s=5))
    assert run.interactor_first
    assert (run.program.verdict, run.program.stderr) == (Verdict.OK, "eof after 0 bytes\n")
    # the program leaves at once: the interactor reading gets EOF
    waits = "import sys\nsys.stdin.readline()\nrest = sys.stdin.read()\nsys.stderr.write('eof %r\\n' % rest)\n"
    [run] = run_interactive(sb, sb.compile("cpp", "int main(){return 3;}"), sb.compile("python3", waits), [b"1 2\n"],
                            Limits(time_s=2), Limits(time_s=5))
    assert not run.interactor_first
    assert (run.program.verdict, run.program.exit_code) == (Verdict.RE, 3)
    assert (run.interactor.verdict, run.interactor.stderr) == (Verdict.OK, "eof ''\n")


def test_a_deadlock_is_the_program_s_time_limit_and_ends(sb: Sandbox) -> None:
    # both read: the program never answers (an unflushed write, a wrong protocol)
    silent = "import sys\nsys.stdin.read()\n"
    waits = "import sys\nsys.stdin.readline()\nsys.stdin.read()\nsys.stderr.write('eof\\n')\n"
    [run] = run_interactive(sb, sb.compile("python3", silent), sb.compile("python3", waits), [b"1 2\n"],
                            Limits(time_s=0.5), Limits(time_s=1))
    assert run.program.verdict == Verdict.TLE and run.program.time_ms < 500
    # then the interactor saw the end of the program's output
    assert (run.interactor.verdict, run.interactor.stderr) == (Verdict.OK, "eof\n")


def test_an_interactor_that_never_reads_the_test_is_its_failure(sb: Sandbox) -> None:
    # a prelude over the pipe's buffer, and an interactor that exits without reading it: the
    # program's run says nothing (SE, as the judging failure it is), whatever it did meanwhile
    [first, second] = run_interactive(sb, sb.compile("python3", RIGHT), sb.compile("python3", "pass\n"),
                                      [b"x" * 300_000, b"1 2\n"], Limits(time_s=2), Limits(time_s=2))
    assert first.prelude_unread and first.program.verdict == Verdict.SE
    assert first.interactor.verdict != Verdict.OK
    assert second.prelude_unread


def test_later_sessions_take_spare_sandboxes_and_still_talk(sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    # a worker keeps spares: an interactive batch of the same program takes one (its FIFOs
    # are linked into the spare's own inputs directory) and the talk is the same
    taken = []
    take = sandbox.bwrap.SPARES.take

    def counted_take(spec: BatchSpec) -> object:
        spare = take(spec)
        taken.append(spare is not None)
        return spare

    monkeypatch.setattr(sandbox.bwrap.SPARES, "take", counted_take)
    with sandbox.bwrap.SPARES.lock:
        sandbox.bwrap.SPARES.wanted.clear()
    interactor = sb.compile("python3", A_PLUS_B)
    program = sb.compile("cpp", "#include <cstdio>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",a+b);}")
    sb.keep_warm(1)
    try:
        for round_ in range(3):
            runs = run_interactive(sb, program, interactor, [f"{round_} 2\n".encode()], Limits(time_s=2),
                                   Limits(time_s=5))
            assert [(r.program.verdict, r.interactor.stderr) for r in runs] == [
                (Verdict.OK, f"got '{round_ + 2}\\n'\n")]
            sb.settle_warm()
    finally:
        sb.keep_warm(0)
        sb.settle_warm()
    # the first session started its own two; the later ones took spares
    # (a spare still starting when a session asks is not waited for: under load the second
    # session may start one of its own; by the third both are there)
    assert taken[:2] == [False, False] and taken[-2:] == [True, True], taken


def test_the_log_holds_the_exchanged_lines_in_order(backend: Sandbox) -> None:
    sb = backend
    # the interactor asks twice; the program answers each question
    asks = ("import sys\nsys.stdin.readline()\nfor q in ('1 2', '40 2'):\n    print(q, flush=True)\n"
            "    sys.stderr.write(sys.stdin.readline())\n")
    program = "import sys\nfor line in sys.stdin:\n    a, b = map(int, line.split())\n    print(a + b, flush=True)\n"
    [run] = run_interactive(sb, sb.compile("python3", program), sb.compile("python3", asks), [b"go\n"],
                            Limits(time_s=2), Limits(time_s=5))
    assert run.program.verdict == Verdict.OK and run.interactor.stderr == "3\n42\n"
    assert run.log.entries == [("<", b"1 2\n"), (">", b"3\n"), ("<", b"40 2\n"), (">", b"42\n")]
    assert run.log.text() == "< 1 2\n> 3\n< 40 2\n> 42\n"
    assert (run.log.total, run.log.cut) == (14, 0)
    # the prelude is the interactor's input, not part of the talk
    assert b"go" not in b"".join(data for _, data in run.log.entries)


def test_a_chatty_program_s_log_keeps_its_head_and_counts_the_rest(backend: Sandbox) -> None:
    sb = backend
    chatty = "import sys\nfor i in range(20000):\n    sys.stdout.write('line %05d\\n' % i)\n"
    reads = "import sys\nsys.stdin.readline()\nn = sum(1 for _ in sys.stdin)\nsys.stderr.write('%d\\n' % n)\n"
    [run] = run_interactive(sb, sb.compile("python3", chatty), sb.compile("python3", reads), [b"go\n"],
                            Limits(time_s=2), Limits(time_s=5))
    # every byte reached the interactor; the log kept the first 64 KiB and counted the rest
    assert run.interactor.stderr == "20000\n"
    assert (run.log.total, run.log.kept, run.log.cut) == (220_000, LOG_KEPT, 220_000 - LOG_KEPT)
    text = run.log.text()
    assert text.startswith("> line 00000\n> line 00001\n")
    assert text.endswith(f"[... {220_000 - LOG_KEPT} more bytes of 220000 not shown]\n")
    # a shorter view (the API's) is cut after whole lines and says how much it left out
    short = run.log.text(limit=40)
    assert short == "> line 00000\n> line 00001\n> line 00002\n[... 219967 more bytes of 220000 not shown]\n"


def test_the_relay_holds_no_more_than_a_bare_pipe(sb: Sandbox) -> None:
    # the program writes without blocking until its pipe is full; the interactor never reads:
    # about as with a bare pipe pair (64 KiB), not the relay's two pipes and chunk added up (132 KiB)
    fills = r"""
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>
int main() {
    fcntl(1, F_SETFL, O_NONBLOCK);
    char c[64] = {0}; long n = 0;
    /* full, then wait: the relay may still move some on; three rounds without a byte is full */
    for (int quiet = 0; quiet < 3; ) {
        long before = n; ssize_t w;
        while ((w = write(1, c, sizeof c)) > 0) n += w;
        if (errno != EAGAIN) break;
        quiet = n == before ? quiet + 1 : 0;
        usleep(100000);
    }
    fprintf(stderr, "%ld\n", n);
}
"""
    waits = "import sys, time\nsys.stdin.readline()\ntime.sleep(3)\n"
    [run] = run_interactive(sb, sb.compile("cpp", fills), sb.compile("python3", waits), [b"go\n"],
                            Limits(time_s=5), Limits(time_s=5))
    assert run.program.verdict == Verdict.OK, run.program
    held = int(run.program.stderr)
    assert 60 * 1024 <= held <= 80 * 1024, held


def test_a_program_writing_to_an_interactor_that_left_meets_a_broken_pipe(sb: Sandbox) -> None:
    floods = "#include <cstdio>\nint main(){for(;;) printf(\"spam\\n\");}"
    leaves = "import sys\nsys.stdin.readline()\nsys.stdin.readline()\n"
    [run] = run_interactive(sb, sb.compile("cpp", floods), sb.compile("python3", leaves), [b"go\n"],
                            Limits(time_s=2), Limits(time_s=5))
    assert run.interactor_first
    assert (run.program.verdict, run.program.signal) == (Verdict.RE, 13)
    assert run.log.text().startswith("> spam\n")


def test_what_a_quick_program_sent_reaches_an_interactor_that_starts_late(sb: Sandbox) -> None:
    # the program may write and end before the interactor's runner has opened its stdin: the
    # prelude, the program's line and the end after them must all still be there for it
    quick = sb.compile("cpp", "#include <cstdio>\nint main(){puts(\"7\");}")
    reads = sb.compile("python3", "import sys\nsys.stdin.readline()\nsys.stderr.write(repr(sys.stdin.read()))\n")
    runs = run_interactive(sb, quick, reads, [b"go\n"] * 10, Limits(time_s=2), Limits(time_s=5))
    assert [(r.interactor.verdict, r.interactor.stderr, r.prelude_unread) for r in runs] == [
        (Verdict.OK, "'7\\n'", False)] * 10


def test_a_side_that_stops_reading_stalls_its_peer_to_its_limit_not_the_relay(sb: Sandbox) -> None:
    # the program floods; the interactor never reads again: the program blocks on its full
    # pipe (as with a bare pipe pair) until its wall-clock backstop, the interactor sleeps to
    # its own, and the test ends with both verdicts and the flood's head in the log
    floods = "#include <cstdio>\nint main(){for(;;) printf(\"spam\\n\");}"
    sleeps = "import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n"
    [run] = run_interactive(sb, sb.compile("cpp", floods), sb.compile("python3", sleeps), [b"go\n"],
                            Limits(time_s=0.5), Limits(time_s=1))
    assert run.program.verdict == Verdict.TLE and run.program.time_ms < 500
    assert run.interactor.verdict == Verdict.TLE
    assert run.log.text().startswith("> spam\n> spam\n")
    # what the relay took of the flood: what the interactor's stdin holds and one chunk, no
    # more (the rest waited in the program's own pipe, as in a bare pipe's)
    assert 32 * 1024 <= run.log.total <= 48 * 1024, run.log.total
