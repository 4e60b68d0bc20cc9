"""An evaluation whose job is gone (its worker was killed, Redis restarted) no longer blocks new
ones for hours: the page says so and lets a maintainer run a new one, which records the old as
failed."""

from __future__ import annotations

import pytest
from django.test import Client

from review.models import EvaluationReport

pytestmark = pytest.mark.django_db


def test_a_report_whose_job_is_gone_does_not_block_a_new_one(maintainer_client: Client) -> None:
    lost = EvaluationReport.objects.create(status=EvaluationReport.Status.JUDGING, job_id="no-such-job",
                                           judging_total=42)
    html = maintainer_client.get("/evaluation/").content.decode()
    assert 'id="evaluation-lost"' in html and f"Evaluation #{lost.pk} will not finish" in html
    button = html.split("Run a new evaluation</button>", 1)[0].rsplit("<button", 1)[1]
    assert "disabled" not in button
    assert maintainer_client.post("/evaluation/run/").status_code == 302
    lost.refresh_from_db()
    assert lost.status == EvaluationReport.Status.FAILED and "its job is gone" in lost.error
    assert EvaluationReport.objects.exclude(pk=lost.pk).filter(status=EvaluationReport.Status.QUEUED).count() == 1


def test_a_report_whose_job_is_queued_still_blocks(maintainer_client: Client) -> None:
    import django_rq

    job = django_rq.get_queue("default").enqueue("builtins.len", "x")
    try:
        EvaluationReport.objects.create(status=EvaluationReport.Status.QUEUED, job_id=job.id)
        html = maintainer_client.get("/evaluation/").content.decode()
        assert 'id="evaluation-lost"' not in html
        assert maintainer_client.post("/evaluation/run/").status_code == 302
        assert EvaluationReport.objects.count() == 1
    finally:
        job.delete()
