"""The tuning / held-out split: deterministic, keeps both labels on each side, says when a problem
has too few candidates; `evaluate` reports on held-out candidates by default and names the split."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from generation.refine.split import HELD_OUT, TUNING, candidate_split
from problems.models import Solution, TestSuite
from problems.services import NewTest, solution_upsert, suite_activate, suite_add_tests, suite_create
from review.evaluation.services import evaluation_report_create, evaluation_report_run, evaluation_select
from tests.generation.conftest import make_problem

pytestmark = [pytest.mark.django_db]

RIGHT = "a, b = map(int, input().split())\nprint(a + b{})\n"
WRONG = "a, b = map(int, input().split())\nprint(a - b{})\n"


def labelled(problem, right: int, wrong: int) -> None:
    for i in range(right):
        solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3",
                        code=RIGHT.format(" + 0" * i), name=f"right{i}", gold_verdict="AC")
    for i in range(wrong):
        solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3",
                        code=WRONG.format(" + 0" * i), name=f"wrong{i}", gold_verdict="WA")


def test_the_split_is_deterministic_and_keeps_both_labels_on_each_side() -> None:
    problem = make_problem()
    labelled(problem, 5, 5)
    first, again = candidate_split(problem), candidate_split(problem)
    assert [s.pk for s in first.held_out] == [s.pk for s in again.held_out]
    assert len(first.held_out) == 4 and len(first.tuning) == 6  # 30% of each label, rounded
    for side in (first.tuning, first.held_out):
        assert {s.gold_verdict for s in side} == {"AC", "WA"}
    # A new candidate never moves an existing one.
    labelled(problem, 6, 5)
    later = candidate_split(problem)
    moved = {s.pk for s in first.held_out} - {s.pk for s in later.held_out}
    assert len(moved) <= 1


def test_too_few_candidates_are_all_tuning_and_it_is_said(settings) -> None:
    settings.HARDTESTS_SPLIT_MIN_CANDIDATES = 6
    problem = make_problem()
    labelled(problem, 2, 2)
    split = candidate_split(problem)
    assert len(split.tuning) == 4 and split.held_out == []
    assert "fewer than 6" in split.note and "all used for tuning" in split.note


@pytest.mark.slow
def test_evaluate_reports_on_held_out_candidates_by_default(tmp_path) -> None:
    problem = make_problem()
    labelled(problem, 5, 5)
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED)
    suite_add_tests(suite=suite, tests=[NewTest(input="1 2\n", output="3\n", kind="direct"),
                                        NewTest(input="5 5\n", output="10\n", kind="direct")])
    suite_activate(suite=suite)
    held = candidate_split(problem).held_out

    def run(**kw):
        row = evaluation_report_create(selection=evaluation_select(pids=[problem.pid], origins=["generated"], **kw))
        return evaluation_report_run(report_id=row.pk, sync=True).report

    report = run()
    assert report["split"]["name"] == HELD_OUT and "refinement never saw them" in report["split"]["note"]
    m = report["by_origin"]["generated"]
    assert m["tp"] + m["fn"] + m["tn"] + m["fp"] == len(held) == 4
    both = run(split="both")
    assert both["by_split"][TUNING]["generated"]["tp"] + both["by_split"][TUNING]["generated"]["tn"] == 6
    assert both["by_split"][HELD_OUT]["generated"]["tp"] + both["by_split"][HELD_OUT]["generated"]["tn"] == 4
    everything = run(split="all")
    assert sum(everything["by_origin"]["generated"][k] for k in ("tp", "fn", "tn", "fp")) == 10
    out = io.StringIO()
    call_command("evaluate", "--pids", problem.pid, "--origins", "generated", "--split", "both",
                 "--out", str(tmp_path / "report.json"), "--sync", stdout=out)
    text = out.getvalue()
    assert "split: held_out (held-out candidates only" in text
    assert "tuning    generated  TPR 1.000" in text and "held_out  generated" in text
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["params"]["split"] == "both" and saved["split"]["candidates"] == {"tuning": 6, "held_out": 4,
                                                                                  "unsplit": 0}
