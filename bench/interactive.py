"""Interactive judging's per-test overhead, over a bare pipe pair, on the same two programs.

    .venv/bin/python bench/interactive.py [--tests 40] [--rounds 5] [--queries 10] [--backend bwrap|docker]

The program (C++ a+b, answering --queries queries) and the interactor (C++, reads its
prelude line "n", asks n queries, checks the answers) are compiled once in the sandbox.
"bare" runs the same two binaries as plain subprocesses joined by two os.pipe() pairs, one
test after another. "sandboxed" is sandbox/interactive.py: an InteractiveSession (two
sandboxes, opened once and amortised over the tests, as judging does) running each test
through the host's relay, which passes every byte on and logs it (the interaction log).
The best of --rounds rounds is kept for each (a shared, noisy machine); the overhead is the
difference per test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox import Limits, get_sandbox  # noqa: E402
from sandbox.interactive import InteractiveSession  # noqa: E402

PROGRAM = r"""#include <cstdio>
int main() { long long a, b; while (scanf("%lld %lld", &a, &b) == 2) { printf("%lld\n", a + b); fflush(stdout); } }
"""
INTERACTOR = r"""#include <cstdio>
int main() {
    int n; if (scanf("%d", &n) != 1) return 3;
    for (int i = 0; i < n; i++) {
        printf("%d %d\n", i, 2 * i); fflush(stdout);
        long long got; if (scanf("%lld", &got) != 1 || got != 3LL * i) return 1;
    }
    return 0;
}
"""


def bare(program: Path, interactor: Path, prelude: bytes) -> None:
    """One test on a bare pipe pair: the interactor's stdin starts with the prelude."""
    to_prog_r, to_prog_w = os.pipe()
    to_int_r, to_int_w = os.pipe()
    os.write(to_int_w, prelude)
    judge = subprocess.Popen([str(interactor)], stdin=to_int_r, stdout=to_prog_w)
    prog = subprocess.Popen([str(program)], stdin=to_prog_r, stdout=to_int_w)
    for fd in (to_prog_r, to_prog_w, to_int_r, to_int_w):
        os.close(fd)
    if prog.wait() != 0 or judge.wait() != 0:
        raise SystemExit("the bare run failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--backend", choices=("bwrap", "docker"), default="bwrap")
    args = parser.parse_args()
    sb = get_sandbox(args.backend)
    program, interactor = sb.compile("cpp", PROGRAM), sb.compile("cpp", INTERACTOR)
    assert program.ok and interactor.ok, (program.message, interactor.message)
    prelude = f"{args.queries}\n".encode()
    bare_best = sandboxed_best = float("inf")
    logged = 0
    for _ in range(args.rounds):
        started = time.perf_counter()
        for _ in range(args.tests):
            bare(Path(program.path) / "main", Path(interactor.path) / "main", prelude)
        bare_best = min(bare_best, (time.perf_counter() - started) / args.tests)
        started = time.perf_counter()
        session = InteractiveSession(sb, program, interactor, Limits(time_s=2), Limits(time_s=5))
        try:
            for _ in range(args.tests):
                run = session.run(prelude)
                if run.program.verdict != "OK" or run.interactor.exit_code != 0:
                    raise SystemExit(f"the sandboxed run failed: {run}")
                logged = run.log.total
        finally:
            session.close()
        sandboxed_best = min(sandboxed_best, (time.perf_counter() - started) / args.tests)
    print(f"interactive a+b, {args.queries} queries a test, {args.tests} tests, best of {args.rounds} rounds")
    print(f"  bare pipe pair      {bare_best * 1000:8.2f} ms/test")
    print(f"  sandboxed ({args.backend:6}) {sandboxed_best * 1000:8.2f} ms/test (two sandboxes' start amortised, "
          f"{logged} bytes logged a test)")
    print(f"  overhead            {(sandboxed_best - bare_best) * 1000:8.2f} ms/test")


if __name__ == "__main__":
    main()
