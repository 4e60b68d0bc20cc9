"""One command runs a curation job end to end on the demo (our programs as pretend model answers,
labelled demo data) with the fake LLM judging: 200+ completions verified in the real sandbox,
selected under three rules, exported, and loaded back with `datasets.load_dataset`."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test.utils import override_settings

from curation.models import Completion, CurationJob, JudgeScore, Selection
from tests.conftest import DEMO_COUNTS


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.heavy(seconds=90)
def test_curate_demo_runs_end_to_end_and_the_datasets_load(tmp_path: Path, fake_judge):
    from datasets import load_dataset

    out = io.StringIO()
    with override_settings(**DEMO_COUNTS):
        call_command("curate", "demo", "--sync", "--out", str(tmp_path), "--judge", "demo-judge-x",
                     "--judge", "demo-judge-y", stdout=out)
    summary = json.loads(out.getvalue())
    job = CurationJob.objects.get(pk=summary["job"])
    assert job.demo and job.status == CurationJob.Status.VERIFIED
    assert summary["completions"] == job.total >= 200
    assert Completion.objects.filter(job=job, status=Completion.Status.DONE).count() == job.total
    # Gold-labelled demo programs: the right ones pass every test of the generated suite.
    right = Completion.objects.filter(job=job, gold="correct")
    assert right.count() >= 100 and all(c.pass_fraction == 1.0 for c in right)
    assert Completion.objects.filter(job=job, gold="incorrect", pass_fraction__lt=1.0).exists()
    assert JudgeScore.objects.filter(completion__job=job).count() == 2 * job.total
    labels = [s["rule"] for s in summary["selections"]]
    assert labels == ["tau>=0.6", "kind:hacking", "tau>=0.6 & judge:demo-judge-x>=7"]
    for item in summary["selections"]:
        selection = Selection.objects.get(pk=item["selection"])
        data = load_dataset(item["export"], split="train", cache_dir=str(tmp_path / "hf-cache"))
        assert data.num_rows == selection.kept == item["kept"] > 0
        assert set(data["demo_data"]) == {True} and set(data["rule"]) == {selection.label}
        assert "Demo data" in (Path(item["export"]) / "README.md").read_text()
        if selection.label.startswith("tau>=0.6 &"):
            assert all(score is not None and score >= 7 for score in data["judge_score"])
        assert all(f >= 0.6 for f in data["pass_fraction"]) or selection.label == "kind:hacking"
