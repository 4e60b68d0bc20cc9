"""Exports: the lossless native round trip, the HardTests parquet pair, training rows, ICPC packages."""

from __future__ import annotations

import ast
import json
import subprocess
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from problems.demo import demo_load
from problems.exporters.bundles import problems_select
from problems.exporters.hardtests import PROBLEMS_SCHEMA, TESTS_SCHEMA, hardtests_export
from problems.exporters.icpc import OUTPUT_VALIDATOR, icpc_export
from problems.exporters.native import native_export
from problems.exporters.training import training_export
from problems.importers.runner import dataset_import
from problems.importers.unpickle import cases_decode
from problems.models import Problem
from tests.problems.fixtures import FIXTURES, catalogue_clear

_yaml_load = yaml.safe_load

# The field names of the published dataset cards.
PUBLISHED_PROBLEMS = ["pid", "question_title", "question_content", "question_content_all_languages", "platform",
                      "contest_date", "difficulty_ratings", "public_test_cases", "time_limit", "memory_limit", "url",
                      "tags", "source_dataset_info", "solutions", "starter_code"]
PUBLISHED_TESTS = ["pid", "test_cases_kit", "mapping", "test_cases"]


def _catalogue() -> None:
    demo_load()
    dataset_import(format_name="native", paths=[str(FIXTURES / "native.jsonl")])
    dataset_import(format_name="codecontests", paths=[str(FIXTURES / "codecontests.jsonl")])
    dataset_import(format_name="hardtests", paths=[str(FIXTURES / "hardtests_problems.jsonl"),
                                                     str(FIXTURES / "hardtests_tests.jsonl")])
    dataset_import(format_name="taco", paths=[str(FIXTURES / "taco.jsonl")])
    dataset_import(format_name="klear", paths=[str(FIXTURES / "klear_handwritten.jsonl")])


def _all() -> object:
    return problems_select([])[0]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_native_export_import_export_is_byte_identical(tmp_path):
    _catalogue()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    total = Problem.objects.count()
    summary = native_export(problems=_all(), out=first)
    assert summary["problems"] == total
    catalogue_clear()
    assert Problem.objects.count() == 0
    imported = dataset_import(format_name="native", paths=[str(first)])
    assert imported["created"] == total
    native_export(problems=_all(), out=second)
    assert first.read_bytes() == second.read_bytes()
    # And importing it again over itself changes nothing.
    assert dataset_import(format_name="native", paths=[str(first)])["unchanged"] == total
    row = next(json.loads(line) for line in first.read_text().splitlines() if '"sum-two"' in line)
    assert list(row) == sorted(row)
    binary = row["suites"][0]["tests"][3]
    assert binary["input_b64"] == "//4=" and "input" not in binary


@pytest.mark.django_db
def test_hardtests_parquet_pair_loads_with_datasets_and_imports_back(tmp_path):
    datasets = pytest.importorskip("datasets")
    _catalogue()
    summary = hardtests_export(problems=problems_select(["source=hardtests", "source=codecontests"])[0],
                               out=tmp_path)
    problems_file, tests_file = summary["files"]
    loaded = datasets.load_dataset("parquet", data_files={"train": problems_file}, split="train")
    assert loaded.column_names == PUBLISHED_PROBLEMS
    assert len(loaded) == summary["problems"] == 3
    assert pq.read_schema(problems_file).equals(PROBLEMS_SCHEMA, check_metadata=False)
    tests = datasets.load_dataset("parquet", data_files={"train": tests_file}, split="train")
    assert tests.column_names == PUBLISHED_TESTS
    assert pq.read_schema(tests_file).equals(TESTS_SCHEMA, check_metadata=False)
    abc = next(r for r in tests if r["pid"] == "atcoder_abc100_a")
    assert abc["mapping"] == {"LLMGen": [0, 1], "RPGen": [[2, 3]], "SPGen": [], "HackGen": [[4]]}
    assert abc["test_cases_kit"]["input_generation"]["HackGen"]["func_names"] == ["gen_hacking_input_sum_limit"]
    assert cases_decode(abc["test_cases"])[4] == {"input": "16 0\n", "output": ":(\n"}
    watermelon = next(r for r in loaded if r["pid"] == "4_A. Watermelon")
    assert watermelon["time_limit"] == "1 second" and watermelon["memory_limit"] == "64 megabytes"
    assert {s["source"] for s in watermelon["solutions"]} == {"codecontests"}

    catalogue_clear()
    back = dataset_import(format_name="hardtests", paths=summary["files"])
    assert back["created"] == 3
    again = Problem.objects.get(pid="atcoder_abc100_a")
    assert again.suites.get(origin="generated").test_count == 5
    assert sorted(again.solutions.values_list("source", "reliability")) == [
        ("atcoder_submission", 1), ("luogu_editorial", 3), ("taco", 5)]


@pytest.mark.django_db
def test_training_rows_have_tests_judge_and_metadata(tmp_path):
    _catalogue()
    summary = training_export(problems=_all(), out=tmp_path)
    assert summary["without_tests"] == 1  # "minimal" has no tests
    assert summary["problems"] == Problem.objects.count() - 1
    table = pq.read_table(tmp_path / "train.parquet").to_pylist()
    lines = [json.loads(line) for line in (tmp_path / "train.jsonl").read_text().splitlines()]
    assert [r["id"] for r in table] == [r["id"] for r in lines]
    watermelon = next(r for r in lines if r["pid"] == "4_A. Watermelon")
    assert watermelon["tests_origin"] == "generated"
    assert watermelon["tests"][0] == {"input": "8\n", "output": "YES\n"}
    assert watermelon["output_judging_function"].startswith("def output_judging_function")
    assert watermelon["metadata"]["platform_id"] == "codeforces:4A"
    # A list of (kind, count), not a map: datasets has no map type, and every row has the same keys.
    assert watermelon["metadata"]["test_kinds"] == [{"kind": "direct", "count": 1}, {"kind": "stratified", "count": 2}]
    assert watermelon["id"] == "codecontests:4_A. Watermelon"
    sum_two = next(r for r in table if r["pid"] == "sum-two")
    assert sum_two["output_judging_function"] is None and sum_two["time_limit_ms"] == 1500


@pytest.mark.django_db
def test_icpc_packages_have_the_package_layout(tmp_path):
    _catalogue()
    icpc_export(problems=problems_select(["pid=sum-two", "pid=4_A. Watermelon"])[0], out=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "problemtools-config") == [
        "4awatermelon", "README.md", "sumtwo"]
    card = (tmp_path / "README.md").read_text()  # the folder's card maps short names back
    assert "| `sumtwo` |" in card and "verifyproblem" in card and "| problems | 2 |" in card
    pkg = tmp_path / "sumtwo"
    yaml = (pkg / "problem.yaml").read_text()
    meta = _yaml_load(yaml)
    assert meta["problem_format_version"] == "2023-07-draft" and meta["type"] == "pass-fail"
    assert meta["name"] == "Sum of two" and meta["limits"] == {"time_limit": 1.5, "memory": 128}
    assert str(uuid.UUID(meta["uuid"])) == meta["uuid"] and "validation" not in meta
    assert (pkg / "statement" / "problem.en.md").exists()
    assert sorted(p.name for p in (pkg / "data" / "sample").iterdir()) == ["001.ans", "001.in"]
    assert (pkg / "data" / "secret" / "003.ans").read_text() == "7\n"
    assert (pkg / "data" / "secret" / "004.in").read_bytes() == b"\xff\xfe"
    assert [p.name for p in (pkg / "submissions" / "accepted").iterdir()] == ["oracle-001.py"]
    # By gold verdict, so problemtools checks the verdict (it never runs rejected/).
    assert sorted(p.name for p in (pkg / "submissions").iterdir()) == ["accepted", "wrong_answer"]
    assert [p.name for p in (pkg / "submissions" / "wrong_answer").iterdir()] == ["candidate-001.cpp"]
    assert not (pkg / "output_validator").exists()
    assert meta["license"] == "unknown" and "hardtests_web:native:sum-two" in meta["keywords"]
    assert yaml.startswith('# hardtests_web problem "native:sum-two"')
    ast.parse((pkg / "input_validators" / "validate.py").read_text())

    melon = tmp_path / "4awatermelon"
    melon_meta = _yaml_load((melon / "problem.yaml").read_text())
    # 2023-07-draft: a custom output validator is declared by its folder, not by a key.
    assert "validation" not in melon_meta and melon_meta["uuid"] != meta["uuid"]
    judge = (melon / "output_validator" / "validate.py").read_text()
    ast.parse(judge)
    assert "sys.exit(42 if accepted else 43)" in judge and "candidate_output.strip().upper()" in judge
    accepted = sorted(p.name for p in (melon / "submissions" / "accepted").iterdir())
    assert accepted == ["oracle-001.cpp", "oracle-002", "oracle-004.py"]  # python2 is left out; Java in a folder
    assert (melon / "submissions" / "accepted" / "oracle-002" / "Main.java").exists()
    # CodeContests only says "incorrect": no verdict to check, so rejected/.
    assert [p.name for p in (melon / "submissions" / "rejected").iterdir()] == ["candidate-001.py"]
    # The generated suite (3 tests) less the one that is the sample: samples are not repeated in secret.
    samples = {p.read_bytes() for p in (melon / "data" / "sample").glob("*.in")}
    secret = {p.read_bytes() for p in (melon / "data" / "secret").glob("*.in")}
    assert len(secret) == 2 and not samples & secret


@pytest.mark.django_db
def test_icpc_input_validator_exits_42_or_43_in_the_sandbox(tmp_path):
    sandbox = pytest.importorskip("sandbox")
    try:
        sb = sandbox.get_sandbox()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))
    dataset_import(format_name="native", paths=[str(FIXTURES / "native.jsonl")])
    icpc_export(problems=problems_select(["pid=sum-two"])[0], out=tmp_path)
    wrapper = (tmp_path / "sumtwo" / "input_validators" / "validate.py").read_text()
    program = sb.compile("python3", wrapper)
    results = sb.run(program, ["1 2\n", "99999999999 1\n", "not numbers\n"], sandbox.Limits(time_s=5))
    assert [r.exit_code for r in results] == [42, 43, 43]


def _run_validator(script: Path, stdin: bytes, *args: Path) -> int:
    # The exported validators are plain programs a judging system runs (DOMjudge, Kattis),
    # with files as arguments, which the project's sandbox does not pass: run them as it would.
    # PYTHONIOENCODING as on a judging host with a UTF-8 locale, where Python's standard streams
    # decode strictly (under the C locale of this machine they would escape bad bytes instead).
    env = {"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(["/usr/bin/python3", str(script), *map(str, args)], input=stdin, capture_output=True,
                          timeout=30, check=False, cwd=script.parent, env=env)
    return done.returncode


@pytest.mark.django_db
def test_icpc_validators_exit_42_or_43_when_run_as_the_package_runs_them(tmp_path):
    _catalogue()
    icpc_export(problems=problems_select(["pid=sum-two", "pid=4_A. Watermelon"])[0], out=tmp_path / "out")
    melon, plain = tmp_path / "out" / "4awatermelon", tmp_path / "out" / "sumtwo"
    judged = melon / "output_validator" / "validate.py"
    case, answer = melon / "data" / "sample" / "001.in", melon / "data" / "sample" / "001.ans"
    assert case.read_bytes() == b"8\n" and answer.read_bytes() == b"YES\n"

    def judge(team_output: bytes) -> tuple[int, str]:
        feedback = tmp_path / f"feedback-{len(list(tmp_path.iterdir()))}"
        feedback.mkdir()
        code = _run_validator(judged, team_output, case, answer, feedback)
        return code, (feedback / "judgemessage.txt").read_text()

    # The judging function accepts any case, which the default comparison would not.
    assert judge(b"yes\n") == (42, "accepted\n")
    assert judge(b"YES") == (42, "accepted\n")
    assert judge(b"NO\n") == (43, "output_judging_function returned False\n")
    assert judge(b"") == (43, "output_judging_function returned False\n")
    # Output that is not UTF-8 is a wrong answer, not a crash (a judge error to the system).
    assert judge(b"\xff\xfeYES\n")[0] == 43

    melon_inputs = melon / "input_validators" / "validate.py"
    assert [_run_validator(melon_inputs, data) for data in (b"8\n", b"100\n", b"101\n", b"0\n", b"eight\n")] == [
        42, 42, 43, 43, 43]

    # A problem without a judging function: the package says default validation, ships no output
    # validator, and its input validator still runs.
    assert "validation" not in _yaml_load((plain / "problem.yaml").read_text())
    assert not (plain / "output_validator").exists()
    plain_inputs = plain / "input_validators" / "validate.py"
    assert [_run_validator(plain_inputs, data) for data in (b"1 2\n", b"-5 7", b"99999999999 1\n", b"not numbers\n",
                                                             b"\xff\xfe")] == [42, 42, 43, 43, 43]


def test_icpc_output_validator_rejects_when_the_judging_function_raises(tmp_path):
    script = tmp_path / "validate.py"
    script.write_text(OUTPUT_VALIDATOR.format(code="def output_judging_function(i, c, r):\n    return int(c) == 1\n"))
    (tmp_path / "in").write_bytes(b"")
    (tmp_path / "ans").write_bytes(b"1\n")
    feedback = tmp_path / "feedback"
    feedback.mkdir()
    assert _run_validator(script, b"1\r\n", tmp_path / "in", tmp_path / "ans", feedback) == 42
    assert _run_validator(script, b"x\n", tmp_path / "in", tmp_path / "ans", feedback) == 43
    assert "raised ValueError" in (feedback / "judgemessage.txt").read_text()


@pytest.mark.django_db
def test_export_command_filters_and_refuses_unknown_filters(tmp_path, capsys):
    dataset_import(format_name="taco", paths=[str(FIXTURES / "taco.jsonl")])
    dataset_import(format_name="native", paths=[str(FIXTURES / "native.jsonl")])
    out = tmp_path / "taco.jsonl"
    call_command("export_dataset", "native", str(out), "--filter", "source=taco", "--filter", "tag=Mathematics")
    summary = json.loads(capsys.readouterr().out)
    assert summary["problems"] == 1
    assert json.loads(out.read_text())["platform_id"] == "codeforces:4A"
    with pytest.raises(CommandError, match="expected KEY=VALUE"):
        call_command("export_dataset", "native", str(out), "--filter", "colour=red")
    call_command("export_dataset", "training", str(tmp_path / "t"), "--filter", "has_kit")
    assert json.loads(capsys.readouterr().out)["problems"] == 1


def test_published_field_lists_match_the_schemas():
    assert PROBLEMS_SCHEMA.names == PUBLISHED_PROBLEMS and TESTS_SCHEMA.names == PUBLISHED_TESTS
    assert Path(FIXTURES / "hardtests_problems.jsonl").exists()
