"""Campaign selection accepts problems without solutions: they take the oracle-free mode and a
`generation`-queue job of their own instead of failing as no_valid_oracle."""

from __future__ import annotations

import pytest
from django.db import transaction

from core.queues import GENERATION_QUEUE, get_queue
from generation.campaigns.services import campaign_create
from generation.models import GenerationRun
from generation.pipeline import generation_run_execute
from tests.generation.conftest import FakeLLM, make_problem
from tests.oracle_free_kit import a7_reply, brute_reply, make_solutionless

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_a_campaign_gives_solutionless_problems_an_oracle_free_run(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_GENERATOR_TIME_S = settings.HARDTESTS_CHECKER_TIME_S = 5.0
    with_oracles = make_problem("test/with")
    bare = make_solutionless("of/bare")
    queue = get_queue(GENERATION_QUEUE)
    queue.empty()
    with transaction.atomic():
        start = campaign_create(name="of-campaign", problem_ids=[with_oracles.pk, bare.pk])
    assert start.added == 2
    runs = {r.problem_id: r for r in GenerationRun.objects.filter(campaign=start.campaign)}
    assert runs[with_oracles.pk].mode == "from_scratch" and runs[with_oracles.pk].job_id == ""
    free = runs[bare.pk]
    assert free.mode == "oracle_free" and free.job_id == f"generation-run-{free.pk}"
    assert free.job_id in queue.job_ids
    queue.empty()
    fake_llm.reply(a7_reply(), brute_reply())
    done = generation_run_execute(run_id=free.pk)
    assert done.status == "succeeded", done.error
    assert done.suite.origin == "oracle_free" and done.campaign_id == start.campaign.pk


def test_with_auto_off_the_campaign_keeps_from_scratch(settings) -> None:
    settings.HARDTESTS_ORACLE_FREE_AUTO = False
    bare = make_solutionless("of/bare2")
    start = campaign_create(name="of-campaign-2", problem_ids=[bare.pk])
    assert GenerationRun.objects.get(campaign=start.campaign).mode == "from_scratch"
