"""C submissions of a package are judged as C (gcc), never refused and never judged as C++:
hello's hello_alarm.c (SIGALRM after 1 s of busy loop), different's different.c and guess's
guess_rte.c (exit 42 against the interactor) get their folders' verdicts through
judge_package and /api/v1/verify; Polygon's c.gcc solutions likewise; and a machine without
gcc refuses each C submission with that reason."""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

import sandbox.languages
from problems.models import Problem, Solution
from problems.packages.icpc import package_read
from tests.api.conftest import api, sandbox_worker, user  # noqa: F401
from tests.packages.test_polygon import _package

pytestmark = [pytest.mark.slow]

C_SUBMISSIONS = {("hello", "accepted/hello_alarm.c"): "AC", ("different", "accepted/different.c"): "AC",
                 ("guess", "run_time_error/guess_rte.c"): "RE"}


def _fidelity(*pids: str, only: str | None = None) -> list[dict[str, Any]]:
    out = io.StringIO()
    # `only`: that one submission, as verifyproblem -s judges it (the package's others:
    # tests/packages/test_fidelity.py)
    selected = ["--submission-filter", f"^{re.escape(only)}$"] if only else []
    try:
        call_command("judge_package", *pids, "--json", *selected, stdout=out)
    except CommandError:
        pass  # a mismatch: the report (written before) says which
    result: list[dict[str, Any]] = json.loads(out.getvalue())
    return result


def test_the_c_submissions_are_read_as_c(kattis_dir: Path) -> None:
    for (pid, name), _verdict in C_SUBMISSIONS.items():
        pkg = package_read(kattis_dir / pid)
        [sub] = [s for s in pkg.submissions if s.path == name]
        assert sub.language == "c", sub
        assert not [r for r in pkg.refused if r["part"].endswith(".c")], pkg.refused


def test_without_gcc_each_c_submission_is_refused_with_the_reason(kattis_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox.languages, "GCC", "/nonexistent/gcc")
    pkg = package_read(kattis_dir / "hello")
    refused = {r["part"]: r["reason"] for r in pkg.refused}
    assert refused["submissions/accepted/hello_alarm.c"] == (
        "/nonexistent/gcc is not installed on this machine, so c programs cannot be compiled here")
    assert "accepted/hello_alarm.c" not in {s.path for s in pkg.submissions}
    # the C++, Java and Python submissions are not affected
    assert {s.path for s in pkg.submissions} >= {"accepted/hello.cc", "accepted/hello.java", "accepted/hello.py"}


@pytest.mark.django_db
@pytest.mark.parametrize(("pid", "name"), list(C_SUBMISSIONS))
def test_the_c_submission_gets_its_folder_s_verdict(kattis_dir: Path, pid: str, name: str) -> None:
    call_command("import_dataset", "icpc", str(kattis_dir / pid), stdout=io.StringIO())
    verdict = C_SUBMISSIONS[(pid, name)]
    sol = Solution.objects.get(problem__source="icpc", problem__pid=pid, role=Solution.Role.CANDIDATE, name=name)
    assert (sol.language, sol.gold_verdict) == ("c", verdict)
    [report] = _fidelity(f"icpc:{pid}", only=name)
    [row] = report["submissions"]
    assert (row["name"], row["language"], row["ok"], row["result_high"]) == (name, "c", True, verdict), row
    if pid == "hello":
        # hello_alarm.c spins until SIGALRM after a second of wall time: its CPU time (what the
        # machine's load leaves it) counts in verifyproblem's computed limit, ceil(slowest x 5)
        computed = report["time_limit_computed"]
        assert computed["time_limit_s"] == max(1, math.ceil(computed["slowest_accepted_ms"] * 5 / 1000)), computed


@pytest.mark.django_db(transaction=True)
def test_the_c_submissions_judge_through_the_api(api: Any, sandbox_worker: Any,  # noqa: F811
                                                 kattis_dir: Path) -> None:
    call_command("import_dataset", "icpc", *(str(kattis_dir / pid) for pid in ("hello", "different", "guess")),
                 stdout=io.StringIO())
    # hello's limit as judge_package computes it (hello_alarm.c needs more than the 1 s default)
    Problem.objects.filter(source="icpc", pid="hello").update(time_limit_ms=5000)
    for (pid, name), verdict in C_SUBMISSIONS.items():
        sol = Solution.objects.get(problem__source="icpc", problem__pid=pid, role=Solution.Role.CANDIDATE, name=name)
        response = api.post("/api/v1/verify", {"problem": f"icpc:{pid}", "language": "c", "code": sol.code,
                                               "mode": "all"})
        assert response.status_code == 200, (name, response.content)
        assert response.json()["verdict"] == verdict, (name, response.json())


@pytest.mark.django_db
def test_a_polygon_c_gcc_solution_is_judged_as_c(sb: Any, testlib_dir: Path, tmp_path: Path) -> None:
    root = _package(tmp_path / "echo-number", testlib_dir)
    out = io.StringIO()
    call_command("import_dataset", "polygon", str(root), stdout=out)
    [got] = json.loads(out.getvalue())["problems"]
    assert not [r for r in got["refused"] if r["part"].endswith(".c")], got["refused"]
    sol = Solution.objects.get(problem__source="polygon", role=Solution.Role.CANDIDATE, name="solutions/echo.c")
    assert (sol.language, sol.package_verdict, sol.gold_verdict) == ("c", "accepted", "AC")
    [table] = _fidelity("polygon:echo-number")
    assert table["mismatches"] == 0, table
    assert {s["name"]: (s["language"], s["result"]) for s in table["submissions"]}["solutions/echo.c"] == ("c", "AC")
