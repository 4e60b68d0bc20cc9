"""Suite compare: which solutions' verdicts changed between two suite versions."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from problems.services import verdict_record
from tests.web.conftest import World, htmx

pytestmark = [pytest.mark.django_db]


def rows_by_solution(html: str) -> dict[str, str]:
    body = html.split("Verdicts per solution", 1)[1]
    return {re.search(r"<td>([\w.]+) ", row).group(1): row
            for row in re.findall(r"<tr[^>]*>\s*<td>.*?</tr>", body, flags=re.S)}


def test_suite_compare_marks_exactly_the_solutions_whose_verdict_changed(user_client: Client, world: World) -> None:
    # good.py and the oracle pass both versions; bad.py passed the old suite and fails the new one.
    for solution in (world.good, world.oracle):
        verdict_record(solution=solution, suite=world.old_suite, verdict="AC", passed=5, total=5, complete=True,
                       results=[])
    url = f"/problems/{world.problem.pk}/suite/compare/?a={world.old_suite.pk}&b={world.suite.pk}"
    html = user_client.get(url, **htmx("suite-diff")).content.decode()
    rows = rows_by_solution(html)
    assert set(rows) == {"good.py", "bad.py", world.oracle.name}
    assert "<strong>changed</strong>" in rows["bad.py"]
    assert "AC" in rows["bad.py"].split("</td>")[2] and "WA" in rows["bad.py"].split("</td>")[3]
    assert "<strong>changed</strong>" not in rows["good.py"]
    assert "<strong>changed</strong>" not in rows[world.oracle.name]
    # changed rows come first
    assert list(rows)[0] == "bad.py"


def test_a_verdict_that_flips_on_an_unchanged_test_is_marked_timing_sensitive(user_client: Client, world: World) -> None:
    old = {t.input_sha256: t.ordinal for t in world.old_suite.tests.all()}
    new = list(world.suite.tests.order_by("ordinal"))
    shared = next(t for t in new if t.input_sha256 in old)  # same input and output in both versions
    verdict_record(solution=world.good, suite=world.old_suite, verdict="AC", passed=5, total=5, complete=True,
                   results=[{"ordinal": o, "verdict": "AC", "time_ms": 900} for o in old.values()])
    verdict_record(solution=world.good, suite=world.suite, verdict="TLE", passed=len(new) - 1, total=len(new),
                   complete=True, results=[{"ordinal": t.ordinal, "verdict": "TLE" if t.pk == shared.pk else "AC",
                                            "time_ms": 1000} for t in new])
    url = f"/problems/{world.problem.pk}/suite/compare/?a={world.old_suite.pk}&b={world.suite.pk}"
    rows = rows_by_solution(user_client.get(url, **htmx("suite-diff")).content.decode())
    assert "timing-sensitive" in rows["good.py"]
    assert f"test {shared.ordinal + 1}: AC → TLE" in rows["good.py"]
    # bad.py changed because the suite changed (no per-test flip on a shared test): not flagged.
    assert "timing-sensitive" not in rows["bad.py"]
