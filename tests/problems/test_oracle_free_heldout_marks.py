"""Held-out check that an oracle-free suite made by a real A.7 run (the string problem of
tests/oracle_free_heldout.py, scripted replies, real sandbox) says so wherever it goes: the
problem page, the suite page, the suite download, every export, an import of the export, a
from-kit run; and that formats which cannot say "no expected output" never get the time-only
test as a test whose expected output is empty."""

from __future__ import annotations

import io
import json
import zipfile

import pyarrow.parquet as pq
import pytest
from django.test import Client

from generation.models import GenerationRun
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.exporters.bundles import problems_select
from problems.exporters.native import native_export
from problems.exporters.training import training_export
from problems.exporters.verl import verl_export
from problems.importers.runner import dataset_import
from problems.judging import judge_code
from problems.models import Problem, TestSuite
from tests.factories import maintainer
from tests.generation.conftest import FakeLLM, fake_llm  # noqa: F401  (fixture)
from tests.oracle_free_heldout import OCC

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def made(fake_llm: FakeLLM, settings) -> TestSuite:  # noqa: F811
    settings.HARDTESTS_GENERATOR_TIME_S = settings.HARDTESTS_CHECKER_TIME_S = 5.0
    settings.HARDTESTS_BRUTE_FORCE_TIME_S = 5.0
    problem = OCC.make("hd/occ-marks")
    fake_llm.reply(OCC.a7_reply(), OCC.second_reply())
    run = generation_run_execute(run_id=generation_run_start(problem=problem, mode="oracle_free", enqueue=False).pk)
    assert run.status == "succeeded", run.error
    return run.suite


def test_pages_and_download_mark_the_suite_and_never_ship_an_empty_expected_output(made: TestSuite) -> None:
    problem = made.problem
    client = Client()
    client.force_login(maintainer())
    for url in (f"/problems/{problem.pk}/", f"/problems/{problem.pk}/suite/"):
        html = client.get(url).content.decode()
        assert "Oracle-free" in html, url
        assert "no human oracle checked these outputs" in html, url
    response = client.get(f"/problems/{problem.pk}/suites/{made.pk}.zip")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["origin"] == "oracle_free" and manifest["unverified"] is True
    assert manifest["trust"]["method"] == "hardtests_a7"
    [big] = [t for t in manifest["tests"] if t["kind"] == "time_only"]
    assert big["output_origin"] == "none" and big["expected_output"] is False
    names = set(archive.namelist())
    assert f"tests/{big['ordinal']:04d}.in" in names and f"tests/{big['ordinal']:04d}.out" not in names
    # every other test has its expected output
    others = [t for t in manifest["tests"] if t["kind"] != "time_only"]
    assert all(f"tests/{t['ordinal']:04d}.out" in names for t in others) and len(others) == made.test_count - 1


def test_exports_and_an_import_of_the_export_keep_the_mark(made: TestSuite, tmp_path) -> None:
    problem = made.problem
    selected = problems_select([])[0]
    training_export(problems=selected, out=tmp_path / "train")
    [row] = pq.read_table(next((tmp_path / "train").glob("**/*.parquet"))).to_pylist()
    assert row["tests_origin"] == "oracle_free" and row["metadata"]["tests_unverified"] is True
    assert len(row["tests"]) == made.test_count - 1 and all(t["output"] for t in row["tests"])

    verl_export(problems=selected, out=tmp_path / "verl")
    [row] = pq.read_table(tmp_path / "verl" / "train.parquet").to_pylist()
    assert row["extra_info"]["tests_origin"] == "oracle_free"
    # verl's own reward compares stdout with every output: a time-only test has none, and without
    # it a too-slow program would pass; the problem is left out of that export and counted
    counts = verl_export(problems=selected, out=tmp_path / "verl-builtin", builtin=True)
    assert pq.read_table(tmp_path / "verl-builtin" / "train.parquet").num_rows == 0
    assert counts["time_only_tests"] == 1 and counts["problems"] == 0

    out = tmp_path / "native.jsonl"
    native_export(problems=selected, out=out)
    Problem.objects.all().delete()
    dataset_import(format_name="native", paths=[str(out)])
    again = Problem.objects.get(pid=problem.pid)
    suite = again.suites.get(status=TestSuite.Status.ACTIVE)
    assert suite.origin == "oracle_free" and suite.unverified and suite.trust == made.trust
    assert suite.tests.filter(kind="time_only", output_size=0, output_origin="none").count() == 1
    # the imported suite judges as the made one did: the slow right program fails only the big test
    result = judge_code(problem=again, suite=suite, language="python3", code=OCC.candidates["char_loop"][1],
                        mode="all")
    assert result.verdict == "TLE" and {t.kind for t in result.tests if t.verdict != "AC"} == {"time_only"}
    assert result.suite_origin == "oracle_free"


def test_a_from_kit_run_on_an_oracle_free_kit_without_an_oracle_keeps_the_suite_and_says_why(
        made: TestSuite) -> None:
    problem = made.problem
    run = generation_run_execute(run_id=generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT,
                                                             enqueue=False).pk)
    active = problem.suites.get(status=TestSuite.Status.ACTIVE)
    assert active.pk == made.pk and active.origin == "oracle_free"
    assert not problem.suites.filter(origin="generated").exists(), run.status
    assert run.status == "failed", run.status
    print(run.failure_reason, run.error)


def test_a_fast_subset_of_an_oracle_free_suite_still_names_its_origin(made: TestSuite) -> None:
    ordinals = sorted(made.tests.values_list("ordinal", flat=True))
    big = made.tests.get(kind="time_only").ordinal
    TestSuite.objects.filter(pk=made.pk).update(fast_ordinals=[big, ordinals[0]])
    made.refresh_from_db()
    slow = OCC.candidates["char_loop"][1]
    result = judge_code(problem=made.problem, suite=made, language="python3", code=slow, mode="all", subset="fast")
    assert (result.subset, result.total, result.suite_origin, result.verdict) == ("fast", 2, "oracle_free", "TLE")
