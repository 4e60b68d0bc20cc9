"""The evaluation on data nobody here wrote: the Klear-CodeTest record (24 gold C++
solutions of JOI "Wall"), judged against its published tests and against a suite
materialised from its published generator.

Klear publishes no wrong programs, so only recall (gold programs wrongly rejected) and the
suites' own shape (near-duplicates) can be measured: precision is 1 or undefined and TNR is
undefined by construction. The gold solutions take up to ~1.7 s of CPU on the heavier
inputs: the run keeps the two cheapest (tests/klear.py), one measured (--per-problem 1) and
both as oracles: about 30 s where the first two by position took ~140 s.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from django.core.management import call_command

from problems.models import Problem, Solution, TestSuite
from review.evaluation.redundancy import is_near_duplicate
from tests.klear import keep_cheapest_gold

REPO = Path(__file__).resolve().parents[2]
RECORD = REPO.parent / "shared" / "fixtures" / "klear" / "sample_with_generated_testcases.jsonl"
KEEP_SOLUTIONS = 1

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow,
    pytest.mark.skipif(not RECORD.exists(), reason=f"the Klear-CodeTest fixture is not at {RECORD.parent} "
                                                   "(../shared is absent)"),
]


def _published_near_duplicate_share() -> float:
    """The rule applied by brute force to the record's own inputs (independent of the pipeline)."""
    inputs = [t["input"].encode() for t in json.loads(RECORD.read_text())["reward"]["ground_truth"]["input_output"]]
    distinct = sorted(set(inputs))
    near = {a for a in distinct for b in distinct if a != b and is_near_duplicate(a, b)}
    return sum(inputs.count(body) > 1 or body in near for body in inputs) / len(inputs)


@pytest.mark.heavy(seconds=29)
def test_klear_gold_solutions_against_published_and_regenerated_suites(settings, tmp_path: Path) -> None:
    from generation.models import GenerationRun
    from generation.pipeline import generation_run_execute
    from generation.services import generation_run_start
    from problems.importers.runner import dataset_import

    settings.HARDTESTS_MAX_ORACLES = 2  # two agreeing oracles fix the outputs
    dataset_import(format_name="klear", paths=[str(RECORD)])
    problem = Problem.objects.get(source="klear", pid="code_contest_8")
    keep_cheapest_gold(problem, RECORD, 2)
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False)
    generation_run_execute(run_id=run.pk)
    generated = problem.suites.get(origin=TestSuite.Origin.GENERATED, status=TestSuite.Status.ACTIVE)
    published = problem.suites.get(origin=TestSuite.Origin.IMPORTED, status=TestSuite.Status.ACTIVE)
    # The seeded generator draws the record's 100 inputs, of which 19 are distinct.
    assert (published.test_count, generated.test_count) == (100, 19)

    out = tmp_path / "klear.json"
    call_command("evaluate", "--pids", problem.pid, "--roles", "oracle", "--per-problem",
                 str(KEEP_SOLUTIONS), "--layout", "hardtests", "--out", str(out),
                 "--sync", stdout=open(os.devnull, "w"))
    report = json.loads(out.read_text())
    assert report["counts"]["candidates"] == KEEP_SOLUTIONS
    assert report["counts"]["pairs_judged"] == report["counts"]["pairs_wanted"] == 2 * KEEP_SOLUTIONS
    for origin in ("imported", "generated"):
        m = report["by_origin"][origin]
        # Every gold solution passes both suites: no false negative; no negatives at all.
        assert (m["tp"], m["fp"], m["tn"], m["fn"]) == (KEEP_SOLUTIONS, 0, 0, 0)
        assert (m["recall"], m["precision"], m["tnr"]) == (1.0, 1.0, None)
    paper = report["paper"]
    assert paper["columns"] == ["all"] and (paper["problems_compared"], paper["problems_excluded"]) == (1, 0)
    near = report["near_duplicates"]["per_problem"]
    assert near["imported"]["max_share"] == pytest.approx(_published_near_duplicate_share())
    assert near["generated"]["max_share"] < near["imported"]["max_share"]  # the generated suite keeps distinct inputs
    assert Solution.objects.filter(problem=problem, role=Solution.Role.CANDIDATE).count() == 0
    assert "paper-macro-all,imported,1.0" in (tmp_path / "klear.tables.csv").read_text()
