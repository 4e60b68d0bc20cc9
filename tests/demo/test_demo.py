"""The bundled demo problems, end to end on one materialisation (the shared `demo_runs` fixture:
every kit in the real sandbox, no LLM, fewer generator calls than the paper's; built once per
file, so the tests that need it live here together): the kits materialise into suites that give
every candidate its gold verdict; the quadratic trap is caught only by hacking tests; the
evaluation, judging every candidate against every suite, finds the generated suites strictly
more precise than the public samples; and one command curates the demo's programs as pretend
model answers into datasets that load."""

from __future__ import annotations

import io
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.core.management import call_command

from curation.models import Completion, CurationJob, JudgeScore, Selection
from generation.models import GenerationRun
from problems.models import Problem, Solution, TestCase, TestSuite
from review.evaluation.services import evaluation_report_create, evaluation_report_run, evaluation_select

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

TRAP = ("demo/next-greater", "naive_scan.py")

@pytest.mark.heavy(seconds=33)
def test_every_demo_kit_materialises_into_an_active_generated_suite(demo_runs: dict[str, GenerationRun]) -> None:
    failed = {pid: f"{run.failure_reason}: {run.error[:300]}" for pid, run in demo_runs.items()
              if run.status != GenerationRun.Status.SUCCEEDED}
    assert not failed
    for run in demo_runs.values():
        assert run.suite.status == TestSuite.Status.ACTIVE and run.suite.origin == TestSuite.Origin.GENERATED
        kinds = set(run.suite.tests.values_list("kind", flat=True))
        assert TestCase.Kind.DIRECT in kinds and TestCase.Kind.HACKING in kinds


def _judge_all(jobs: list[tuple[TestSuite, Solution]], mode: str = "fail_fast") -> list[str]:
    """Judge (suite, solution) pairs on a few threads; returns the verdicts in order."""
    from problems.judging import judge_code, suite_cache

    # Threads have their own database connections, which cannot see this test's uncommitted
    # rows: everything they need is loaded here and handed to them (the cache's own lookup
    # reads the judging function afresh, which a thread would find missing).
    loaded = {suite.pk: suite_cache.get(suite) for suite, _ in jobs}

    def one(job: tuple[TestSuite, Solution]) -> str:
        suite, solution = job
        return judge_code(problem=suite.problem, suite=suite, language=solution.language, code=solution.code,
                          mode=mode, loaded=loaded[suite.pk]).verdict

    with ThreadPoolExecutor(max_workers=3) as pool:
        return list(pool.map(one, jobs))


def _suite(run: GenerationRun) -> TestSuite:
    return TestSuite.objects.select_related("problem", "output_judge").get(pk=run.suite_id)


@pytest.mark.heavy(seconds=21)
def test_generated_suites_give_every_demo_candidate_its_gold_verdict(demo_runs: dict[str, GenerationRun]) -> None:
    jobs = [
        (_suite(run), candidate)
        for run in demo_runs.values() if run.status == GenerationRun.Status.SUCCEEDED
        for candidate in run.problem.solutions.filter(role=Solution.Role.CANDIDATE)
    ]
    assert len(jobs) >= len(demo_runs) * 3
    verdicts = _judge_all(jobs)
    wrong = [f"{suite.problem.pid} {candidate.name}: {verdict}, gold {candidate.gold_verdict}"
             for (suite, candidate), verdict in zip(jobs, verdicts, strict=True) if verdict != candidate.gold_verdict]
    assert not wrong


def test_the_quadratic_trap_is_caught_only_by_hacking_tests(demo_runs: dict[str, GenerationRun]) -> None:
    from problems.blobs import blob_get
    from problems.services import NewTest, suite_add_tests, suite_create

    run = demo_runs.get("demo/next-greater")
    if run is None:
        pytest.skip("the next-greater demo problem is not bundled")
    suite = _suite(run)
    naive = run.problem.solutions.get(name__contains="naive_scan")
    correct = run.problem.solutions.get(name__contains="alt_stack_right")
    # The same suite without its hacking tests.
    without = suite_create(problem=run.problem, origin=TestSuite.Origin.OFFICIAL, note="no hacking tests")
    kept = suite.tests.exclude(kind=TestCase.Kind.HACKING).order_by("ordinal")
    suite_add_tests(suite=without, tests=[
        NewTest(input=blob_get(t.input_sha256), output=blob_get(t.output_sha256), kind=t.kind) for t in kept
    ])
    without = TestSuite.objects.select_related("problem", "output_judge").get(pk=without.pk)
    assert without.test_count >= 10
    verdicts = _judge_all([(suite, naive), (without, naive), (without, correct)])
    assert verdicts == ["TLE", "AC", "AC"]


@pytest.mark.heavy(seconds=105)
def test_generated_suites_strictly_beat_the_public_samples_in_precision(demo_runs):
    with_kit = Problem.objects.filter(source="demo", kits__isnull=False).distinct().count()
    assert TestSuite.objects.filter(problem__source="demo", origin="generated", status="active").count() == with_kit

    report = evaluation_report_create(
        selection=evaluation_select(filter_expr="source=demo", origins=["generated", "public"])
    )
    # Near-duplicates of the big demo inputs are not what this test is about: keep them short.
    r = evaluation_report_run(report_id=report.pk, sync=True, near_duplicate_budget_s=2).report
    assert r["counts"]["pairs_missing"] == 0
    assert r["counts"]["suites_by_origin"]["generated"] == with_kit
    generated, public = r["by_origin"]["generated"], r["by_origin"]["public"]
    assert generated["precision"] is not None and public["precision"] is not None
    assert generated["precision"] > public["precision"], (generated, public)

    false_positives = {(m["origin"], m["pid"], m["solution"]): m for m in r["misclassified"]
                       if m["kind"] == "false_positive"}
    trap = false_positives.get(("public", *TRAP))
    assert trap is not None and trap["gold_verdict"] == "TLE" and trap["passed"] == trap["total"]
    assert public["fp"] == sum(1 for origin, _, _ in false_positives if origin == "public") >= 1
    # The generated suite's hacking tests catch it.
    assert ("generated", *TRAP) not in false_positives


@pytest.mark.heavy(seconds=70)
def test_curate_demo_runs_end_to_end_and_the_datasets_load(demo_runs, tmp_path: Path, fake_judge):
    """200+ completions verified in the real sandbox against the suites materialised above (the
    command's own materialisation of missing suites: tests/curation/test_demo_suites.py), judged
    by the fake LLM, selected under three rules, exported, loaded with `datasets.load_dataset`."""
    from datasets import load_dataset

    out = io.StringIO()
    call_command("curate", "demo", "--sync", "--out", str(tmp_path), "--judge", "demo-judge-x",
                 "--judge", "demo-judge-y", stdout=out)
    summary = json.loads(out.getvalue())
    job = CurationJob.objects.get(pk=summary["job"])
    assert job.demo and job.status == CurationJob.Status.VERIFIED
    assert summary["completions"] == job.total >= 200
    assert Completion.objects.filter(job=job, status=Completion.Status.DONE).count() == job.total
    # Gold-labelled demo programs: the right ones pass every test of the generated suite.
    right = Completion.objects.filter(job=job, gold="correct")
    assert right.count() >= 100 and all(c.pass_fraction == 1.0 for c in right)
    assert Completion.objects.filter(job=job, gold="incorrect", pass_fraction__lt=1.0).exists()
    assert JudgeScore.objects.filter(completion__job=job).count() == 2 * job.total
    labels = [s["rule"] for s in summary["selections"]]
    assert labels == ["tau>=0.6", "kind:hacking", "tau>=0.6 & judge:demo-judge-x>=7"]
    for item in summary["selections"]:
        selection = Selection.objects.get(pk=item["selection"])
        data = load_dataset(item["export"], split="train", cache_dir=str(tmp_path / "hf-cache"))
        assert data.num_rows == selection.kept == item["kept"] > 0
        assert set(data["demo_data"]) == {True} and set(data["rule"]) == {selection.label}
        assert "Demo data" in (Path(item["export"]) / "README.md").read_text()
        if selection.label.startswith("tau>=0.6 &"):
            assert all(score is not None and score >= 7 for score in data["judge_score"])
        assert all(f >= 0.6 for f in data["pass_fraction"]) or selection.label == "kind:hacking"
