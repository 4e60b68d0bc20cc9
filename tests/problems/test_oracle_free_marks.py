"""An oracle-free suite says so wherever it shows: the problem page, every export that carries a
suite's origin, and a native round trip keeps its trust record and its time-only test. Problems
that arrive with no solution are imported, and their page says what is missing."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from django.test import Client

from problems.exporters.bundles import problems_select
from problems.exporters.native import native_export
from problems.exporters.training import training_export
from problems.importers.runner import ImportAborted, dataset_import
from problems.models import Problem, TestCase, TestSuite
from tests.factories import maintainer
from tests.oracle_free_kit import TRUST, make_oracle_free_suite, make_solutionless

pytestmark = [pytest.mark.django_db]


def test_the_problem_page_marks_an_oracle_free_suite_and_its_tests() -> None:
    problem = make_solutionless()
    make_oracle_free_suite(problem)
    client = Client()
    client.force_login(maintainer())
    html = client.get(f"/problems/{problem.pk}/").content.decode()
    assert "Oracle-free suite: no human oracle checked these outputs." in html
    assert "Oracle-free (model-made outputs)" in html
    assert "agreed with an independent second brute force" in html and "on 2 of 2 inputs" in html
    assert "1 maximum-size test has no expected output" in html
    assert 'data-output-origin="brute_force"' in html and 'data-output-origin="none"' in html


def test_a_problem_without_solutions_says_what_is_missing_and_offers_the_oracle_free_mode(settings) -> None:
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    problem = make_solutionless()
    client = Client()
    client.force_login(maintainer())
    html = client.get(f"/problems/{problem.pk}/").content.decode()
    assert "What this problem is missing" in html
    assert "no oracle (human solution) in a supported language" in html
    assert "no candidate with a known verdict" in html
    assert "?mode=oracle_free" in html
    form = client.get(f"/problems/{problem.pk}/regenerate/?mode=oracle_free")
    html = form.content.decode()
    assert form.status_code == 200 and 'value="oracle_free"' in html and 'value="acecoder"' in html, html[-3000:]


def test_native_round_trip_keeps_origin_trust_output_origins_and_the_time_only_test(tmp_path) -> None:
    problem = make_solutionless()
    make_oracle_free_suite(problem)
    out = tmp_path / "rows.jsonl"
    native_export(problems=problems_select([])[0], out=out)
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["solutions"] == []
    [suite] = row["suites"]
    assert suite["origin"] == "oracle_free" and suite["trust"] == TRUST and suite["unverified"] is True
    big = [t for t in suite["tests"] if t["kind"] == "time_only"]
    assert len(big) == 1 and "output" not in big[0] and big[0]["output_origin"] == "none"
    assert [t.get("output_origin") for t in suite["tests"]] == ["statement", "brute_force", "brute_force", "none"]
    Problem.objects.all().delete()
    dataset_import(format_name="native", paths=[str(out)])
    again = Problem.objects.get(pid=problem.pid)
    assert not again.solutions.exists()
    imported = again.suites.get(status=TestSuite.Status.ACTIVE)
    assert imported.origin == "oracle_free" and imported.trust == TRUST and imported.unverified
    assert list(imported.tests.order_by("ordinal").values_list("kind", "output_origin", "output_size")) == [
        ("public", "statement", 2), ("edge", "brute_force", 2), ("edge", "brute_force", 3), ("time_only", "none", 0)]


def test_the_training_export_names_the_origin_and_leaves_out_the_time_only_test(tmp_path) -> None:
    problem = make_solutionless()
    make_oracle_free_suite(problem)
    training_export(problems=problems_select([])[0], out=tmp_path)
    [path] = sorted(tmp_path.glob("**/*.parquet"))
    [row] = pq.read_table(path).to_pylist()
    assert row["tests_origin"] == "oracle_free" and row["metadata"]["tests_unverified"] is True
    assert len(row["tests"]) == 3 and all(t["output"] for t in row["tests"])
    assert {k["kind"] for k in row["metadata"]["test_kinds"]} == {"public", "edge"}


def test_a_native_row_without_solutions_imports(tmp_path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"pid": "bare/1", "title": "Bare", "statement": "Print 1.",
                                "samples": [{"input": "\n", "output": "1\n"}]}) + "\n")
    dataset_import(format_name="native", paths=[str(path)])
    problem = Problem.objects.get(pid="bare/1")
    assert not problem.solutions.exists() and problem.samples == [{"input": "\n", "output": "1\n"}]


def test_a_time_only_test_may_come_without_an_output_but_others_may_not(tmp_path) -> None:
    path = tmp_path / "rows.jsonl"
    tests = [{"input": "1\n", "kind": "time_only"}, {"input": "2\n", "output": "2\n", "kind": "edge",
                                                        "output_origin": "brute_force"}]
    path.write_text(json.dumps({"pid": "tt/1", "title": "T", "statement": "s",
                                "suites": [{"origin": "oracle_free", "tests": tests}]}) + "\n")
    dataset_import(format_name="native", paths=[str(path)])
    suite = Problem.objects.get(pid="tt/1").suites.get()
    assert list(suite.tests.order_by("ordinal").values_list("kind", "output_size", "output_origin")) == [
        ("time_only", 0, TestCase.OutputOrigin.NONE), ("edge", 2, "brute_force")]
    path.write_text(json.dumps({"pid": "tt/2", "title": "T", "statement": "s",
                                "suites": [{"origin": "oracle_free", "tests": [{"input": "1\n", "kind": "edge"}]}]})
                    + "\n")
    with pytest.raises(ImportAborted, match="output must be a string"):
        dataset_import(format_name="native", paths=[str(path)])


@pytest.mark.parametrize(("fmt", "strip"), [
    ("codecontests", lambda r: {**r, "solutions": {"language": [], "solution": []},
                                "incorrect_solutions": {"language": [], "solution": []}}),
    ("taco", lambda r: {**r, "solutions": "[]"}),
])
def test_dataset_rows_without_solutions_are_imported(tmp_path, fmt, strip) -> None:
    from tests.problems.fixtures import FIXTURES

    source = FIXTURES / ("codecontests.jsonl" if fmt == "codecontests" else "taco.jsonl")
    row = json.loads(source.read_text().splitlines()[0])
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(strip(row)) + "\n")
    dataset_import(format_name=fmt, paths=[str(path)])
    problem = Problem.objects.get()
    assert not problem.solutions.exists() and problem.statement


def test_the_verl_export_names_the_oracle_free_origin(tmp_path) -> None:
    from problems.exporters.verl import verl_export

    problem = make_solutionless()
    make_oracle_free_suite(problem)
    verl_export(problems=problems_select([])[0], out=tmp_path)
    [row] = pq.read_table(tmp_path / "train.parquet").to_pylist()
    assert row["extra_info"]["tests_origin"] == "oracle_free"
    assert row["reward_model"]["ground_truth"] == f"{problem.source}:{problem.pid}"
