"""Every failure reason is documented (docs/generation.md: cause and what the run does next) and counted
on the home page's outcome chart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generation.models import FailureReason, GenerationRun
from tests.generation.conftest import make_problem

DOC = Path(__file__).resolve().parents[2] / "docs" / "generation.md"
README = DOC.parents[1] / "README.md"


def _rows() -> dict[str, tuple[str, str]]:
    table = DOC.read_text().split("## Failure reasons", 1)[1]
    return {reason: (cause, then) for reason, cause, then in
            re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \| ([^|]+) \|$", table, re.MULTILINE)}


def test_the_docs_table_lists_every_failure_reason_with_its_cause_and_what_happens_next() -> None:
    rows = _rows()
    for reason in FailureReason.values:
        assert reason in rows, reason
        cause, then = rows[reason]
        # "fails" alone is not what happens next: the row says what the run does and what to do about it
        assert len(cause) > 20 and len(then) > 40, reason


def test_the_docs_table_lists_no_reason_the_code_does_not_have() -> None:
    assert set(_rows()) == set(FailureReason.values)


def test_the_readmes_generation_runs_section_names_every_reason_with_what_happens_next() -> None:
    section = README.read_text().split("## Generation runs", 1)[1].split("\n## ", 1)[0]
    named = {reason for cell, then in re.findall(r"^\| ([^|]+) \| ([^|]+) \|$", section, re.MULTILINE)
             if len(then.strip()) > 10 for reason in re.findall(r"`([a-z_]+)`", cell)}
    assert named == set(FailureReason.values)


def test_every_reason_the_code_base_uses_is_a_documented_one() -> None:
    root = DOC.parents[1]
    used = {name for folder in ("generation", "problems", "api", "review", "curation", "core")
            for path in (root / folder).rglob("*.py") if "migrations" not in path.parts
            for name in re.findall(r"FailureReason\.([A-Z_]+)", path.read_text())}
    assert used and {getattr(FailureReason, name).value for name in used} <= set(_rows())


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
