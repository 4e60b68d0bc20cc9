"""A package's own judges in the real sandbox: every testlib example checker on outputs crafted
for it (right, wrong, presentation error, an answer file that makes it FAIL), Kattis output
and input validators, and the ways a judge fails (FAIL, crash, timeout, signal, compile
error, no testlib.h) which are judging failures, never the program's wrong answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from problems.packages.external import (
    Case,
    ExternalJudge,
    Kind,
    Outcome,
    judge_compile,
    judge_from_dir,
    refusal,
    run_judge,
    shim_source,
)
from sandbox import Limits, Sandbox

# checker: (answer, right output, wrong output, presentation error or None, answer that FAILs or None)
CRAFTED: dict[str, tuple[str, str, str, str | None, str | None]] = {
    "acmp.cpp": ("1.5", "1.5000001", "1.6", "abc", "x"),
    "caseicmp.cpp": ("Case 1: 5\nCase 2: 7\n", "Case 1: 5\n\nCase 2:   7", "Case 1: 5\nCase 2: 8\n", "Case 1 5\n",
                     "Kase 1: 5\n"),
    "casencmp.cpp": ("Case 1: 1 2\nCase 2: 3\n", "Case 1: 1   2\nCase 2: 3", "Case 1: 1 3\nCase 2: 3\n",
                     "Case 1: 1 x\nCase 2: 3\n", "Kase 1: 1\n"),
    "casewcmp.cpp": ("Case 1: a b\nCase 2: c\n", "Case 1: a\nb Case 2: c", "Case 1: a c\nCase 2: c\n",
                     "Kase 1: a b\n", "Kase 1: a\n"),
    "dcmp.cpp": ("1.5", "1.5000001", "1.6", "abc", "x"),
    "fcmp.cpp": ("a b\nc\n", "a b\nc\n", "a  b\nc\n", None, None),
    "hcmp.cpp": ("123456789012345678901234567890", "123456789012345678901234567890", "123456789012345678901234567891",
                 "12a", "abc"),
    "icmp.cpp": ("42", "42\n", "43", "x", "y"),
    "lcmp.cpp": ("a b\nc\n", "a  b\nc", "a b c\n", None, None),
    "ncmp.cpp": ("1 2 3", "1\n2\n3\n", "1 2 4", "1 2 x", "1 2 y"),
    "nyesno.cpp": ("YES NO", "yes no", "NO NO", "YES MAYBE", "YES PERHAPS"),
    "rcmp.cpp": ("1.5", "1.5000001", "1.6", "abc", "x"),
    "rcmp4.cpp": ("1.0 2.0", "1.00001 2", "1.1 2.0", "1.0 x", "1.0 y"),
    "rcmp6.cpp": ("1.0 2.0", "1.0000001 2", "1.0001 2.0", "1.0 x", "1.0 y"),
    "rcmp9.cpp": ("1.0 2.0", "1.0000000001 2", "1.000001 2.0", "1.0 x", "1.0 y"),
    "rncmp.cpp": ("1.0 2.0", "1.00001 2", "1.1 2.0", "1.0 x", "1.0 y"),
    "uncmp.cpp": ("1 2 3", "3 1 2", "1 2 2", "1 2 x", "1 y"),
    "wcmp.cpp": ("a b", "a\nb", "a c", None, None),
    "yesno.cpp": ("YES", "yes", "NO", "MAYBE", "PERHAPS"),
}
# quitp: points, which pass/fail judging cannot use
SCORING = ("pointscmp.cpp", "pointsinfo.cpp")


def _checker(testlib_dir: Path, name: str) -> ExternalJudge:
    return ExternalJudge(
        kind=Kind.TESTLIB_CHECKER, language="cpp", entry=f"checkers/{name}",
        files=((f"checkers/{name}", (testlib_dir / "checkers" / name).read_text()),
               ("testlib.h", (testlib_dir / "testlib.h").read_text())),
    )


def test_the_crafted_table_covers_every_example_checker(testlib_dir: Path) -> None:
    assert sorted(CRAFTED) + sorted(SCORING) == sorted(p.name for p in (testlib_dir / "checkers").glob("*.cpp")) \
        or set(CRAFTED) | set(SCORING) == {p.name for p in (testlib_dir / "checkers").glob("*.cpp")}


def test_every_testlib_example_checker_judges_by_its_exit_code(sb: Sandbox, testlib_dir: Path) -> None:
    # checkers of the same bytes (acmp.cpp and rcmp.cpp) are built under the first one's name: the
    # same source, one compile of testlib.h (seconds of CPU), not one per name
    first_of: dict[str, str] = {}
    built_as = {name: first_of.setdefault((testlib_dir / "checkers" / name).read_text(), name)
                for name in sorted(CRAFTED)}

    def judge(name: str) -> tuple[str, list[tuple[str, str]]]:
        answer, right, wrong, pe, fail = CRAFTED[name]
        cases = [Case(b"1\n", right.encode(), answer.encode()), Case(b"1\n", wrong.encode(), answer.encode())]
        if pe is not None:
            cases.append(Case(b"1\n", pe.encode(), answer.encode()))
        if fail is not None:
            cases.append(Case(b"1\n", right.encode(), fail.encode()))
        outcomes = run_judge(sb, _checker(testlib_dir, built_as[name]), cases)
        return name, [("FAILED" if o.failed else o.verdict, o.message) for o in outcomes]

    # one after another: each compile of testlib.h is seconds of CPU, on a shared machine
    results = dict(judge(name) for name in sorted(CRAFTED))
    for name, (_, _, _, pe, fail) in CRAFTED.items():
        got = [verdict for verdict, _ in results[name]]
        want = ["AC", "WA"] + (["PE"] if pe is not None else []) + (["FAILED"] if fail is not None else [])
        assert got == want, (name, results[name])
        # the checker's own message is kept: testlib's result word opens it
        assert results[name][0][1].startswith("ok"), (name, results[name][0])
        assert results[name][1][1].startswith("wrong answer"), (name, results[name][1])
        if fail is not None:
            assert "FAIL" in results[name][-1][1], (name, results[name][-1])


@pytest.mark.parametrize("name", SCORING)
def test_a_scoring_checker_s_points_are_a_judging_failure_not_a_verdict(sb: Sandbox, testlib_dir: Path,
                                                                       name: str) -> None:
    [outcome] = run_judge(sb, _checker(testlib_dir, name), [Case(b"1\n", b"1.0", b"1.0")])
    assert outcome.failed and outcome.exit_code == 7 and "points" in outcome.message


BROKEN = {
    "fail": ('quitf(_fail, "the answer file is broken");', "failed (FAIL)"),
    "crash": ("int *p = nullptr; volatile int x = *p; (void)x;", "killed by signal 11"),
    "abort": ("abort();", "killed by signal 6"),
    "timeout": ("volatile unsigned long n = 0; for (;;) ++n;", "exceeded its time limit"),
    "exit5": ("_exit(5);", "failed (exit code 5)"),
}


def broken_checker(testlib_h: str, body: str) -> ExternalJudge:
    source = ('#include "testlib.h"\n#include <cstdlib>\n#include <unistd.h>\nint main(int argc, char* argv[]) {\n'
              f"    registerTestlibCmd(argc, argv);\n    {body}\n    quitf(_ok, \"fine\");\n}}\n")
    return ExternalJudge(kind=Kind.TESTLIB_CHECKER, language="cpp", entry="check.cpp",
                         files=(("check.cpp", source), ("testlib.h", testlib_h)))


def checker_of_every_failure(testlib_h: str) -> ExternalJudge:
    """One checker for every way of BROKEN, chosen by the last word of the test's input (any other
    word: a fair comparison of the first numbers): one compile of testlib.h, seconds of CPU, serves
    them all, here and in tests/packages/test_packages_api.py (the compile cache)."""
    branches = "".join(f'if (how == "{how}") {{ {body} }}\n    ' for how, (body, _) in sorted(BROKEN.items()))
    return broken_checker(testlib_h, "std::string how;\n    while (!inf.seekEof()) how = inf.readToken();\n    "
                          f'{branches}if (ouf.readLong() != ans.readLong()) quitf(_wa, "sums differ");')


@pytest.fixture(scope="module")
def failures(sb: Sandbox, testlib_dir: Path) -> dict[str, Outcome]:
    """Each way of failing judged once, all in one batch of the one checker."""
    ways = sorted(BROKEN)
    outcomes = run_judge(sb, checker_of_every_failure((testlib_dir / "testlib.h").read_text()),
                         [Case(how.encode(), b"1", b"1") for how in ways], Limits(time_s=1.0, memory_mb=512, output_kb=512))
    return dict(zip(ways, outcomes, strict=True))


@pytest.mark.parametrize("how", sorted(BROKEN))
def test_a_checker_that_fails_crashes_or_hangs_is_a_judging_failure(failures: dict[str, Outcome], how: str) -> None:
    outcome, said = failures[how], BROKEN[how][1]
    assert outcome.failed and outcome.verdict == "", outcome
    assert said in outcome.message, outcome.message


def test_the_checker_of_every_failure_judges_fairly_on_any_other_input(sb: Sandbox, testlib_dir: Path) -> None:
    """What test_packages_api's working checker relies on: the same checker, its inputs not a way of BROKEN."""
    outcomes = run_judge(sb, checker_of_every_failure((testlib_dir / "testlib.h").read_text()),
                         [Case(b"1 2\n", b"3\n", b"3\n"), Case(b"1 2\n", b"-1\n", b"3\n")])
    assert [(o.failed, o.verdict, o.message) for o in outcomes] == [(False, "AC", "ok fine"),
                                                                     (False, "WA", "wrong answer sums differ")], outcomes


def test_a_checker_that_does_not_compile_fails_every_case_with_the_compiler_s_message(
        sb: Sandbox, testlib_dir: Path) -> None:
    judge = broken_checker((testlib_dir / "testlib.h").read_text(), "this is not C++;")
    outcomes = run_judge(sb, judge, [Case(b"1", b"1", b"1")] * 2)
    assert [o.failed for o in outcomes] == [True, True]
    assert "did not compile" in outcomes[0].message and "error" in outcomes[0].message


def test_a_checker_without_testlib_h_is_refused_before_anything_runs(monkeypatch: pytest.MonkeyPatch,
                                                                      settings: Any) -> None:
    monkeypatch.delenv("HARDTESTS_TESTLIB_H", raising=False)
    settings.HARDTESTS_TESTLIB_H = ""
    judge = ExternalJudge(kind=Kind.TESTLIB_CHECKER, language="cpp", entry="check.cpp",
                          files=(("check.cpp", '#include "testlib.h"\nint main(){}\n'),))

    class NoSandbox:
        def compile(self, *args: object, **kwargs: object) -> None:
            raise AssertionError("nothing may run for a judge that cannot be built")

    reason = refusal(judge)
    assert reason is not None and "testlib.h" in reason and "HARDTESTS_TESTLIB_H" in reason
    [outcome] = run_judge(NoSandbox(), judge, [Case(b"1")])  # type: ignore[arg-type]
    assert outcome.failed and outcome.message == reason


def test_the_configured_testlib_h_serves_a_checker_that_brings_none(sb: Sandbox, testlib_dir: Path,
                                                                    settings: Any) -> None:
    settings.HARDTESTS_TESTLIB_H = str(testlib_dir / "testlib.h")
    # named as in the test of every example checker: the header inlined from the settings makes
    # the very source built there, a compile cache hit, not seconds of CPU again
    name = "checkers/wcmp.cpp"
    judge = ExternalJudge(kind=Kind.TESTLIB_CHECKER, language="cpp", entry=name,
                          files=((name, (testlib_dir / name).read_text()),))
    assert refusal(judge) is None
    assert shim_source(judge) == shim_source(_checker(testlib_dir, "wcmp.cpp"))
    outcomes = run_judge(sb, judge, [Case(b"", b"a b", b"a b"), Case(b"", b"a", b"a b")])
    assert [o.verdict for o in outcomes] == ["AC", "WA"]


def test_a_judge_s_tool_is_built_as_one_whole_program_and_a_contestant_s_program_is_not(sb: Sandbox) -> None:
    # -fwhole-program drops what main never calls before GCC optimises it (testlib.h's hundreds
    # of functions: the compile of a testlib tool is 2.3x cheaper); a contestant's program keeps
    # the judges' usual flags, so its unused function is still in the binary
    source = "int helper_nobody_calls(int x) { return 3 * x + 1; }\nint main() { return 0; }\n"
    tool, program = judge_compile(sb, "cpp", source), sb.compile("cpp", source)
    assert tool.ok and program.ok and tool.path != program.path
    assert b"helper_nobody_calls" not in (Path(tool.path) / "main").read_bytes()
    assert b"helper_nobody_calls" in (Path(program.path) / "main").read_bytes()


def test_a_kattis_output_validator_reads_42_43_and_keeps_its_feedback(sb: Sandbox, kattis_dir: Path) -> None:
    judge = judge_from_dir(Kind.KATTIS_OUTPUT_VALIDATOR,
                           kattis_dir / "different" / "output_validators" / "different_validator")
    assert (judge.entry, judge.language) == ("validate.cc", "cpp")
    outcomes = run_judge(sb, judge, [Case(b"10 12\n", b"2\n", b"2\n"), Case(b"10 12\n", b"3\n", b"2\n"),
                                     Case(b"10 12\n", b"2\n", b"not a number\n")])
    assert [(o.verdict, o.exit_code) for o in outcomes[:2]] == [("AC", 42), ("WA", 43)]
    assert outcomes[1].feedback["judgemessage.txt"].startswith("judge answer = 2 but submission output = 3")
    # the judge's answer file is broken: validate.h's judge_error aborts, a judging failure
    assert outcomes[2].failed and "signal 6" in outcomes[2].message


def test_a_python_kattis_input_validator_accepts_with_42(sb: Sandbox, kattis_dir: Path) -> None:
    judge = judge_from_dir(Kind.KATTIS_INPUT_VALIDATOR, kattis_dir / "hello" / "input_validators")
    assert judge.language == "python3"
    outcomes = run_judge(sb, judge, [Case(b""), Case(b"unexpected\n")])
    assert [o.verdict for o in outcomes] == ["AC", "WA"]
    assert "AssertionError" in outcomes[1].message


def test_a_testlib_validator_accepts_with_0(sb: Sandbox, testlib_dir: Path) -> None:
    name = "nval.cpp"
    judge = ExternalJudge(kind=Kind.TESTLIB_VALIDATOR, language="cpp", entry=name,
                          files=((name, (testlib_dir / "validators" / name).read_text()),
                                 ("testlib.h", (testlib_dir / "testlib.h").read_text())))
    outcomes = run_judge(sb, judge, [Case(b"3\n1 2 3\n"), Case(b"3\n1 2\n"), Case(b"3 \n1 2 3\n")])
    assert [o.verdict for o in outcomes] == ["AC", "WA", "WA"], outcomes
