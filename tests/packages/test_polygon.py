"""`import_dataset polygon`: a Polygon package built here from testlib's own examples (the igen
generator, the wcmp checker, the ival validator): generated tests made by running the
package's generator in the sandbox (`igen 1` prints what a native build prints), answers by its
main solution, solutions by tag; judge_package gives each tag its verdict."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from problems.models import PackageJudge, Problem, Solution, TestSuite
from problems.packages.icpc import PackageError
from problems.packages.polygon import polygon_read

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

PROBLEM_XML = """<?xml version="1.0" encoding="utf-8" standalone="no"?>
<problem revision="3" short-name="echo-number">
  <names><name language="english" value="Echo a number"/></names>
  <judging input-file="" output-file="">
    <testset name="tests">
      <time-limit>1000</time-limit>
      <memory-limit>268435456</memory-limit>
      <test-count>3</test-count>
      <input-path-pattern>tests/%02d</input-path-pattern>
      <answer-path-pattern>tests/%02d.a</answer-path-pattern>
      <tests>
        <test method="manual" sample="true"/>
        <test cmd="igen 1" method="generated"/>
        <test cmd="igen 3" method="generated"/>
      </tests>
    </testset>
  </judging>
  <files>
    <resources><file path="files/testlib.h" type="h.g++"/></resources>
    <executables>
      <executable><source path="files/igen.cpp" type="cpp.g++17"/></executable>
      <executable><source path="files/ival.cpp" type="cpp.g++17"/></executable>
    </executables>
  </files>
  <assets>
    <checker name="std::wcmp.cpp" type="testlib"><source path="files/check.cpp" type="cpp.g++17"/></checker>
    <validators><validator><source path="files/ival.cpp" type="cpp.g++17"/></validator></validators>
    <solutions>
      <solution tag="main"><source path="solutions/echo.py" type="python.3"/></solution>
      <solution tag="accepted"><source path="solutions/echo.cpp" type="cpp.g++17"/></solution>
      <solution tag="wrong-answer"><source path="solutions/plus.py" type="python.3"/></solution>
      <solution tag="accepted"><source path="solutions/echo.c" type="c.gcc"/></solution>
    </solutions>
  </assets>
</problem>
"""


def _package(root: Path, testlib_dir: Path) -> Path:
    files = {
        "problem.xml": PROBLEM_XML,
        "files/testlib.h": (testlib_dir / "testlib.h").read_text(),
        "files/igen.cpp": (testlib_dir / "generators" / "igen.cpp").read_text(),
        "files/check.cpp": (testlib_dir / "checkers" / "wcmp.cpp").read_text(),
        "files/ival.cpp": (testlib_dir / "validators" / "ival.cpp").read_text(),
        "tests/01": "7\n",
        "solutions/echo.py": "print(int(input()))\n",
        "solutions/echo.cpp": "#include <cstdio>\nint main(){long long n;scanf(\"%lld\",&n);printf(\"%lld\\n\",n);}\n",
        "solutions/plus.py": "print(int(input()) + 1)\n",
        "solutions/echo.c": "#include <stdio.h>\nint main(void){long n;scanf(\"%ld\",&n);printf(\"%ld\\n\",n);}\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_polygon_package_imports_with_generated_tests_and_judges_by_tag(sb: Any, testlib_dir: Path,
                                                                          tmp_path: Path) -> None:
    root = _package(tmp_path / "echo-number", testlib_dir)
    out = io.StringIO()
    call_command("import_dataset", "polygon", str(root), stdout=out)
    report = json.loads(out.getvalue())
    [got] = report["problems"]
    assert (got["problem"], got["tests"], got["time_limit_ms"], got["memory_mb"]) == ("polygon:echo-number", 3,
                                                                                     1000, 256)
    assert not any(r["part"] == "solutions/echo.c" for r in got["refused"])  # C is judged as C
    problem = Problem.objects.get(source="polygon", pid="echo-number")
    suite = problem.suites.get(status=TestSuite.Status.ACTIVE)
    assert suite.checker is not None and suite.checker.kind == PackageJudge.Kind.TESTLIB_CHECKER
    from problems.blobs import blob_get

    bodies = [(blob_get(i), blob_get(o)) for i, o in suite.tests.order_by("ordinal").values_list("input_sha256",
                                                                                               "output_sha256")]
    # what `igen 1` and `igen 3` print when the fixture's igen.cpp is built with g++ outside the
    # sandbox (its comment's 504077 / 808747 predate testlib's current random generator); answers
    # from the main solution
    assert bodies == [(b"7\n", b"7\n"), (b"959139\n", b"959139\n"), (b"125987\n", b"125987\n")]
    tags = dict(problem.solutions.filter(role=Solution.Role.CANDIDATE).values_list("name", "package_verdict"))
    assert tags == {"solutions/echo.py": "main", "solutions/echo.cpp": "accepted", "solutions/plus.py": "wrong-answer",
                    "solutions/echo.c": "accepted"}

    fidelity = io.StringIO()
    call_command("judge_package", "polygon:echo-number", "--json", stdout=fidelity)
    [table] = json.loads(fidelity.getvalue())
    assert table["mismatches"] == 0 and table["judged"] == 4, table
    assert {s["name"]: s["result"] for s in table["submissions"]} == {
        "solutions/echo.py": "AC", "solutions/echo.cpp": "AC", "solutions/plus.py": "WA", "solutions/echo.c": "AC"}


def test_a_generated_test_whose_generator_is_missing_is_refused_with_the_reason(sb: Any, testlib_dir: Path,
                                                                               tmp_path: Path) -> None:
    root = _package(tmp_path / "p", testlib_dir)
    (root / "problem.xml").write_text(PROBLEM_XML.replace('cmd="igen 3"', 'cmd="nogen 3"'))
    pkg = polygon_read(root, sb)
    assert len(pkg.tests) == 2
    assert {"part": "tests/03", "reason": "its generator 'nogen' is not among the package's executables"} \
        in pkg.refused
    (root / "problem.xml").write_text(PROBLEM_XML.replace("<checker", "<nochecker").replace("</checker>",
                                                                                         "</nochecker>"))
    with pytest.raises(PackageError, match="names no checker"):
        polygon_read(root, sb)
