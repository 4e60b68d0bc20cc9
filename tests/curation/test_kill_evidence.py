"""A curation job's completions teach each suite its kill order: every test a completion failed
(mode all) is a row of evidence, the same program adds nothing twice, and the order, computed
again from it, runs first the test that fails the most of them. Switched off, nothing is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.models import Completion, CurationJob
from curation.services import curation_job_import, curation_job_verify_here
from problems.kill_order import NOT_A_KILL, kill_evidence_add, program_digest, suite_kill_matrix
from problems.models import KillEvidence
from tests.curation.helpers import build_world, known_completions, write_jsonl

pytestmark = pytest.mark.django_db


def _verified(tmp_path: Path) -> tuple[CurationJob, object]:
    world = build_world()
    known = known_completions(world.problem.pid, 24)
    job = curation_job_import(path=write_jsonl(tmp_path / "c.jsonl", [k.row for k in known]),
                              suite_origin="generated")
    job = curation_job_verify_here(job=job, chunk=7)
    assert job.status == CurationJob.Status.VERIFIED
    return job, world.generated


def test_the_tests_completions_fail_are_kept_and_teach_the_order(tmp_path: Path):
    job, suite = _verified(tmp_path)
    expected: set[tuple[str, int]] = set()
    for c in Completion.objects.filter(job=job).exclude(verdict__in=["AC", "CE"]):
        tests = c.results["by_origin"]["generated"]["tests"]
        expected |= {(program_digest(c.language, c.code), ordinal) for ordinal, _kind, verdict in tests
                     if verdict not in NOT_A_KILL}
    assert len({program for program, _ in expected}) >= 5, "the constructed set has wrong programs that run"
    kept = set(KillEvidence.objects.filter(suite=suite).values_list("program", "ordinal"))
    assert kept == expected
    assert set(KillEvidence.objects.filter(suite=suite).values_list("source", flat=True)) == {"curation"}
    # the suite's order and counts are those of all the evidence, the last chunk's included
    # (computed again at each chunk's end; the problem has no candidate)
    suite.refresh_from_db()
    counts: dict[int, int] = {}
    for _program, ordinal in expected:
        counts[ordinal] = counts.get(ordinal, 0) + 1
    assert suite.kill_counts == {str(o): n for o, n in sorted(counts.items())}
    assert suite_kill_matrix(suite, evidence=False) == {}
    top = max(counts.values())
    assert counts[suite.judge_order[0]] == top
    # the same program again adds nothing
    program, ordinal = next(iter(expected))
    c = next(c for c in Completion.objects.filter(job=job) if program_digest(c.language, c.code) == program)
    kill_evidence_add(suite_id=suite.pk, language=c.language, code=c.code, failing=[ordinal], source="curation")
    assert KillEvidence.objects.filter(suite=suite).count() == len(expected)


def test_switched_off_a_job_keeps_no_evidence(tmp_path: Path, settings):
    settings.HARDTESTS_KILL_ORDER_FROM_CURATION = False
    _job, suite = _verified(tmp_path)
    assert not KillEvidence.objects.exists()
    suite.refresh_from_db()
    assert suite.judge_order == [] and suite.kill_counts == {}
