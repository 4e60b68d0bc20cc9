"""On the bundled demo problems: the generated suites beat the public samples in precision,
and the quadratic trap (next-greater's naive scan, gold TLE, passes the samples) is one of
the samples' counted false positives. Real pipeline: every demo kit is materialised in the
sandbox (the shared `demo_runs` fixture, with fewer generator calls than the paper's) and the
evaluation judges every candidate against every suite."""

from __future__ import annotations

import pytest

from problems.models import Problem, TestSuite
from review.evaluation.services import evaluation_report_create, evaluation_report_run, evaluation_select

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

TRAP = ("demo/next-greater", "naive_scan.py")


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
