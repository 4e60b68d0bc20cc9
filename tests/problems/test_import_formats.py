"""Hand-written rows of every format: what arrives, and every malformed row refused with its reason."""

from __future__ import annotations

import base64
import copy
import json
import os
import pickle
import zlib
from pathlib import Path
from typing import Any

import pytest

from problems.blobs import blob_get, blob_text
from problems.importers.runner import ImportAborted, dataset_import
from problems.importers.unpickle import cases_encode
from problems.models import Problem, TestCase
from tests.problems.fixtures import FIXTURES, db_counts, jsonl, rows

pytestmark = pytest.mark.django_db


def _import(fmt: str, *names: str, **kwargs: Any) -> dict:
    return dataset_import(format_name=fmt, paths=[str(FIXTURES / n) for n in names], **kwargs)


def test_hardtests_rows_arrive_with_ranks_kit_mapping_and_suites():
    summary = _import("hardtests", "hardtests_problems.jsonl", "hardtests_tests.jsonl")
    assert summary["created"] == 2 and summary["skipped"]["total"] == 1
    assert summary["counts"]["call_based_skipped"] == 1
    assert summary["counts"]["tests_rows_without_problem"] == 1
    p = Problem.objects.get(source="hardtests", pid="atcoder_abc100_a")
    assert (p.platform, p.platform_id, p.time_limit_ms, p.memory_limit_mb) == ("atcoder", "atcoder:abc100_a", 2000,
                                                                               1024)
    assert str(p.contest_date) == "2018-06-16"
    assert sorted(p.tags.values_list("name", flat=True)) == ["implementation", "math"]
    assert list(p.difficulties.values_list("source", "level", "score")) == [("atcoder", "easy", 100.0)]
    ranks = {s.source: (s.reliability, s.language) for s in p.solutions.all()}
    assert ranks == {"atcoder_submission": (1, "python3"), "luogu_editorial": (3, "cpp"), "taco": (5, "python2")}
    kit = p.kits.get()
    assert kit.validator.code.startswith("def validate_input") and kit.output_judge is None
    assert kit.direct_inputs == ["5 4\n", "8 8\n"]
    assert "gen_range_based_input" in kit.regular_generator and "gen_hacking_input" in kit.hacking_generator
    assert kit.extra["nesting"] == "flat"
    suite = p.suites.get(origin="generated", status="active")
    tests = list(suite.tests.order_by("ordinal").values_list("kind", "generator", "call_number"))
    # Call numbers from 1 and direct tests named LLMGen_input, as materialising numbers and names them.
    assert tests == [("direct", "LLMGen_input", 1), ("direct", "LLMGen_input", 2), ("regular", "gen_range_based_input", 1),
                     ("regular", "gen_range_based_input", 2), ("hacking", "gen_hacking_input_sum_limit", 1)]
    assert blob_text(suite.tests.get(ordinal=4).output_sha256) == ":(\n"
    assert p.suites.get(origin="public").test_count == 1
    mirror = Problem.objects.get(pid="luogu_CF4A")
    assert mirror.platform_id == "codeforces:4A" and mirror.contest_date is None
    assert mirror.extra["hardtests"]["contest_date"] == "not a date"
    kit = mirror.kits.get()
    assert kit.extra["nesting"] == "input_generation" and kit.output_judge is not None
    kinds = list(mirror.suites.get(origin="generated").tests.order_by("ordinal").values_list("kind", "generator"))
    assert kinds == [("direct", "LLMGen_input"), ("stratified", "gen_stratified_input_yes"),
                     ("stratified", "gen_stratified_input_no")]


def test_codecontests_rows_make_three_suites_and_map_languages():
    summary = _import("codecontests", "codecontests.jsonl")
    assert summary["created"] == 2
    p = Problem.objects.get(source="codecontests", pid="4_A. Watermelon")
    assert (p.title, p.platform, p.platform_id) == ("Watermelon", "codeforces", "codeforces:4A")
    assert p.url == "https://codeforces.com/contest/4/problem/A"
    assert (p.time_limit_ms, p.memory_limit_mb) == (1000, 64)
    assert sorted(p.difficulties.values_list("source", "level")) == [("codecontests", "A"), ("codeforces", "800")]
    suites = {s.origin: s.test_count for s in p.suites.filter(status="active")}
    assert suites == {"public": 1, "official": 2, "imported": 3}
    oracles = sorted(p.solutions.filter(role="oracle").values_list("language", flat=True))
    assert oracles == ["cpp", "java", "python2", "python3"]  # the blank solution is dropped
    assert p.solutions.get(language="python2").note.startswith("Python 2")
    candidate = p.solutions.get(role="candidate")
    assert (candidate.gold_verdict, candidate.reliability) == ("REJECTED", None)
    aizu = Problem.objects.get(pid="p00001 List of Top 3 Hills")
    assert (aizu.platform, aizu.time_limit_ms, aizu.memory_limit_mb) == ("aizu", 1500, 128)
    assert summary["counts"]["solutions_python2"] == 1


def test_taco_rows_parse_text_fields_and_skip_call_based():
    summary = _import("taco", "taco.jsonl")
    assert summary["created"] == 2
    assert summary["skipped"]["reasons"] == {"call-based problem (fn_name or starter code)": 1}
    p = Problem.objects.get(source="taco", pid="codeforces.com/problemset/problem/4/A")
    assert (p.title, p.platform, p.platform_id, p.time_limit_ms, p.memory_limit_mb) == (
        "Watermelon", "codeforces", "codeforces:4A", 1000, 64)
    assert sorted(p.tags.values_list("name", flat=True)) == ["Complete search", "Mathematics"]
    suite = p.suites.get(status="active")
    assert [blob_text(t.output_sha256) for t in suite.tests.order_by("ordinal")] == ["YES\n", "NO\n"]
    assert sorted(p.solutions.values_list("language", "reliability")) == [("python2", 5), ("python3", 5)]
    hashed = Problem.objects.get(platform="hackerearth")
    assert hashed.pid.startswith("sha256:") and hashed.title.startswith("Given N")


def test_native_rows_keep_everything_including_binary_tests():
    summary = _import("native", "native.jsonl")
    assert summary["created"] == 2
    p = Problem.objects.get(source="native", pid="sum-two")
    assert p.platform_id == "url:example.org/problems/sum-two"
    assert list(p.aliases.values_list("source", "pid")) == [("elsewhere", "A+B")]
    kit = p.kits.get()
    assert (kit.origin, kit.model_name, kit.direct_inputs) == ("llm", "test-model", ["0 0\n", "-5 5\n"])
    binary = p.suites.get(origin="generated").tests.get(ordinal=3)
    assert blob_get(binary.input_sha256) == b"\xff\xfe"
    minimal = Problem.objects.get(pid="minimal")
    assert (minimal.time_limit_ms, minimal.memory_limit_mb, minimal.platform_id) == (2000, 256, "")


def test_limit_imports_only_the_first_rows():
    summary = _import("codecontests", "codecontests.jsonl", limit=1)
    assert (summary["rows"], summary["created"]) == (1, 1)
    assert Problem.objects.count() == 1


# --- malformed rows ---------------------------------------------------------------------------

NATIVE = rows("native.jsonl")[0]
CODECONTESTS = rows("codecontests.jsonl")[0]
TACO = rows("taco.jsonl")[0]
KLEAR = rows("klear_handwritten.jsonl")[0]
HT_PROBLEM = rows("hardtests_problems.jsonl")[0]
HT_TESTS = rows("hardtests_tests.jsonl")[0]


class _Evil:
    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, ("touch /tmp/hardtests-pwned",))


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _set(path: str, value: Any) -> Any:
    def change(row: dict) -> dict:
        row = copy.deepcopy(row)
        *parents, last = path.split(".")
        target = row
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        if value is _DELETE:
            del target[last]
        elif last.isdigit():
            target[int(last)] = value
        else:
            target[last] = value
        return row
    return change


_DELETE = object()

NATIVE_CASES = [
    ("not json", "{pid: 1", "not valid JSON"),
    ("array", [1, 2], "a row must be a JSON object, got list"),
    ("no pid", _set("pid", _DELETE), "missing required field 'pid'"),
    ("empty title", _set("title", "  "), "title: is empty"),
    ("pid too long", _set("pid", "p" * 201), "pid: is longer than 200 characters"),
    ("source too long", _set("source", "s" * 51), "source: is longer than 50 characters"),
    ("title not text", _set("title", 5), "title: must be a string, got int"),
    ("time limit text", _set("time_limit_ms", "fast"), "time_limit_ms: must be an integer, got 'fast'"),
    ("time limit zero", _set("time_limit_ms", 0), "time_limit_ms: must be greater than or equal to 1, got 0"),
    ("memory huge", _set("memory_limit_mb", 10**6), "memory_limit_mb: must be less than or equal to 65536, got 1000000"),
    ("bad date", _set("contest_date", "yesterday"), "contest_date: is not an ISO date: 'yesterday'"),
    ("label without source", _set("difficulty", [{"level": "x"}]), "missing required field 'difficulty[0].source'"),
    ("label score text", _set("difficulty.0.score", "high"), "difficulty[0].score: must be a number or null"),
    ("tags not list", _set("tags", "math"), "tags: must be a list, got str"),
    ("empty tag", _set("tags", ["ok", ""]), "tags: must be a list of non-empty strings"),
    ("sample input number", _set("samples.0.input", 1), "samples[0].input: must be a string, got int"),
    ("solution role", _set("solutions.0.role", "judge"), "solutions[0].role: must be one of 'oracle' or 'candidate', got 'judge'"),
    ("solution language", _set("solutions.0.language", "rust"), "solutions[0].language: must be one of"),
    ("solution empty code", _set("solutions.1.code", "  "), "solutions[1].code: is empty"),
    ("solution verdict", _set("solutions.0.verdict", "OK"), "solutions[0].verdict: must be one of"),
    ("solution reliability", _set("solutions.0.reliability", "1"), "solutions[0].reliability: must be an integer, got str"),
    ("solution source long", _set("solutions.0.source", "x" * 101), "solutions[0].source: is longer than 100 characters"),
    ("kit not object", _set("kit", "yes"), "kit: must be an object, got str"),
    ("kit needs judge", _set("kit.needs_custom_output_judging_function", True), "needs an output judging function"),
    ("kit inputs", _set("kit.LLMGen_input", "5"), "kit.LLMGen_input: must be a list, got str"),
    ("kit validator", _set("kit.input_validator", 5), "kit.input_validator: must be a string, got int"),
    ("kit origin", _set("kit.origin", "robot"), "kit.origin: must be one of"),
    ("kit empty", _set("kit", {}), "kit has no validator, judge, inputs or generators"),
    ("suite origin", _set("suites.0.origin", "secret"), "suites[0].origin: must be one of"),
    ("two public suites", _set("suites.1.origin", "public"), "suites[1]: a second suite of origin 'public'"),
    ("test kind", _set("suites.1.tests.0.kind", "random"), "suites[1].tests[0].kind: must be one of"),
    ("test output missing", _set("suites.1.tests.0.output", _DELETE), "suites[1].tests[0]: output must be a string"),
    ("test bad base64", _set("suites.1.tests.3.input_b64", "!!"), "suites[1].tests[3]: input_b64 is not valid base64"),
    ("test call number", _set("suites.1.tests.0.call_number", -1), "suites[1].tests[0].call_number: must be greater than or equal to 0, got -1"),
    ("alias without source", _set("aliases", [{"pid": "x"}]), "missing required field 'aliases[0].source'"),
    ("extra not object", _set("extra", "x"), "extra: must be an object, got str"),
]

CODECONTESTS_CASES = [
    ("no name", _set("name", _DELETE), "missing required field 'name'"),
    ("no description", _set("description", ""), "field 'description' is empty"),
    ("source enum", _set("source", 9), "field 'source': unknown value 9"),
    ("difficulty name", _set("difficulty", "IMPOSSIBLE"), "field 'difficulty': unknown value 'IMPOSSIBLE'"),
    ("tests mismatch", _set("public_tests.output", []), "public_tests has 1 inputs but 0 outputs"),
    ("test not text", _set("private_tests.input.0", 2), "private_tests[0]: input and output must be strings"),
    ("solutions mismatch", _set("solutions.language", [2]), "solutions.language and solutions.solution must be lists"),
    ("language enum", _set("incorrect_solutions.language.0", 7), "field 'incorrect_solutions.language[0]': unknown value 7"),
    ("time limit", _set("time_limit", 5), "field 'time_limit' must be an object with 'seconds' and 'nanos'"),
    ("memory", _set("memory_limit_bytes", -1), "field 'memory_limit_bytes' must be a non-negative integer"),
]

TACO_CASES = [
    ("no question", _set("question", _DELETE), "missing required field 'question'"),
    ("io json", _set("input_output", "{"), "field 'input_output' is not valid JSON"),
    ("io lengths", _set("input_output", '{"inputs": ["1", "2"], "outputs": ["1"]}'),
     "input_output has 2 inputs but 1 outputs"),
    ("io number", _set("input_output", '{"inputs": [1], "outputs": ["1"]}'), "input_output.inputs[0] must be a string"),
    ("solutions json", _set("solutions", "not json"), "field 'solutions' is not valid JSON"),
    ("solutions types", _set("solutions", "[1]"), "field 'solutions' must be a JSON list of strings"),
    ("tags literal", _set("tags", "[unclosed"), "field 'tags' is not a list literal"),
    ("time limit", _set("time_limit", "forever"), "field 'time_limit': not a time limit: 'forever'"),
]

KLEAR_CASES = [
    ("no id", _set("custom_id", _DELETE), "missing required field 'custom_id'"),
    ("generator syntax", _set("input_generator", ["def f(:\n"]), "input_generator[0] is not valid Python (line 1"),
    ("generator entry", _set("input_generator", ["def other():\n    return []\n"]),
     "input_generator[0] defines no generate_test_inputs()"),
    ("checker entry", _set("checker", ["def check(output):\n    return True\n"]),
     "checker[0] defines no function taking (input, output, reference_output)"),
    ("solutions types", _set("solutions", [1]), "field 'solutions' must be a list of strings"),
    ("ground truth", _set("reward.ground_truth", '{"input_output": [{"input": 1, "output": "2"}]}'),
     "reward.ground_truth.input_output[0] must have string 'input' and 'output'"),
    ("time limit", _set("time-limit", "soon"), "field 'time-limit': not a time limit"),
]

HARDTESTS_PROBLEM_CASES = [
    ("no statement", _set("question_content", _DELETE), "missing required field 'question_content'"),
    ("public tests", _set("public_test_cases", "x"), "field 'public_test_cases' is not valid JSON"),
    ("time limit", _set("time_limit", "soon"), "field 'time_limit': not a time limit: 'soon'"),
    ("memory limit", _set("memory_limit", "lots"), "field 'memory_limit': not a memory limit: 'lots'"),
    ("difficulty", _set("difficulty_ratings", ["hard"]), "difficulty_ratings[0] must be an object"),
    ("tags", _set("tags", [{"content": "dp", "source": "x"}]), "tags[0].content must be a list of strings"),
    ("solution", _set("solutions.0.code", 5), "solutions[0] must be an object with a string 'code'"),
]

HARDTESTS_TESTS_CASES = [
    ("base64", _set("test_cases", "not base64!!"), "tests: ", "test_cases: not valid base64"),
    ("zlib", _set("test_cases", _b64(b"plain bytes")), "", "test_cases: not zlib data"),
    ("os.system pickle", _set("test_cases", _b64(zlib.compress(pickle.dumps([_Evil()])))), "",
     "refers to posix.system"),
    ("dict", _set("test_cases", _b64(zlib.compress(pickle.dumps(json.dumps({"a": 1}))))), "",
     "test_cases must decode to a list of tests, got dict"),
    ("test item", _set("test_cases", cases_encode([{"input": "1"}])), "", "test_cases[0] must be an object"),
    ("mapping range", _set("mapping.LLMGen", [0, 9]), "", "tests: mapping.LLMGen refers to test 9, but test_cases has 5"),
    ("mapping type", _set("mapping.RPGen", "x"), "", "tests: mapping.RPGen must be a list"),
    ("generator", _set("test_cases_kit.RPGen", 5), "", "tests: test_cases_kit RPGen must be an object"),
    ("direct", _set("test_cases_kit.LLMGen", "5"), "", "tests: test_cases_kit LLMGen must be a list of strings"),
    ("validator", _set("test_cases_kit.input_validator", 7), "", "tests: input_validator and output_judging_function"),
]


def _assert_refused(tmp_path: Path, fmt: str, files: list[tuple[str, list[Any]]], where: str, message: str) -> None:
    paths = [jsonl(tmp_path / name, items) for name, items in files]
    before = db_counts()
    with pytest.raises(ImportAborted) as caught:
        dataset_import(format_name=fmt, paths=[str(p) for p in paths])
    text = str(caught.value)
    assert text.startswith(f"{tmp_path / where}: "), text
    assert message in text, text
    assert text.endswith("(nothing was imported)")
    assert db_counts() == before  # not one row, not one blob file


def _bad(base: dict, change: Any) -> Any:
    return change(base) if callable(change) else change


@pytest.mark.parametrize(("name", "change", "message"), NATIVE_CASES, ids=[c[0] for c in NATIVE_CASES])
def test_malformed_native_row_is_refused(tmp_path, name, change, message):
    _assert_refused(tmp_path, "native", [("rows.jsonl", [NATIVE, _bad(NATIVE, change)])], "rows.jsonl:2", message)


@pytest.mark.parametrize(("name", "change", "message"), CODECONTESTS_CASES, ids=[c[0] for c in CODECONTESTS_CASES])
def test_malformed_codecontests_row_is_refused(tmp_path, name, change, message):
    rows_ = [CODECONTESTS, _bad(CODECONTESTS, change)]
    _assert_refused(tmp_path, "codecontests", [("cc.jsonl", rows_)], "cc.jsonl:2", message)


@pytest.mark.parametrize(("name", "change", "message"), TACO_CASES, ids=[c[0] for c in TACO_CASES])
def test_malformed_taco_row_is_refused(tmp_path, name, change, message):
    _assert_refused(tmp_path, "taco", [("taco.jsonl", [TACO, _bad(TACO, change)])], "taco.jsonl:2", message)


@pytest.mark.parametrize(("name", "change", "message"), KLEAR_CASES, ids=[c[0] for c in KLEAR_CASES])
def test_malformed_klear_row_is_refused(tmp_path, name, change, message):
    _assert_refused(tmp_path, "klear", [("k.jsonl", [KLEAR, _bad(KLEAR, change)])], "k.jsonl:2", message)


@pytest.mark.parametrize(("name", "change", "message"), HARDTESTS_PROBLEM_CASES,
                         ids=[c[0] for c in HARDTESTS_PROBLEM_CASES])
def test_malformed_hardtests_problem_row_is_refused(tmp_path, name, change, message):
    other = {**HT_PROBLEM, "pid": "other"}
    files = [("p.jsonl", [other, _bad(HT_PROBLEM, change)]), ("t.jsonl", [HT_TESTS])]
    _assert_refused(tmp_path, "hardtests", files, "p.jsonl:2", message)


@pytest.mark.parametrize(("name", "change", "prefix", "message"), HARDTESTS_TESTS_CASES,
                         ids=[c[0] for c in HARDTESTS_TESTS_CASES])
def test_malformed_hardtests_tests_row_is_refused(tmp_path, name, change, prefix, message):
    # The error is reported at the problem's row, which the tests row is joined to.
    other = {**HT_PROBLEM, "pid": "other"}
    files = [("p.jsonl", [other, HT_PROBLEM]), ("t.jsonl", [_bad(HT_TESTS, change)])]
    _assert_refused(tmp_path, "hardtests", files, "p.jsonl:2", message)
    assert not Path("/tmp/hardtests-pwned").exists()


def test_hardtests_without_a_problems_file_is_refused(tmp_path):
    path = jsonl(tmp_path / "t.jsonl", [HT_TESTS])
    with pytest.raises(ImportAborted, match="hardtests needs the problems file"):
        dataset_import(format_name="hardtests", paths=[str(path)])
    other = jsonl(tmp_path / "x.jsonl", [{"something": 1}])
    with pytest.raises(ImportAborted, match="neither a HardTests problems file"):
        dataset_import(format_name="hardtests", paths=[str(other)])


def test_missing_file_and_unknown_format_are_refused(tmp_path):
    with pytest.raises(ImportAborted, match="no such file or directory"):
        dataset_import(format_name="taco", paths=[str(tmp_path / "nope.jsonl")])
    with pytest.raises(ImportAborted, match="unknown format 'apps'"):
        dataset_import(format_name="apps", paths=[str(FIXTURES / "taco.jsonl")])
    (tmp_path / "data.csv").write_text("a,b\n")
    with pytest.raises(ImportAborted, match="unknown file type"):
        dataset_import(format_name="taco", paths=[str(tmp_path / "data.csv")])
    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    with pytest.raises(ImportAborted, match="not a readable parquet file"):
        dataset_import(format_name="taco", paths=[str(tmp_path / "broken.parquet")])


def test_test_kinds_cover_every_choice():
    # The mapping's kinds are the model's choices, so a suite never holds an unknown kind.
    assert {"direct", "regular", "stratified", "hacking", "imported", "public", "edge", "time_only"} == set(TestCase.Kind.values)
