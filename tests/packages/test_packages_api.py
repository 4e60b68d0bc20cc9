"""A package's checker through the API with a real RQ worker: a testlib checker that FAILs,
crashes or runs out of time is 503 `judging_error` (never reward 0); a working one judges
AC and WA; imported Kattis packages (hello: the default validator, different: a C++ output
validator; guess: interactive, its interactor) judge a Python and a C++ submission of each as
their folders say."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from problems.models import PackageJudge, Problem, Solution, TestSuite
from tests.api.conftest import AB_TESTS, GOOD, WRONG, api, make_suite, sandbox_worker, user  # noqa: F401
from tests.packages.test_external import BROKEN, checker_of_every_failure

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def _short_checker_limit() -> Iterator[None]:
    """The module's worker (started after this) gives a checker 1 s of CPU, not 10."""
    with pytest.MonkeyPatch.context() as env:  # restored after the module, as it was
        env.setenv("HARDTESTS_CHECKER_TIME_S", "1")
        yield


@pytest.fixture(scope="module")
def worker(_short_checker_limit: None, sandbox_worker: Any) -> Any:  # noqa: F811
    return sandbox_worker


def _problem_with_checker(pid: str, judge: Any, *, how: str = "") -> None:
    """The checker judges the problem's two tests; `how`, a way of BROKEN, ends each test's input
    (after the line the program reads) to make test_external's checker of every failure fail so."""
    problem = Problem.objects.create(source="pkg", pid=pid, title=pid, statement="", time_limit_ms=1000)
    suite = make_suite(problem, [dataclasses.replace(t, input=f"{t.input!s}{how}\n") if how else t
                                 for t in AB_TESTS[:2]])
    row = PackageJudge.objects.create(problem=problem, kind=judge.kind, name=judge.entry, language=judge.language,
                                      entry=judge.entry, files=dict(judge.files), flags=[], digest=judge.digest)
    TestSuite.objects.filter(pk=suite.pk).update(checker=row)


@pytest.mark.parametrize("how", ["fail", "crash", "timeout"])
def test_a_checker_that_fails_crashes_or_times_out_is_503_judging_error(api: Any, worker: Any,  # noqa: F811
                                                                        testlib_dir: Path, how: str) -> None:
    _problem_with_checker(how, checker_of_every_failure((testlib_dir / "testlib.h").read_text()), how=how)
    for code in (GOOD, WRONG):
        response = api.post("/api/v1/verify", {"problem": f"pkg:{how}", "language": "python3", "code": code})
        assert response.status_code == 503, (how, response.content)
        body = response.json()
        assert body["code"] == "judging_error" and BROKEN[how][1] in body["detail"], body


def test_a_working_testlib_checker_judges_through_the_api(api: Any, worker: Any,  # noqa: F811
                                                          testlib_dir: Path) -> None:
    _problem_with_checker("fair", checker_of_every_failure((testlib_dir / "testlib.h").read_text()))
    for code, verdict in ((GOOD, "AC"), (WRONG, "WA")):
        response = api.post("/api/v1/verify", {"problem": "pkg:fair", "language": "python3", "code": code})
        assert response.status_code == 200, response.content
        assert response.json()["verdict"] == verdict
    # the checker's own message, per failing test
    failing = [t for t in response.json()["tests"] if t["verdict"] != "AC"]
    assert failing and failing[0]["message"] == "wrong answer sums differ", failing


def test_imported_kattis_packages_judge_python_and_cpp_through_the_api(api: Any, worker: Any,  # noqa: F811
                                                                        kattis_dir: Path) -> None:
    call_command("import_dataset", "icpc", str(kattis_dir / "hello"), str(kattis_dir / "different"),
                 stdout=io.StringIO())
    wanted = {
        "hello": ["accepted/hello.py", "accepted/hello.cc", "wrong_answer/hello.cc"],
        "different": ["accepted/different_py3.py", "accepted/different.cc", "wrong_answer/different_no_abs.cc"],
    }
    for pid, names in wanted.items():
        for name in names:
            sol = Solution.objects.get(problem__source="icpc", problem__pid=pid, role="candidate", name=name)
            response = api.post("/api/v1/verify", {"problem": f"icpc:{pid}", "language": sol.language,
                                                   "code": sol.code, "mode": "all"})
            assert response.status_code == 200, (name, response.content)
            assert response.json()["verdict"] == sol.gold_verdict, (name, response.json())
    # the default output validator compares tokens case-insensitively (not our byte comparison)
    response = api.post("/api/v1/verify", {"problem": "icpc:hello", "language": "python3",
                                           "code": "print('hello   WORLD!')\n"})
    assert response.json()["verdict"] == "AC", response.json()


def test_an_interactive_package_judges_python_and_cpp_through_the_api(api: Any, worker: Any,  # noqa: F811
                                                                     kattis_dir: Path) -> None:
    """guess: the program against the package's interactor, through the API as judge_package does."""
    call_command("import_dataset", "icpc", str(kattis_dir / "guess"), stdout=io.StringIO())
    for name in ("accepted/guess.cc", "wrong_answer/guess.py", "wrong_answer/guess_0.cc",
                 "time_limit_exceeded/guess_no_flush.cc"):
        sol = Solution.objects.get(problem__pid="guess", role="candidate", name=name)
        response = api.post("/api/v1/verify", {"problem": "icpc:guess", "language": sol.language, "code": sol.code})
        assert response.status_code == 200, (name, response.content)
        body = response.json()
        assert (body["verdict"], body["reward"]) == (sol.gold_verdict, int(sol.gold_verdict == "AC")), (name, body)
        if body["verdict"] == "WA":
            # what the interactor said of the failing test
            assert [t["message"] for t in body["tests"] if t["verdict"] == "WA"][0], body


def test_an_interactor_that_cannot_run_is_503_never_the_programs_verdict(api: Any, worker: Any,  # noqa: F811
                                                                         kattis_dir: Path) -> None:
    call_command("import_dataset", "icpc", str(kattis_dir / "guess"), stdout=io.StringIO())
    problem = Problem.objects.get(source="icpc", pid="guess")
    judge = PackageJudge.objects.get(problem=problem, kind__in=PackageJudge.INTERACTOR_KINDS)
    # an interactor that does not compile: a judging error for a right and a wrong program alike
    files = {path: ("#error broken interactor\n" if path == judge.entry else text)
             for path, text in judge.files.items()}
    PackageJudge.objects.filter(pk=judge.pk).update(files=files, digest="broken-" + judge.digest[:50])
    for name in ("accepted/guess.cc", "wrong_answer/guess.py"):
        sol = Solution.objects.get(problem=problem, role="candidate", name=name)
        response = api.post("/api/v1/verify", {"problem": "icpc:guess", "language": sol.language, "code": sol.code})
        assert response.status_code == 503, (name, response.content)
        assert response.json()["code"] == "judging_error" and "interactor" in response.json()["detail"], response.json()
