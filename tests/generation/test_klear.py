"""The Klear-CodeTest record goes through the same materialisation as our own kits.

Its LLM-written `generate_test_inputs()` (seeded, so it draws the same inputs as when Klear
ran it) is the kit's batch generator, as the Klear importer stores it; our oracles' outputs
must equal the published outputs wherever our inputs and theirs coincide.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generation.materialise import materialise_kit
from problems.blobs import blob_text
from problems.models import Problem, TestSuite
from sandbox import compare_default
from tests.klear import keep_cheapest_gold

REPO = Path(__file__).resolve().parents[2]
KLEAR = REPO.parent / "shared" / "fixtures" / "klear"
RECORD = KLEAR / "sample_with_generated_testcases.jsonl"

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow,
    pytest.mark.skipif(not RECORD.exists(), reason=f"the Klear-CodeTest fixture is not at {KLEAR} (../shared is absent)"),
]


def test_the_klear_record_materialises_to_its_published_outputs(settings) -> None:
    from problems.importers.runner import dataset_import

    settings.HARDTESTS_MAX_ORACLES = 3  # 24 gold solutions; two agreeing are all we need
    dataset_import(format_name="klear", paths=[str(RECORD)])
    problem = Problem.objects.get(source="klear", pid="code_contest_8")
    keep_cheapest_gold(problem, RECORD, 3)  # any gold solution is a witness; these cost least
    kit = problem.kits.get()
    assert kit.batch_generator and kit.validator is None
    result = materialise_kit(kit=problem.kits.get())
    assert result.counts["regular"]["generated"] == 100
    assert {t.generator for t in result.tests} == {"generate_test_inputs"}

    published = problem.suites.get(origin=TestSuite.Origin.IMPORTED, status=TestSuite.Status.ACTIVE)
    theirs: dict[str, str] = {}
    for test in published.tests.all():
        theirs.setdefault(blob_text(test.input_sha256), blob_text(test.output_sha256))
    shared = [t for t in result.tests if t.input in theirs]
    # Same seed, same generator: every distinct input they published is one of ours.
    assert len(shared) == len(theirs) == len(result.tests)
    mismatched = [t.input[:40] for t in shared if not compare_default(theirs[t.input], t.output)]
    assert not mismatched
