"""Python interactors (problems/packages/interactive.py's Python shim): a Kattis-style
interactor in Python (`interactor input answer feedback_dir`, the program on its
stdin/stdout, exit 42 accept / 43 reject) judges an interactive a+b program right and wrong
on both sandbox backends, and the judged test carries what the two sides said."""

from __future__ import annotations

import pytest

from problems.packages.interactive import KATTIS, Interactor, judge_runs, refusal
from sandbox import Limits, Sandbox
from tests.sandbox.conftest import docker_sb  # noqa: F401 - the Docker backend's fixture

# asks each pair of the input, checks the sums against the answer file, says why it rejects;
# a helper module beside it, imported as Kattis runs a Python validator
INTERACTOR = """\
import sys
from helper import pairs

feedback = sys.argv[3]
expected = open(sys.argv[2]).read().split()
for (a, b), want in zip(pairs(open(sys.argv[1]).read()), expected):
    print(a, b, flush=True)
    got = sys.stdin.readline().strip()
    if got != want:
        with open(feedback + "judgemessage.txt", "w") as fh:
            fh.write("%s + %s: expected %s, got %r" % (a, b, want, got))
        sys.exit(43)
sys.exit(42)
"""
HELPER = "def pairs(text):\n    n, *rest = map(int, text.split())\n    return list(zip(rest[0::2], rest[1::2]))[:n]\n"
RIGHT = "#include <iostream>\nint main(){long long a,b;while(std::cin>>a>>b)std::cout<<a+b<<std::endl;}\n"
WRONG = "a, b = map(int, input().split())\nprint(a - b, flush=True)\n"
TESTS = [(b"2\n1 2\n3 4\n", b"3\n7\n"), (b"1\n10 20\n", b"30\n")]
PYTHON_INTERACTOR = Interactor(kind=KATTIS, language="python3", entry="interact.py",
                               files=(("helper.py", HELPER), ("interact.py", INTERACTOR)))


@pytest.fixture(params=["bwrap", "docker"])
def backend(request: pytest.FixtureRequest) -> Sandbox:
    return request.getfixturevalue("sb" if request.param == "bwrap" else "docker_sb")  # type: ignore[no-any-return]


def test_a_python_interactor_judges_a_plus_b_right_and_wrong(backend: Sandbox) -> None:
    sb = backend
    right = judge_runs(sb, PYTHON_INTERACTOR, sb.compile("cpp", RIGHT), TESTS, Limits(time_s=2))
    assert [j.verdict for j in right] == ["AC", "AC"], [j.message for j in right]
    assert [j.log.text() for j in right] == ["< 1 2\n> 3\n< 3 4\n> 7\n", "< 10 20\n> 30\n"]
    wrong = judge_runs(sb, PYTHON_INTERACTOR, sb.compile("python3", WRONG), TESTS, Limits(time_s=2))
    assert [j.verdict for j in wrong] == ["WA", "WA"]
    assert wrong[0].message == "1 + 2: expected 3, got '-1'"
    assert wrong[0].log.text() == "< 1 2\n> -1\n"


def test_interactors_in_languages_the_sandbox_does_not_run_are_refused_with_the_reason() -> None:
    assert refusal(PYTHON_INTERACTOR) is None
    java = Interactor(kind=KATTIS, language="java", entry="I.java", files=(("I.java", "class I {}"),))
    assert refusal(java) == "an interactor in 'java' is not supported here (C++ and Python 3 interactors are)"
