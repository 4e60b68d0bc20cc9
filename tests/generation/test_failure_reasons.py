"""Every failure reason is documented (docs/generation.md: cause and what the run does next) and counted
on the home page's outcome chart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generation.models import FailureReason, GenerationRun
from tests.generation.conftest import make_problem

DOC = Path(__file__).resolve().parents[2] / "docs" / "generation.md"


def test_the_docs_table_lists_every_failure_reason_with_its_cause_and_what_happens_next() -> None:
    rows = {reason: (cause, then) for reason, cause, then in
            re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \| ([^|]+) \|$", DOC.read_text(), re.MULTILINE)}
    for reason in FailureReason.values:
        assert reason in rows, reason
        cause, then = rows[reason]
        assert len(cause) > 20 and len(then) > 4, reason


@pytest.mark.django_db
def test_the_home_chart_counts_runs_by_the_new_reasons(client) -> None:
    from tests.factories import UserFactory

    problem = make_problem()
    for reason, n in ((FailureReason.JUDGE_INVALID, 3), (FailureReason.VALIDATOR_ERROR, 2)):
        for _ in range(n):
            GenerationRun.objects.create(problem=problem, mode=GenerationRun.Mode.FROM_KIT,
                                         status=GenerationRun.Status.FAILED, failure_reason=reason)
    client.force_login(UserFactory())
    html = client.get("/").content.decode()
    chart = html[html.index("Generation outcomes"):]
    assert re.search(r"Judge invalid.{0,400}?>3<", chart, re.DOTALL)
    assert re.search(r"Validator error.{0,400}?>2<", chart, re.DOTALL)
