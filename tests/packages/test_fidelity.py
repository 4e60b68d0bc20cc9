"""`judge_package`: every labelled submission of hello and different gets its folder's verdict,
as verifyproblem gives it (the time limit computed from the accepted submissions); guess
(interactive) is judged with its interactor; oddecho (scoring) is reported as not judged, with the reason."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from problems.models import Problem, Solution

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def _fidelity(*pids: str, options: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    out = io.StringIO()
    try:
        call_command("judge_package", *pids, "--json", *options, stdout=out)
    except CommandError:
        # the report is written before the command fails: say which submissions and why
        wrong = [{k: v for k, v in sub.items() if k != "tests"} for report in json.loads(out.getvalue())
                 for sub in report.get("submissions", []) if not sub.get("ok")]
        raise AssertionError(f"submissions without their folder's verdict: {wrong}") from None
    result: list[dict[str, Any]] = json.loads(out.getvalue())
    return result


@pytest.mark.heavy(seconds=40)
def test_every_labelled_submission_of_hello_and_different_gets_its_folder_s_verdict(kattis_dir: Path) -> None:
    call_command("import_dataset", "icpc", str(kattis_dir), stdout=io.StringIO())
    hello, different, guess, oddecho = _fidelity("icpc:hello", "icpc:different", "icpc:guess", "icpc:oddecho")
    for report in (hello, different):
        assert report["mismatches"] == 0, report
        assert all(sub["ok"] for sub in report["submissions"]), report
        # no fixed limit in either package: verifyproblem's max(1 s, ceil(slowest AC x 5)) (legacy multiplier)
        computed = report["time_limit_computed"]
        assert computed["time_limit_s"] == max(1, math.ceil(computed["slowest_accepted_ms"] * 5 / 1000)), computed
    # hello's slowest is hello_alarm.c (C), busy until SIGALRM after 1 s of wall time: its CPU time is
    # what the machine's load leaves it; different's accepted submissions take well under 200 ms
    assert different["time_limit_computed"]["time_limit_s"] == 1.0
    assert {s["name"]: s["result_high"] for s in hello["submissions"]} == {
        "accepted/hello.cc": "AC", "accepted/hello.java": "AC", "accepted/hello.py": "AC",
        "accepted/hello_alarm.c": "AC", "run_time_error/memory_limit.cc": "RE", "wrong_answer/hello.cc": "WA"}
    got = {s["name"]: s["result"] for s in different["submissions"]}
    assert got["time_limit_exceeded/different_linear_search.cc"] == "TLE"
    assert got["wrong_answer/different_no_abs.cc"] == got["wrong_answer/different_int.cc"] == "WA"
    assert different["time_limit_high_s"] == 4.0  # time_safety_margin 4
    assert Problem.objects.get(source="icpc", pid="different").time_limit_ms == 1000
    # interactive: judged against its interactor (tests/packages/test_interactive_packages.py)
    assert "not_judged" not in guess and guess["mismatches"] == 0 and guess["judged"] == 12  # guess_rte.c too
    assert "scoring" in oddecho["not_judged"]


def test_a_submission_filter_judges_only_what_it_finds_and_keeps_the_stored_limit(kattis_dir: Path) -> None:
    # verifyproblem -s: the filter searches "folder/file"; only its accepted submissions bound a
    # computed limit, which is reported and not kept (a subset's limit is not the package's)
    call_command("import_dataset", "icpc", str(kattis_dir / "hello"), stdout=io.StringIO())
    Problem.objects.filter(source="icpc", pid="hello").update(time_limit_ms=7000)
    [wrong] = _fidelity("icpc:hello", options=("--submission-filter", "^wrong_answer/"))
    assert [(s["name"], s["result"]) for s in wrong["submissions"]] == [("wrong_answer/hello.cc", "WA")], wrong
    assert wrong["filtered_out"] == 5 and wrong["mismatches"] == 0
    assert (wrong["time_limit_s"], wrong["time_limit_computed"]) == (7.0, {
        "note": "no accepted submission passed the filter: the stored time limit, 7 s, is used"})
    [python] = _fidelity("icpc:hello", options=("-s", r"hello\.py$"))
    assert [(s["name"], s["result"]) for s in python["submissions"]] == [("accepted/hello.py", "AC")], python
    assert python["time_limit_s"] == python["time_limit_computed"]["time_limit_s"] == 1.0
    assert Problem.objects.get(source="icpc", pid="hello").time_limit_ms == 7000
    with pytest.raises(CommandError, match="not a valid regex"):
        call_command("judge_package", "icpc:hello", "-s", "(", stdout=io.StringIO())


def test_a_submission_that_does_not_get_its_folder_s_verdict_is_a_mismatch_with_the_checker_s_message(
        kattis_dir: Path) -> None:
    call_command("import_dataset", "icpc", str(kattis_dir / "different"), stdout=io.StringIO())
    problem = Problem.objects.get(source="icpc", pid="different")
    # keep one accepted and one wrong submission, and file the wrong one as accepted
    keep = ["accepted/different.cc", "wrong_answer/different_no_abs.cc"]
    problem.solutions.filter(role=Solution.Role.CANDIDATE).exclude(name__in=keep).delete()
    problem.solutions.filter(name="wrong_answer/different_no_abs.cc").update(package_verdict="accepted")
    out = io.StringIO()
    with pytest.raises(CommandError, match="did not get their folder's verdict"):
        call_command("judge_package", "icpc:different", stdout=out)
    table = out.getvalue()
    assert "MISMATCH accepted" in table and "wrong_answer/different_no_abs.cc" in table
    # per test, with the output validator's own message
    assert "judge answer = " in table and "but submission output = " in table
