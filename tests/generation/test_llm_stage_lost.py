"""A run the sweep takes back while its LLM-stage worker still works on it (the worker looked dead:
its beat was late) is not written to by that worker any more: no kit saved on it behind the
sweep's back, no stage or log over the next holder's. And a campaign run left queued with its kit
and no job, however it got there, is queued for materialisation by the sweep."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from generation.campaigns.services import campaign_create
from generation.campaigns.stages import llm_stage_execute
from generation.models import GenerationRun
from generation.services import llm_stage_claim, run_requeue_dead, stale_runs_sweep
from problems.models import TestKit
from tests.generation.campaign_fake import make_campaign_problems, start_campaign_llm

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def fake_llm(settings: Any) -> Any:
    fake, server = start_campaign_llm(latency_s=1.0)
    settings.OPENAI_BASE_URL = fake.url
    settings.OPENAI_API_KEY = "test-key"
    settings.HARDTESTS_LLM_MODEL = "fake-model"
    settings.HARDTESTS_LLM_MAX_RETRIES = 0
    yield fake
    server.shutdown()
    server.server_close()


def test_a_run_taken_back_mid_call_keeps_no_kit_from_its_old_worker(fake_llm: Any) -> None:
    campaign_create(name="lost", problem_ids=make_campaign_problems(1))
    [run_id] = llm_stage_claim(claim="llm:old", limit=1)
    outcome: list[str] = []
    old = threading.Thread(target=lambda: outcome.append(llm_stage_execute(run_id=run_id, claim="llm:old")))
    old.start()
    # the old worker's second call (the inputs) is in flight: the sweep takes the run back now
    deadline = time.monotonic() + 120
    while not any(kind == "validator" and status == 200 for _, kind, status, _ in fake_llm.log):
        assert time.monotonic() < deadline and old.is_alive(), "the validator call never answered"
        time.sleep(0.05)
    assert run_requeue_dead(run_id=run_id, reason="no heartbeat (test)", from_status=GenerationRun.Status.RUNNING,
                            job_id="llm:old")
    old.join(timeout=120)
    assert outcome == ["lost"]
    run = GenerationRun.objects.get(pk=run_id)
    # as the sweep left it: back on the LLM queue, no kit, its stage not overwritten by the old worker
    assert (run.status, run.job_id, run.kit_id, run.stage) == ("queued", "", None, "queued")
    assert not TestKit.objects.filter(problem_id=run.problem_id).exists()
    # the next holder takes it and saves the one kit
    assert llm_stage_claim(claim="llm:new", limit=1) == [run_id]
    assert llm_stage_execute(run_id=run_id, claim="llm:new") == "materialise"
    run = GenerationRun.objects.get(pk=run_id)
    assert run.status == "queued" and run.job_id.startswith("generation-run-") and run.kit_id is not None
    assert TestKit.objects.filter(problem_id=run.problem_id).count() == 1


def test_a_campaign_run_queued_with_its_kit_and_no_job_is_queued_for_materialisation(
        fake_llm: Any, settings: Any) -> None:
    campaign_create(name="stranded", problem_ids=make_campaign_problems(1))
    [run_id] = llm_stage_claim(claim="llm:a", limit=1)
    assert llm_stage_execute(run_id=run_id, claim="llm:a") == "materialise"
    # the state an old worker could leave before RunLost: queued, its kit saved, no job
    past = timezone.now() - timedelta(seconds=float(settings.HARDTESTS_RUN_STALE_S) + 5)
    GenerationRun.objects.filter(pk=run_id).update(job_id="", heartbeat_at=past)
    assert stale_runs_sweep() == 1
    run = GenerationRun.objects.get(pk=run_id)
    assert run.status == "queued" and run.job_id.startswith("generation-run-") and run.kit_id is not None
    assert "queued for materialisation by the sweep" in run.log
    assert stale_runs_sweep() == 0  # dealt with once


def test_a_late_failure_of_a_worker_whose_run_was_taken_back_fails_nothing() -> None:
    from generation.models import FailureReason
    from generation.recorder import RunRecorder
    from generation.services import run_fail_recorded

    campaign_create(name="late", problem_ids=make_campaign_problems(1))
    [run_id] = llm_stage_claim(claim="llm:old", limit=1)
    rec = RunRecorder(GenerationRun.objects.get(pk=run_id), buffered=True, claim="llm:old")
    assert run_requeue_dead(run_id=run_id, reason="no heartbeat (test)", from_status=GenerationRun.Status.RUNNING,
                            job_id="llm:old")
    # the old worker meets a failure of its own after the sweep: the run stays queued for the next
    run_fail_recorded(rec, run_id, FailureReason.INPUT_GENERATION_FAILED, "a late failure")
    run = GenerationRun.objects.get(pk=run_id)
    assert (run.status, run.job_id, run.error) == ("queued", "", "")
    assert "a late failure" not in run.log
    # taken again, it fails under its new claim as any run does
    assert llm_stage_claim(claim="llm:new", limit=1) == [run_id]
    rec = RunRecorder(GenerationRun.objects.get(pk=run_id), buffered=True, claim="llm:new")
    run_fail_recorded(rec, run_id, FailureReason.INPUT_GENERATION_FAILED, "a failure of its own")
    assert GenerationRun.objects.get(pk=run_id).status == "failed"
