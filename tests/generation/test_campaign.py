"""Campaigns in-process: one open run per problem, the two stages, backoff on 429, cost cap, the sweep."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from generation.campaigns.selectors import campaign_summary
from generation.campaigns.services import campaign_cancel, campaign_create, campaign_pause, campaign_resume
from generation.campaigns.stages import llm_stage_execute, materialise_stage
from generation.models import Campaign, FailureReason, GenerationRun, LLMCall
from generation.services import generation_run_start, llm_stage_claim, stale_runs_sweep
from problems.models import Problem, TestSuite
from tests.generation.campaign_fake import CampaignLLM, make_campaign_problems, start_campaign_llm

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign_llm(settings: Any) -> Iterator[CampaignLLM]:
    fake, server = start_campaign_llm()
    settings.OPENAI_BASE_URL = fake.url
    settings.OPENAI_API_KEY = "test-key"
    settings.HARDTESTS_LLM_MODEL = "fake-model"
    settings.HARDTESTS_LLM_MAX_RETRIES = 0
    settings.HARDTESTS_LLM_PRICES = ["fake-model=1000:2000"]
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def _claim_all(limit: int = 50) -> list[int]:
    return llm_stage_claim(claim="llm:test", limit=limit)


def test_a_problem_has_at_most_one_open_run() -> None:
    problem = Problem.objects.get(pk=make_campaign_problems(1)[0])
    first = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False)
    again = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False)
    assert first.created and not again.created and again.pk == first.pk
    assert GenerationRun.objects.filter(problem=problem).count() == 1
    # The database itself refuses a second open run, whoever inserts it.
    with pytest.raises(IntegrityError), transaction.atomic():
        GenerationRun.objects.create(problem=problem, mode=GenerationRun.Mode.FROM_KIT, status="running")
    GenerationRun.objects.filter(pk=first.pk).update(status=GenerationRun.Status.FAILED)
    assert generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False).created


def test_campaign_create_is_idempotent_and_skips_open_problems() -> None:
    ids = make_campaign_problems(5)
    busy = generation_run_start(problem=Problem.objects.get(pk=ids[0]), mode="from_scratch", enqueue=False)
    start = campaign_create(name="c1", problem_ids=ids)
    assert (start.created, start.added, start.already_in) == (True, 4, 0)
    assert [run for _, run in start.open_elsewhere] == [busy.pk]
    again = campaign_create(name="c1", problem_ids=ids)
    assert (again.created, again.added, again.already_in) == (False, 0, 4)
    assert GenerationRun.objects.filter(campaign=start.campaign).count() == 4
    assert GenerationRun.objects.filter(problem_id__in=ids, status__in=("queued", "running")).count() == 5


def test_two_stages_make_suites_and_count_tokens_and_cost(campaign_llm: CampaignLLM, settings: Any) -> None:
    ids = make_campaign_problems(2)
    campaign = campaign_create(name="c2", problem_ids=ids).campaign
    claimed = _claim_all()
    assert sorted(claimed) == sorted(campaign.runs.values_list("pk", flat=True))
    assert _claim_all() == []  # nothing is handed out twice
    with transaction.atomic():  # on_commit would enqueue on Redis; the job is run by hand below
        outcomes = [llm_stage_execute(run_id=pk, claim="llm:test") for pk in claimed]
    assert outcomes == ["materialise", "materialise"]
    runs = list(GenerationRun.objects.filter(pk__in=claimed))
    assert all(r.status == "queued" and r.kit_id and r.job_id.startswith("generation-run-") for r in runs)
    assert len(campaign_llm.log) == 4
    for run in runs:
        assert materialise_stage(run_id=run.pk) == GenerationRun.Status.SUCCEEDED
    assert len(campaign_llm.log) == 4  # materialisation never asks the LLM
    assert TestSuite.objects.filter(problem_id__in=ids, status=TestSuite.Status.ACTIVE).count() == 2
    campaign.refresh_from_db()
    calls = LLMCall.objects.filter(run__campaign=campaign)
    assert campaign.llm_calls == calls.count() == 4
    assert campaign.prompt_tokens == sum(c.prompt_tokens for c in calls) == 4000
    completion = sum(c.completion_tokens for c in calls)
    assert campaign.completion_tokens == completion
    assert campaign.cost_usd == pytest.approx((1000 * 4000 + 2000 * completion) / 1e6)
    assert campaign.status == Campaign.Status.FINISHED
    summary = campaign_summary(campaign=campaign)
    assert summary["counts"]["succeeded"] == 2 and summary["per_hour"] > 0


def test_429_requeues_with_backoff_then_fails_after_the_total_wait(campaign_llm: CampaignLLM, settings: Any) -> None:
    campaign_llm.refuse_share = 1.0
    settings.HARDTESTS_CAMPAIGN_BACKOFF_S = 30
    settings.HARDTESTS_LLM_UNAVAILABLE_AFTER_S = 600
    ids = make_campaign_problems(1)
    campaign_create(name="c3", problem_ids=ids)
    (run_id,) = _claim_all()
    assert llm_stage_execute(run_id=run_id, claim="llm:test") == "backoff"
    run = GenerationRun.objects.get(pk=run_id)
    assert run.status == "queued" and run.failure_reason == "" and run.requeues == 1
    assert run.not_before > timezone.now() + timezone.timedelta(seconds=10)
    assert _claim_all() == []  # held back until not_before
    # Waited long enough in total: the next refusal fails it as llm_unavailable.
    GenerationRun.objects.filter(pk=run_id).update(not_before=None, llm_wait_since=timezone.now()
                                                   - timezone.timedelta(seconds=601))
    assert _claim_all() == [run_id]
    assert llm_stage_execute(run_id=run_id, claim="llm:test") == "failed"
    run.refresh_from_db()
    assert (run.status, run.failure_reason) == ("failed", FailureReason.LLM_UNAVAILABLE)


def test_cost_cap_pauses_and_resume_goes_on(campaign_llm: CampaignLLM) -> None:
    ids = make_campaign_problems(3)
    campaign = campaign_create(name="c4", problem_ids=ids, cost_cap_usd=Decimal("0.5")).campaign
    first = _claim_all(limit=1)
    with transaction.atomic():
        llm_stage_execute(run_id=first[0], claim="llm:test")
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.PAUSED and campaign.pause_reason == "cost cap reached"
    assert _claim_all() == []  # a paused campaign hands out no LLM work
    campaign_resume(campaign=campaign, cost_cap_usd=Decimal("1000"))
    assert len(_claim_all()) == 2


def test_pause_parks_materialisation_and_cancel_ends_queued_runs(campaign_llm: CampaignLLM) -> None:
    ids = make_campaign_problems(2)
    campaign = campaign_create(name="c5", problem_ids=ids).campaign
    claimed = _claim_all(limit=1)
    with transaction.atomic():
        llm_stage_execute(run_id=claimed[0], claim="llm:test")
    campaign_pause(campaign=campaign)
    assert materialise_stage(run_id=claimed[0]) == "parked"
    assert GenerationRun.objects.get(pk=claimed[0]).job_id == ""
    assert campaign_cancel(campaign=campaign) == 2
    assert set(campaign.runs.values_list("status", flat=True)) == {"cancelled"}


def test_sweep_requeues_a_dead_campaign_run_and_keeps_its_kit(campaign_llm: CampaignLLM, settings: Any) -> None:
    settings.HARDTESTS_RUN_STALE_S = 60
    ids = make_campaign_problems(2)
    campaign = campaign_create(name="c6", problem_ids=ids).campaign
    claimed = _claim_all()
    with transaction.atomic():
        llm_stage_execute(run_id=claimed[0], claim="llm:test")
    old = timezone.now() - timezone.timedelta(seconds=120)
    # One run died in the LLM stage (no kit), the other while materialising (kit saved).
    GenerationRun.objects.filter(pk=claimed[1]).update(heartbeat_at=old)
    GenerationRun.objects.filter(pk=claimed[0]).update(status="running", job_id="generation-run-x", heartbeat_at=old)
    with transaction.atomic():
        assert stale_runs_sweep() == 2
    llm_run, mat_run = GenerationRun.objects.get(pk=claimed[1]), GenerationRun.objects.get(pk=claimed[0])
    assert (llm_run.status, llm_run.job_id, llm_run.kit_id, llm_run.requeues) == ("queued", "", None, 1)
    assert mat_run.status == "queued" and mat_run.kit_id and mat_run.job_id.startswith("generation-run-")
    assert _claim_all() == [llm_run.pk]  # only the run without a kit goes back to the LLM
    assert campaign.runs.count() == 2


def test_campaign_page_shows_reasons_as_shares_with_examples_and_only_maintainers_act(client: Any) -> None:
    from django.urls import reverse

    from tests.factories import annotator, maintainer

    ids = make_campaign_problems(4)
    campaign = campaign_create(name="page", problem_ids=ids).campaign
    runs = list(campaign.runs.select_related("problem").order_by("pk"))
    now = timezone.now()
    GenerationRun.objects.filter(pk=runs[0].pk).update(status="succeeded", finished_at=now, started_at=now)
    GenerationRun.objects.filter(pk__in=[runs[1].pk, runs[2].pk]).update(
        status="failed", failure_reason=FailureReason.NO_VALID_ORACLE, finished_at=now, started_at=now)
    url = reverse("generation:campaign_detail", args=[campaign.pk])
    client.force_login(annotator())
    page = client.get(url).content.decode()
    assert "66.67%" in page  # two of three ended runs failed for want of a valid oracle
    assert reverse("generation:run_detail", args=[runs[1].pk]) in page
    assert runs[1].problem.pid in page
    assert "page" in client.get(reverse("home")).content.decode()  # the home page links it
    pause = reverse("generation:campaign_action", args=[campaign.pk, "pause"])
    assert client.post(pause).status_code == 403
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.RUNNING
    client.logout()
    assert client.post(pause).status_code in (302, 403)
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.RUNNING
    client.force_login(maintainer())
    client.post(pause)
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.PAUSED


def _queued_with_jobs(count: int, name: str) -> Campaign:
    from generation.services import enqueue_materialise

    campaign = campaign_create(name=name, problem_ids=make_campaign_problems(count, source=name)).campaign
    items = [(pk, f"{name}-{pk}") for pk in campaign.runs.values_list("pk", flat=True)]
    for pk, job_id in items:
        GenerationRun.objects.filter(pk=pk).update(job_id=job_id, heartbeat_at=timezone.now()
                                                   - timezone.timedelta(hours=1))
    enqueue_materialise(items)
    return campaign


@pytest.mark.parametrize("queued", [10, 300])
def test_scheduling_cost_does_not_grow_with_the_queue(queued: int, django_assert_max_num_queries: Any) -> None:
    """Claiming LLM work and sweeping take a fixed number of queries, and a sweep checks at most a batch."""
    campaign_create(name=f"llm{queued}", problem_ids=make_campaign_problems(queued, source=f"llm{queued}"))
    with django_assert_max_num_queries(3):
        assert len(llm_stage_claim(claim="llm:test", limit=1)) == 1
    campaign = _queued_with_jobs(queued, f"mat{queued}")
    # every run was claimed above or waits with a live RQ job: the sweep fails none of them
    GenerationRun.objects.filter(job_id="llm:test").update(status="queued", job_id="")
    # running runs, queued runs (two), their beats, runs left with a kit and no job
    with django_assert_max_num_queries(5):
        assert stale_runs_sweep(batch=50) == 0
    checked = campaign.runs.filter(heartbeat_at__gt=timezone.now() - timezone.timedelta(minutes=1)).count()
    assert checked == min(50, queued)


def test_generate_tests_campaign_command_twice_with_missing_spends_nothing_more() -> None:
    import json
    from io import StringIO

    from django.core.management import call_command

    make_campaign_problems(3, source="cmd")
    out = StringIO()
    call_command("generate_tests", "--campaign", "cmd", "--source", "cmd", "--missing", "--cost-cap", "5",
                 stdout=out)
    first = json.loads(out.getvalue())
    assert (first["created"], first["added"], first["problems"]) == (True, 3, 3)
    out = StringIO()
    call_command("generate_tests", "--campaign", "cmd", "--source", "cmd", "--missing", stdout=out)
    again = json.loads(out.getvalue())
    assert (again["created"], again["added"], again["already_in_campaign"]) == (False, 0, 3)
    assert GenerationRun.objects.filter(problem__source="cmd").count() == 3
    out = StringIO()
    call_command("generate_tests", "--campaign", "cmd", "--pause", stdout=out)
    status = json.loads(out.getvalue())
    assert status["changed"] is True and status["summary"]["status"] == "paused"
    assert status["summary"]["counts"]["queued"] == 3 and status["summary"]["cost_cap_usd"] == 5.0
