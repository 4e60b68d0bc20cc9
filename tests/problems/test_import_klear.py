"""The real Klear-CodeTest records (../shared/fixtures/klear) and hand-written Klear rows."""

from __future__ import annotations

import json

import pytest

from problems.blobs import blob_text
from problems.importers.klear import checker_judge
from problems.importers.runner import dataset_import
from problems.models import Language, Problem, TestSuite
from tests.problems.fixtures import FIXTURES, KLEAR, KLEAR_FILES, db_counts

pytestmark = pytest.mark.django_db

needs_klear = pytest.mark.skipif(
    not all((KLEAR / f).exists() for f in KLEAR_FILES),
    reason=f"the Klear-CodeTest sample records are not at {KLEAR} (../shared is absent)",
)


def _klear(name: str) -> dict:
    return json.loads((KLEAR / name).read_text())


def _import_all_klear() -> list[dict]:
    return [dataset_import(format_name="klear", paths=[str(KLEAR / f)]) for f in KLEAR_FILES]


@needs_klear
def test_real_klear_records_arrive_with_detected_languages_kit_and_tests():
    summaries = _import_all_klear()
    assert [s["created"] for s in summaries] == [1, 0, 1, 0]
    assert [s["updated"] for s in summaries] == [0, 1, 0, 1]  # the *_with_* files add the published tests

    wall = Problem.objects.get(source="klear", pid="code_contest_8")
    record = _klear("sample_with_generated_testcases.jsonl")
    assert wall.title == "Wall (Rampart)"
    assert wall.statement == record["question"]
    assert (wall.time_limit_ms, wall.memory_limit_mb) == (8000, 256)
    languages = list(wall.solutions.values_list("language", flat=True))
    assert len(languages) == 24 and set(languages) == {Language.CPP}
    assert set(wall.solutions.values_list("role", "gold_verdict", "source").distinct()) == {
        ("oracle", "AC", "klear_gold")
    }
    kit = wall.kits.get()
    # One generator: stored verbatim, its generate_test_inputs() is the kit's batch generator.
    assert kit.batch_generator == record["input_generator"][0]
    assert kit.output_judge is None and not kit.needs_output_judge
    suite = wall.suites.get(status=TestSuite.Status.ACTIVE)
    assert (suite.origin, suite.test_count, suite.counts_by_kind) == ("imported", 100, {"imported": 100})
    first = suite.tests.order_by("ordinal").first()
    truth = record["reward"]["ground_truth"]["input_output"][0]
    assert (blob_text(first.input_sha256), blob_text(first.output_sha256)) == (truth["input"], truth["output"])

    spj = Problem.objects.get(source="klear", pid="openr1_cf_368")
    record = _klear("spj_sample_with_special_testcases.jsonl")
    assert (spj.time_limit_ms, spj.memory_limit_mb) == (10000, 1024)
    assert spj.solutions.count() == 5 and set(spj.solutions.values_list("language", flat=True)) == {"cpp"}
    kit = spj.kits.get()
    # Four generators: one wrapper module that loads each as its own module.
    assert "def generate_test_inputs():" in kit.batch_generator
    for program in record["input_generator"]:
        assert repr(program) in kit.batch_generator
    # The first checker judges, adapted to the judging-function contract; the second is kept.
    assert kit.needs_output_judge
    assert repr(record["checker"][0]) in kit.output_judge.code
    assert "def output_judging_function(input_str, candidate_output, reference_output):" in kit.output_judge.code
    assert kit.extra["klear"]["other_checkers"] == record["checker"][1:]
    assert spj.suites.get(status="active").test_count == 100


@needs_klear
def test_reimporting_klear_changes_nothing():
    _import_all_klear()
    before = db_counts()
    again = _import_all_klear()
    assert db_counts() == before
    # A row without tests does not remove the suite another file brought: every row is unchanged.
    assert [s["unchanged"] for s in again] == [1, 1, 1, 1]


@needs_klear
def test_adapted_checker_and_generators_run_in_the_sandbox():
    sandbox = pytest.importorskip("sandbox")
    try:
        sb = sandbox.get_sandbox()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))
    dataset_import(format_name="klear", paths=[str(KLEAR / "spj_sample_with_special_testcases.jsonl")])
    problem = Problem.objects.get(pid="openr1_cf_368")
    kit = problem.kits.get()
    test = problem.suites.get(status="active").tests.order_by("ordinal").first()
    inp, out = blob_text(test.input_sha256), blob_text(test.output_sha256)
    limits = sandbox.Limits(time_s=10, memory_mb=512)
    judged = sandbox.call_python(sb, kit.output_judge.code, "output_judging_function",
                                 [(inp, out, out), (inp, "1 1 1\n", out)], limits)
    assert [(r.ok, r.value) for r in judged] == [(True, True), (True, False)]
    generated = sandbox.call_python(sb, kit.batch_generator, "generate_test_inputs", [()], limits)[0]
    assert generated.ok and len(generated.value) == 400 and all(isinstance(x, str) for x in generated.value)


def test_handwritten_klear_rows_detect_python_and_skip_call_based():
    summary = dataset_import(format_name="klear", paths=[str(FIXTURES / "klear_handwritten.jsonl")])
    assert summary["created"] == 1
    assert summary["skipped"] == {"total": 1, "reasons": {"call-based problem (fn_name or starter code)": 1}}
    assert summary["counts"]["call_based_skipped"] == 1
    problem = Problem.objects.get(pid="hand_sum")
    assert sorted(problem.solutions.values_list("language", flat=True)) == ["cpp", "python3"]
    assert problem.title == "Sum"
    judge = problem.kits.get().output_judge.code
    assert "forwards to its is_valid_output()" in judge
    assert problem.suites.get(status="active").test_count == 2


def test_checker_without_a_three_argument_function_is_refused():
    from problems.importers.base import RowError

    with pytest.raises(RowError, match="defines no function taking"):
        checker_judge("def check(output):\n    return True\n", "checker[0]")
    # A checker that already has the contract is kept as it is.
    code = "def output_judging_function(i, c, r):\n    return c == r\n"
    assert checker_judge(code, "checker[0]") == code
