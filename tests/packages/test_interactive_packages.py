"""Interactive problems judged with their interactor (problems/packages/interactive.py): the Kattis
`guess` example's labelled submissions get their folders' verdicts through `judge_package`,
and testlib's example interactor (with a testlib checker on its output file) judges an
interactive a+b program right and wrong; an interactor that FAILs is a judging error (SE)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from problems.packages.external import ExternalJudge, Kind
from problems.packages.interactive import KATTIS, TESTLIB, Interactor, judge_runs, parse_report
from sandbox import Limits, Sandbox

RIGHT = "#include <iostream>\nint main(){long long a,b;while(std::cin>>a>>b)std::cout<<a+b<<std::endl;}\n"
WRONG = "#include <iostream>\nint main(){long long a,b;while(std::cin>>a>>b)std::cout<<a-b<<std::endl;}\n"
CRASH = "#include <cstdlib>\nint main(){abort();}\n"
TESTS = [(b"2\n1 2\n3 4\n", b"3\n7\n"), (b"1\n10 20\n", b"30\n")]


def _a_plus_b(testlib_dir: Path) -> tuple[Interactor, ExternalJudge]:
    header = (testlib_dir / "testlib.h").read_text()
    interactor = Interactor(kind=TESTLIB, language="cpp", entry="interactor.cpp", files=(
        ("interactor.cpp", (testlib_dir / "interactors" / "interactor-a-plus-b.cpp").read_text()),
        ("testlib.h", header)))
    checker = ExternalJudge(kind=Kind.TESTLIB_CHECKER, language="cpp", entry="ncmp.cpp", files=(
        ("ncmp.cpp", (testlib_dir / "checkers" / "ncmp.cpp").read_text()), ("testlib.h", header)))
    return interactor, checker


@pytest.mark.slow
def test_the_testlib_example_interactor_judges_a_plus_b_right_and_wrong(sb: Sandbox, testlib_dir: Path) -> None:
    interactor, checker = _a_plus_b(testlib_dir)
    limits = Limits(time_s=2)
    right = judge_runs(sb, interactor, sb.compile("cpp", RIGHT), TESTS, limits, checker=checker)
    assert [j.verdict for j in right] == ["AC", "AC"]
    # the interactor's output file (testlib's tout) is what the checker judged
    assert [j.output for j in right] == [b"3\n7\n", b"30\n"]
    assert "2 queries processed" in right[0].message
    # what the two said, in order: the interactor's queries ("<"), the program's sums (">")
    assert [j.log.text() for j in right] == ["< 1 2\n> 3\n< 3 4\n> 7\n", "< 10 20\n> 30\n"]
    wrong = judge_runs(sb, interactor, sb.compile("cpp", WRONG), TESTS, limits, checker=checker)
    assert [j.verdict for j in wrong] == ["WA", "WA"]
    assert wrong[0].output == b"-1\n-1\n"
    assert "expected: '3', found: '-1'" in wrong[0].message
    assert wrong[0].log.text() == "< 1 2\n> -1\n< 3 4\n> -1\n"
    crash = judge_runs(sb, interactor, sb.compile("cpp", CRASH), TESTS[:1], limits, checker=checker)
    assert crash[0].verdict == "RE" and not crash[0].interactor_first


@pytest.mark.slow
def test_an_interactor_that_fails_is_a_judging_error_never_the_program_s_wrong_answer(
        sb: Sandbox, testlib_dir: Path) -> None:
    interactor, checker = _a_plus_b(testlib_dir)
    # the interactor cannot read this test: testlib's FAIL (exit 3), whatever the program does
    for source in (RIGHT, WRONG):
        [judged] = judge_runs(sb, interactor, sb.compile("cpp", source), [(b"x\n", b"1\n")], Limits(time_s=2),
                              checker=checker)
        assert judged.verdict == "SE"
        assert judged.message.startswith("judging error: the interactor failed (FAIL)")
    broken = Interactor(kind=TESTLIB, language="cpp", entry="i.cpp", files=(("i.cpp", "int main( {"),))
    [judged] = judge_runs(sb, broken, sb.compile("cpp", RIGHT), TESTS[:1], Limits(time_s=2))
    assert judged.verdict == "SE" and "did not compile" in judged.message
    crashing = Interactor(kind=KATTIS, language="cpp", entry="v.cpp", files=(
        ("v.cpp", "#include <cstdlib>\nint main(){abort();}\n"),))
    [judged] = judge_runs(sb, crashing, sb.compile("cpp", RIGHT), TESTS[:1], Limits(time_s=2))
    assert judged.verdict == "SE" and "signal 6" in judged.message


def test_the_shim_s_report_is_read_back() -> None:
    report = "noise\nHTS-INTERACT 1\nexit 43\nstderr 0 \njudgemessage.txt 5 6869210a\noutput 900 3132\n"
    assert parse_report(report) == ("exit", 43, {"stderr": (b"", 0), "judgemessage.txt": (b"hi!\n", 5),
                                                   "output": (b"12", 900)})
    assert parse_report("no report") is None


def _fidelity(pid: str) -> dict[str, Any]:
    out = io.StringIO()
    try:
        call_command("judge_package", pid, "--json", stdout=out)
    except CommandError:
        pass  # a mismatch: the assertions below say which
    result: list[dict[str, Any]] = json.loads(out.getvalue())
    return result[0]


@pytest.mark.django_db
@pytest.mark.slow
def test_every_labelled_submission_of_guess_gets_its_folder_s_verdict(kattis_dir: Path, sb: Sandbox) -> None:
    call_command("import_dataset", "icpc", str(kattis_dir / "guess"), stdout=io.StringIO())
    report = _fidelity("icpc:guess")
    assert "not_judged" not in report, report
    got = {s["name"]: (s["result"], s["result_high"]) for s in report["submissions"]}
    assert report["mismatches"] == 0, json.dumps(report, indent=1)
    assert all(s["ok"] for s in report["submissions"]), json.dumps(report, indent=1)
    # guess's C submission is judged where the sandbox runs C (gcc), else refused at import
    c_submission = {"run_time_error/guess_rte.c": ("RE", "RE")} if "run_time_error/guess_rte.c" in got else {}
    assert got == {
        **c_submission,
        "accepted/guess.cc": ("AC", "AC"), "accepted/guess.java": ("AC", "AC"),
        "run_time_error/guess_rte_after_correct.cc": ("RE", "RE"),
        "time_limit_exceeded/guess_no_flush.cc": ("TLE", "TLE"),
        "time_limit_exceeded/guess_tle_after_correct.cc": ("TLE", "TLE"),
        # these end after the validator has rejected them (a crash, a loop): its verdict stands
        "wrong_answer/GuessCrash.java": ("WA", "WA"), "wrong_answer/guess_tle.cc": ("WA", "WA"),
        "wrong_answer/guess.py": ("WA", "WA"), "wrong_answer/guess_0.cc": ("WA", "WA"),
        "wrong_answer/guess_modulo.py": ("WA", "WA"), "wrong_answer/guess_random.cc": ("WA", "WA"),
    }
