"""Fast suites and kill order on held-out programs (review/evaluation/fast_suites.py)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from problems.kill_order import TestFacts
from review.evaluation.fast_suites import Program, SuiteRecord, fast_suite_report
from tests.factories import annotator

TESTS = [TestFacts(0, "hacking", 10), TestFacts(1, "regular", 10), TestFacts(2, "direct", 10),
         TestFacts(3, "direct", 10)]


def _record() -> SuiteRecord:
    times = {o: 5 for o in range(4)}
    return SuiteRecord(1, "t:p", TESTS, [
        Program(100, True, frozenset(), times=times),
        Program(1, False, frozenset({3}), times=times),
        Program(2, False, frozenset({3}), times=times),
        Program(3, False, frozenset({2, 3}), times=times),
        Program(4, False, frozenset({1}), times=times),
        Program(5, False, frozenset(), compiled=False),
    ])


def test_each_wrong_program_is_judged_against_an_order_built_without_it():
    r = fast_suite_report([_record()])
    # held out: 1 and 2 meet test 3 first (the others fail it); 3 meets 3 first (1 and 2 fail it);
    # 4 fails only test 1, which no other program fails: last but one of its order [3, 2, 0, 1]
    assert (r["median_tests_to_failure_kind"], r["median_tests_to_failure_kill"]) == (3.5, 1)
    assert r["median_ratio"] == 3.5 and r["wrong_programs"] == 4
    assert r["full"] == {"precision": 1.0, "recall": 1.0} and r["fast"] == {"precision": 1.0, "recall": 1.0}
    # fail-fast cost of the six programs: kind order 4+4+4+3+2+0; fast subset in kill order
    # (the cover plus the two largest: tests 0 and 1) 4 (correct: 3 of its own subset {3, 1, 0}) ...
    assert r["tests_run_full_kind"] == 17 and r["tests_run_fast_kill"] < r["tests_run_full_kind"]
    assert r["cpu_ms_full_kind"] == 5 * 17
    assert r["fast_tests"] == 3 and r["full_tests"] == 4
    # one change at a time: each arm's ratio is the baseline (full suite, kind order) over that arm
    arms = {a["arm"]: a for a in r["arms"]}
    assert list(arms) == ["full_kind", "full_kill", "fast_kind", "fast_kill"]
    assert arms["full_kind"]["tests_run"] == 17 and arms["full_kind"]["fewer_tests"] == 1.0
    for arm in ("full_kill", "fast_kind", "fast_kill"):
        assert arms[arm]["fewer_tests"] == 17 / arms[arm]["tests_run"]
    assert arms["fast_kill"]["tests_run"] == r["tests_run_fast_kill"]
    assert arms["full_kill"]["tests_run"] < 17  # the order alone saves tests: wrong programs stop sooner
    keep = {d["keep"]: d for d in r["random_drop"]}
    assert keep[1.0]["precision"] == 1.0 and keep[0.2]["precision"] < 1.0


def test_a_suite_without_known_wrong_programs_is_left_out():
    record = SuiteRecord(2, "t:q", TESTS, [Program(100, True, frozenset())])
    assert fast_suite_report([record])["suites"] == 0


@pytest.mark.django_db
def test_the_evaluation_page_reports_the_fast_subset_stored_with_the_report():
    from review.evaluation.services import evaluation_report_compute, evaluation_select
    from review.models import EvaluationReport
    from tests.problems.test_kill_order import _ab_suite, _known

    suite = _ab_suite()
    _known(suite)
    client = Client()
    client.force_login(annotator())
    html = client.get("/evaluation/").content.decode()
    # computed with a report (on write), never by the page: none yet
    assert "Measured with each evaluation" in html[html.index('id="fast-suites"'):]
    report = evaluation_report_compute(selection=evaluation_select(pids=[suite.problem.pid]))
    EvaluationReport.objects.create(status=EvaluationReport.Status.DONE, report=report, params={})
    html = client.get("/evaluation/").content.decode()
    section = html[html.index('id="fast-suites"'):]
    assert "Fast suites and kill order" in section and "random, keeping 40%" in section
    assert '<td class="num fast-size">4</td>' in section
    assert "1 suite, 4 programs" in section
    # one change at a time: the baseline, order alone, subset alone, both
    arms = re.findall(r'<tr data-arm="(\w+)"><th scope="row">([^<]*)</th>', section)
    assert [a for a, _ in arms] == ["full_kind", "full_kill", "fast_kind", "fast_kill"]
    assert "(order alone)" in arms[1][1] and "(subset alone)" in arms[2][1] and "(both)" in arms[3][1]
