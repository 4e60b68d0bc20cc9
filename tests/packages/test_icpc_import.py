"""`import_dataset icpc`: the Kattis examples, and packages written here for what they lack
(2025-09 layout, validator flags, a .timelimit, nested groups, a symlink leaving the
package, multi-pass, BAPCtools generators, a .zip), with the report's reasons."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from problems.models import PackageJudge, Problem, Solution, TestCase, TestSuite
from problems.packages import importer

pytestmark = pytest.mark.django_db


def _import(*paths: Path | str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("import_dataset", "icpc", *[str(p) for p in paths], stdout=out)
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def _by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["package"]: p for p in report["problems"]}


def test_the_kattis_examples_import_with_groups_judges_and_labelled_submissions(kattis_dir: Path) -> None:
    report = _import(kattis_dir)
    assert (report["packages"], report["imported"], report["created"]) == (4, 4, 4)
    got = _by_name(report)
    assert got["hello"]["judgeable"] and got["different"]["judgeable"]
    assert got["guess"]["judgeable"] is False and "interactive" in got["guess"]["not_judgeable"]
    assert got["oddecho"]["judgeable"] is False and "scoring" in got["oddecho"]["not_judgeable"]
    assert got["oddecho"]["groups"] == ["sample", "secret/subtask1", "secret/subtask2"]

    hello = Problem.objects.get(source="icpc", pid="hello")
    assert (hello.title, hello.memory_limit_mb, hello.time_limit_ms) == ("Hello World!", 512, 1000)
    assert "```latex" in hello.statement and "\\problemname" not in hello.statement.split("```latex")[0]
    suite = hello.suites.get(status=TestSuite.Status.ACTIVE, origin=TestSuite.Origin.OFFICIAL)
    assert suite.checker is not None and suite.checker.kind == PackageJudge.Kind.KATTIS_DEFAULT
    gold = dict(hello.solutions.filter(role=Solution.Role.CANDIDATE).values_list("name", "gold_verdict"))
    assert gold == {"accepted/hello.cc": "AC", "accepted/hello.java": "AC", "accepted/hello.py": "AC",
                    "accepted/hello_alarm.c": "AC", "run_time_error/memory_limit.cc": "RE",
                    "wrong_answer/hello.cc": "WA"}
    # C is C (gcc), never C++ (tests/packages/test_c_submissions.py)
    assert hello.solutions.get(role=Solution.Role.CANDIDATE, name="accepted/hello_alarm.c").language == "c"
    # accepted submissions are oracles too (a generated suite needs them)
    assert hello.solutions.filter(role=Solution.Role.ORACLE).count() == 4
    refused = {r["part"]: r["reason"] for r in got["hello"]["refused"]}
    assert "submissions/accepted/hello_alarm.c" not in refused
    assert "'rs'" in refused["submissions/accepted/hello.rs"]

    different = Problem.objects.get(source="icpc", pid="different")
    suite = different.suites.get(status=TestSuite.Status.ACTIVE)
    assert suite.checker is not None
    assert suite.checker.kind == PackageJudge.Kind.KATTIS_OUTPUT_VALIDATOR
    assert suite.checker.entry == "validate.cc" and set(suite.checker.files) == {"validate.cc", "validate.h"}
    groups = list(suite.tests.order_by("ordinal").values_list("group", "generator", "kind"))
    assert groups == [("sample", "1", "public"), ("secret", "01", "imported"), ("secret", "02_extreme_cases",
                                                                                 "imported")]
    slow = different.solutions.get(role=Solution.Role.CANDIDATE, name="slow_accepted/different_slow.py")
    # kept as its folder says, not forced into AC
    assert (slow.gold_verdict, slow.package_verdict) == ("UNKNOWN", "slow_accepted")
    ctd = different.package_judges.get(name="input_validators/different.ctd")
    assert "checktestdata" in ctd.refused

    guess = Problem.objects.get(source="icpc", pid="guess")
    assert guess.extra["package"]["interactive"] is True
    interactor = guess.suites.get().checker
    assert interactor is not None and interactor.kind == PackageJudge.Kind.KATTIS_INTERACTOR
    oddecho = Problem.objects.get(source="icpc", pid="oddecho")
    partial = oddecho.solutions.get(role=Solution.Role.CANDIDATE, package_verdict="partially_accepted")
    assert partial.gold_verdict == "UNKNOWN"
    assert oddecho.extra["package"]["groups"]["secret/subtask1"]["accept_score"] == 50


def test_re_importing_changes_nothing_and_a_changed_package_is_a_new_suite(kattis_dir: Path, tmp_path: Path) -> None:
    shutil.copytree(kattis_dir / "hello", tmp_path / "hello")
    _import(tmp_path / "hello")
    again = _import(tmp_path / "hello")
    assert (again["unchanged"], again["created"], again["updated"]) == (1, 0, 0)
    (tmp_path / "hello" / "data" / "secret" / "hello.ans").write_text("Hello again!\n")
    changed = _import(tmp_path / "hello")
    assert changed["updated"] == 1
    problem = Problem.objects.get(source="icpc", pid="hello")
    assert list(problem.suites.order_by("version").values_list("version", "status")) == [(1, "superseded"),
                                                                                          (2, "active")]


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_2025_09_package_with_flags_timelimit_and_nested_groups(tmp_path: Path) -> None:
    pkg = _write(tmp_path / "floaty", {
        "problem.yaml": "problem_format_version: 2025-09\nname: {en: Floaty}\ntype: pass-fail\n"
                        "limits: {time_limit: 2.5, memory: 256}\n",
        "statement/problem.en.md": "Print half of $n$.\n",
        "data/sample/1.in": "3\n", "data/sample/1.ans": "1.5\n",
        "data/test_group.yaml": "output_validator_args: [float_tolerance, '1e-6']\n",
        "data/secret/big/a.in": "10\n", "data/secret/big/a.ans": "5\n",
        "data/secret/small/b.in": "1\n", "data/secret/small/b.ans": "0.5\n",
        "submissions/accepted/half.py": "print(int(input()) / 2)\n",
        "submissions/wrong_answer/int.py": "print(int(input()) // 2)\n",
    })
    got = _by_name(_import(pkg))["floaty"]
    assert (got["version"], got["time_limit_ms"], got["time_limit_fixed"], got["memory_mb"]) == ("2025-09", 2500,
                                                                                                 True, 256)
    assert got["groups"] == ["sample", "secret/big", "secret/small"]
    problem = Problem.objects.get(source="icpc", pid="floaty")
    assert problem.statement == "Print half of $n$.\n"
    checker = problem.suites.get().checker
    assert checker is not None
    assert checker.kind == "kattis_default" and checker.flags == ["float_tolerance", "1e-6"]


def test_output_validator_flags_that_differ_between_groups_refuse_the_package(tmp_path: Path) -> None:
    pkg = _write(tmp_path / "mixed", {
        "problem.yaml": "problem_format_version: 2023-07-draft\nname: Mixed\n",
        "data/secret/a/testdata.yaml": "output_validator_flags: case_sensitive\n",
        "data/secret/a/1.in": "1\n", "data/secret/a/1.ans": "x\n",
        "data/secret/b/1.in": "1\n", "data/secret/b/1.ans": "x\n",
    })
    report = _import(pkg)
    assert report["imported"] == 0 and "differ between test groups" in report["skipped"]["packages"][0]["reason"]


def test_a_symlink_leaving_the_package_is_refused_and_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("not for the package\n")
    pkg = _write(tmp_path / "sneaky", {
        "problem.yaml": "name: Sneaky\n",
        "data/secret/1.in": "1\n", "data/secret/1.ans": "1\n",
        "submissions/accepted/ok.py": "print(input())\n",
    })
    os.symlink(secret, pkg / "data" / "secret" / "2.in")
    (pkg / "data" / "secret" / "2.ans").write_text("1\n")
    os.symlink(secret, pkg / "submissions" / "accepted" / "leak.py")
    # a symlink inside the package is an ordinary file of it
    os.symlink(pkg / "data" / "secret" / "1.in", pkg / "data" / "secret" / "3.in")
    (pkg / "data" / "secret" / "3.ans").write_text("1\n")
    got = _by_name(_import(pkg))["sneaky"]
    refused = {r["part"]: r["reason"] for r in got["refused"]}
    assert refused["data/secret/2.in"] == refused["submissions/accepted/leak.py"] == \
        "a symlink leaving the package (not read)"
    assert got["tests"] == 2
    problem = Problem.objects.get(source="icpc", pid="sneaky")
    assert not any("not for the package" in s.code for s in problem.solutions.all())
    assert TestCase.objects.filter(suite__problem=problem, input_preview__contains="not for").count() == 0


def test_multi_pass_is_refused_and_generators_are_reported(tmp_path: Path) -> None:
    multi = _write(tmp_path / "pkgs" / "multi", {
        "problem.yaml": "problem_format_version: 2023-07-draft\ntype: [pass-fail, multi-pass]\nname: M\n",
        "data/secret/1.in": "1\n", "data/secret/1.ans": "1\n"})
    _write(tmp_path / "pkgs" / "gen", {
        "problem.yaml": "name: G\n", "generators/generators.yaml": "data: {}\n",
        "data/secret/1.in": "1\n", "data/secret/1.ans": "1\n"})
    assert multi.is_dir()
    report = _import(tmp_path / "pkgs")
    assert report["skipped"]["packages"] == [{"package": "multi", "reason": "multi-pass problems are not supported"}]
    gen = _by_name(report)["gen"]
    assert any(r["part"] == "generators" and "BAPCtools" in r["reason"] for r in gen["refused"])


def test_a_zip_of_a_package_imports_under_the_archive_s_name(kattis_dir: Path, tmp_path: Path) -> None:
    archive = tmp_path / "hello.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted((kattis_dir / "hello").rglob("*")):
            if path.is_file():
                out.write(path, str(path.relative_to(kattis_dir / "hello")))
    got = _by_name(_import(archive))["hello"]
    assert got["tests"] == 1 and got["submissions"]["accepted"] == 4  # .cc, .java, .py and .c (.kt, .rs refused)


def test_the_import_is_atomic(kattis_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importer.package_write
    calls: list[str] = []

    def failing(pkg: Any) -> dict[str, Any]:
        calls.append(pkg.short_name)
        if len(calls) == 3:
            raise RuntimeError("the database went away")
        return real(pkg)

    monkeypatch.setattr(importer, "package_write", failing)
    with pytest.raises(RuntimeError):
        _import(kattis_dir)
    assert len(calls) == 3 and not Problem.objects.filter(source="icpc").exists()
    assert not PackageJudge.objects.exists()


def test_nothing_to_import_exits_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no problem package here"):
        _import(tmp_path)
