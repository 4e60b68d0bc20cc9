"""Imports as database operations: all or nothing, idempotent upserts, one problem across sources.

These run on SQLite and again on a real PostgreSQL server (marker ``postgres``).
"""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from problems.importers import runner
from problems.importers.runner import ImportAborted, dataset_import
from problems.models import Problem, ProblemAlias, TestSuite
from tests.conftest import manage
from tests.problems.fixtures import FIXTURES, db_counts, jsonl, rows

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

NATIVE = rows("native.jsonl")[0]


def _native_rows(n: int) -> list[dict]:
    return [{**NATIVE, "pid": f"p{i}", "url": f"https://example.org/p{i}", "suites": [{"origin": "generated", "tests": [
        {"input": f"{i} {i}\n", "output": f"{2 * i}\n", "kind": "direct"}]}]} for i in range(n)]


def _all_fixtures() -> list[dict]:
    return [
        dataset_import(format_name="native", paths=[str(FIXTURES / "native.jsonl")]),
        dataset_import(format_name="codecontests", paths=[str(FIXTURES / "codecontests.jsonl")]),
        dataset_import(format_name="hardtests", paths=[str(FIXTURES / "hardtests_problems.jsonl"),
                                                         str(FIXTURES / "hardtests_tests.jsonl")]),
        dataset_import(format_name="taco", paths=[str(FIXTURES / "taco.jsonl")]),
        dataset_import(format_name="klear", paths=[str(FIXTURES / "klear_handwritten.jsonl")]),
    ]


def test_first_malformed_row_aborts_and_nothing_is_written(tmp_path):
    good = _native_rows(3)
    path = jsonl(tmp_path / "rows.jsonl", [*good, {**NATIVE, "pid": ""}, *_native_rows(2)])
    before = db_counts()
    with pytest.raises(ImportAborted, match=r"rows.jsonl:4: pid: is empty \(nothing was imported\)"):
        dataset_import(format_name="native", paths=[str(path)])
    assert db_counts() == before


def test_a_database_failure_while_writing_rolls_back_every_chunk(tmp_path, monkeypatch):
    path = jsonl(tmp_path / "rows.jsonl", _native_rows(5))
    calls = {"n": 0}
    real = runner.rows_write

    def failing(chunk):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk full")
        return real(chunk)

    monkeypatch.setattr(runner, "CHUNK", 2)
    monkeypatch.setattr(runner, "rows_write", failing)
    before = {k: v for k, v in db_counts().items() if k != "blob_files"}
    with pytest.raises(RuntimeError, match="disk full"):
        dataset_import(format_name="native", paths=[str(path)])
    assert calls["n"] == 3  # two chunks had been written inside the transaction...
    assert {k: v for k, v in db_counts().items() if k != "blob_files"} == before  # ...and were rolled back


def test_skip_invalid_imports_the_valid_rows_and_reports_the_others(tmp_path):
    path = jsonl(tmp_path / "rows.jsonl", [*_native_rows(2), "{oops", {**NATIVE, "pid": "x", "time_limit_ms": -1}])
    report = tmp_path / "report.jsonl"
    summary = dataset_import(format_name="native", paths=[str(path)], skip_invalid=True, report_path=str(report))
    assert (summary["created"], summary["invalid"]["total"]) == (2, 2)
    assert summary["invalid"]["report"] == str(report)
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert [line["where"] for line in lines] == [f"{path}:3", f"{path}:4"]
    assert "not valid JSON" in lines[0]["reason"] and lines[1]["pid"] == "x"
    assert "time_limit_ms" in lines[1]["reason"]
    assert set(Problem.objects.values_list("pid", flat=True)) == {"p0", "p1"}


def test_reimporting_every_format_changes_nothing():
    _all_fixtures()
    before = db_counts()
    versions = sorted(TestSuite.objects.values_list("problem_id", "origin", "version"))
    again = _all_fixtures()
    assert db_counts() == before
    assert sorted(TestSuite.objects.values_list("problem_id", "origin", "version")) == versions
    for summary in again:
        assert summary["created"] == summary["updated"] == 0, summary
        assert summary["written"] == {}, summary


def test_changed_tests_make_a_new_active_suite_version(tmp_path):
    first = _native_rows(1)
    dataset_import(format_name="native", paths=[str(jsonl(tmp_path / "a.jsonl", first))])
    changed = [{**first[0], "suites": [{"origin": "generated", "tests": [
        {"input": "0 0\n", "output": "zero\n", "kind": "direct"}]}]}]
    summary = dataset_import(format_name="native", paths=[str(jsonl(tmp_path / "b.jsonl", changed))])
    assert summary["updated"] == 1 and summary["written"] == {"suites": 1, "tests": 1}
    suites = list(TestSuite.objects.order_by("version").values_list("version", "status"))
    assert suites == [(1, "superseded"), (2, "active")]


def test_same_problem_from_two_sources_is_kept_once_with_merged_solutions():
    dataset_import(format_name="codecontests", paths=[str(FIXTURES / "codecontests.jsonl")])
    summary = dataset_import(format_name="hardtests", paths=[str(FIXTURES / "hardtests_problems.jsonl"),
                                                               str(FIXTURES / "hardtests_tests.jsonl")])
    assert summary["merged_into_existing"] == 1
    dataset_import(format_name="taco", paths=[str(FIXTURES / "taco.jsonl")])
    watermelon = Problem.objects.get(platform_id="codeforces:4A")
    assert (watermelon.source, watermelon.pid, watermelon.platform) == ("codecontests", "4_A. Watermelon", "codeforces")
    assert sorted(watermelon.aliases.values_list("source", "pid")) == [
        ("hardtests", "luogu_CF4A"), ("taco", "codeforces.com/problemset/problem/4/A")]
    # The Luogu editorial and TACO's solution are the CodeContests code: one solution each,
    # named by the most reliable source; the mirror's kit and generated suite fill what was missing.
    python3 = watermelon.solutions.get(role="oracle", language="python3")
    assert (python3.source, python3.reliability) == ("codecontests", 2)
    assert python3.note == "also in luogu_editorial; also in taco"
    assert watermelon.suites.get(origin="generated", status="active").note == "imported from hardtests:luogu_CF4A"
    assert watermelon.solutions.filter(role="oracle").count() == 4
    assert watermelon.kits.count() == 1
    assert sorted(watermelon.suites.filter(status="active").values_list("origin", flat=True)) == [
        "generated", "imported", "official", "public"]
    assert sorted(watermelon.tags.values_list("name", flat=True)) == [
        "Complete search", "Mathematics", "brute force", "math"]


def test_the_original_platform_takes_over_from_a_mirror_imported_first():
    dataset_import(format_name="hardtests", paths=[str(FIXTURES / "hardtests_problems.jsonl"),
                                                     str(FIXTURES / "hardtests_tests.jsonl")])
    mirror = Problem.objects.get(pid="luogu_CF4A")
    summary = dataset_import(format_name="codecontests", paths=[str(FIXTURES / "codecontests.jsonl")])
    assert summary["merged_into_existing"] == 1
    watermelon = Problem.objects.get(platform_id="codeforces:4A")
    assert watermelon.pk == mirror.pk
    assert (watermelon.source, watermelon.pid, watermelon.platform) == ("codecontests", "4_A. Watermelon", "codeforces")
    assert watermelon.url == "https://codeforces.com/contest/4/problem/A"
    assert list(watermelon.aliases.values_list("source", "pid")) == [("hardtests", "luogu_CF4A")]
    assert watermelon.kits.count() == 1  # the mirror's kit stays
    # Re-importing either one now finds the problem (by key or by alias) and changes nothing.
    before = db_counts()
    dataset_import(format_name="hardtests", paths=[str(FIXTURES / "hardtests_problems.jsonl"),
                                                     str(FIXTURES / "hardtests_tests.jsonl")])
    dataset_import(format_name="codecontests", paths=[str(FIXTURES / "codecontests.jsonl")])
    assert db_counts() == before
    assert ProblemAlias.objects.count() == 1


def test_two_rows_of_one_file_for_the_same_problem_are_written_in_order(tmp_path):
    first, second = _native_rows(1)[0], {**_native_rows(1)[0], "title": "Renamed"}
    summary = dataset_import(format_name="native", paths=[str(jsonl(tmp_path / "r.jsonl", [first, second]))])
    assert (summary["created"], summary["updated"]) == (1, 1)
    assert Problem.objects.get().title == "Renamed"


def test_command_prints_a_json_summary_and_exits_nonzero_with_one_line(capsys):
    call_command("import_dataset", "taco", str(FIXTURES / "taco.jsonl"), "--no-progress")
    summary = json.loads(capsys.readouterr().out)
    assert (summary["created"], summary["skipped"]["total"]) == (2, 1)
    bad = manage("import_dataset", "taco", str(FIXTURES / "native.jsonl"), check=False)
    assert bad.returncode != 0 and bad.stdout == ""
    assert bad.stderr.strip().count("\n") == 0
    assert "native.jsonl:1: missing required field 'question' (nothing was imported)" in bad.stderr
