"""On the bundled demo problems: the generated suites beat the public samples in precision,
and the quadratic trap (next-greater's naive scan, gold TLE, passes the samples) is one of
the samples' counted false positives. Real pipeline: demo_materialise --sync builds every
demo problem's generated suite from its kit in the sandbox and judges the candidates."""

from __future__ import annotations

import os

import pytest
from django.core.management import call_command

from problems.demo import demo_load
from problems.models import Problem, TestSuite
from tests.review.test_eval_services import run_sync

pytestmark = [pytest.mark.django_db, pytest.mark.slow, pytest.mark.timeout(3600)]

TRAP = ("demo/next-greater", "naive_scan.py")


def test_generated_suites_strictly_beat_the_public_samples_in_precision():
    demo_load()
    with open(os.devnull, "w") as quiet:
        call_command("demo_materialise", "--sync", stdout=quiet, stderr=quiet)
    with_kit = Problem.objects.filter(source="demo", kits__isnull=False).distinct().count()
    assert TestSuite.objects.filter(problem__source="demo", origin="generated", status="active").count() == with_kit

    r = run_sync(filter_expr="source=demo", origins=["generated", "public"]).report
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
