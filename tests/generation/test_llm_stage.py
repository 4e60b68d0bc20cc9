"""The LLM stage's own costs: calls held to the limit while more runs compute, few writes a run."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from generation.campaigns.llmworker import LLMStageWorker
from generation.campaigns.services import campaign_create
from generation.campaigns.stages import llm_stage_execute
from generation.models import GenerationRun
from generation.services import llm_stage_claim
from tests.generation.campaign_fake import make_campaign_problems, start_campaign_llm


def _fake_llm(settings: Any, **options: Any) -> tuple[Any, Any]:
    fake, server = start_campaign_llm(**options)
    settings.OPENAI_BASE_URL = fake.url
    settings.OPENAI_API_KEY = "test-key"
    settings.HARDTESTS_LLM_MODEL = "fake-model"
    settings.HARDTESTS_LLM_MAX_RETRIES = 0
    return fake, server


@pytest.mark.django_db
def test_an_llm_stage_run_keeps_every_log_line_in_few_writes(settings: Any, django_assert_max_num_queries: Any) -> None:
    fake, server = _fake_llm(settings)
    try:
        campaign = campaign_create(name="writes", problem_ids=make_campaign_problems(1)).campaign
        [run_id] = llm_stage_claim(claim="llm:test", limit=5)
        # One UPDATE a log line made it about 50 statements a run.
        with django_assert_max_num_queries(36):
            assert llm_stage_execute(run_id=run_id, claim="llm:test") == "materialise"
    finally:
        server.shutdown()
        server.server_close()
    run = GenerationRun.objects.get(pk=run_id)
    assert run.campaign_id == campaign.pk and run.kit_id is not None and run.status == "queued"
    lines = [line.split(" ", 1)[1] for line in run.log.splitlines()]
    for expected in ("stage: LLM: validator and judge", "trying the proposed validator on 1 sample(s) and 0 regression input(s)",
                     "output judging function: not needed", "stage: LLM: inputs and generators",
                     "queued for materialisation on the sandbox queue"):
        assert expected in lines, run.log
    assert any(line.startswith("kit v1 saved") for line in lines), run.log
    assert set(run.stage_seconds) >= {"queued", "llm_validator", "llm_inputs"}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_llm_worker_carries_more_runs_than_calls_in_flight(settings: Any) -> None:
    fake, server = _fake_llm(settings, latency_s=0.4)
    try:
        campaign = campaign_create(name="threads", problem_ids=make_campaign_problems(6)).campaign
        worker = LLMStageWorker(in_flight=2, threads=4, poll_s=0.05)
        done: dict[str, int] = {}
        thread = threading.Thread(target=lambda: done.update(worker.run(burst=True)))
        thread.start()
        carried = 0
        deadline = time.monotonic() + 120
        while thread.is_alive() and time.monotonic() < deadline:
            carried = max(carried, GenerationRun.objects.filter(status="running", job_id=worker.claim).count())
            time.sleep(0.02)
        worker.stop.set()
        thread.join(timeout=60)
    finally:
        server.shutdown()
        server.server_close()
    assert done.get("materialise") == 6, done
    assert GenerationRun.objects.filter(campaign=campaign, kit__isnull=False).count() == 6
    # The calls are held to --in-flight; the threads beyond it carried other runs meanwhile.
    assert fake.peak_in_flight == 2
    assert carried >= 3
