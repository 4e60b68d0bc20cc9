"""A campaign survives SIGKILLed workers: real LLM-stage and sandbox workers, the real janitor (the one
dead-run sweeper), real Redis and sandbox."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest
from django.db.models import Count, Sum

from generation.campaigns.services import campaign_create
from generation.models import Campaign, GenerationRun, LLMCall
from problems.models import Problem, TestKit, TestSuite
from tests.conftest import REPO, process_group_stop, worker_env
from tests.generation.campaign_fake import CampaignLLM, make_campaign_problems, start_campaign_llm

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PROBLEMS = 14


@pytest.fixture
def campaign_llm() -> Iterator[CampaignLLM]:
    # held once 3 problems have their replies: the kill comes half through the LLM stage
    fake, server = start_campaign_llm(latency_s=0.4, refuse_share=0.2, hold_after_kits=3)
    try:
        yield fake
    finally:
        fake.release()
        server.shutdown()
        server.server_close()


@pytest.fixture
def workers(campaign_llm: CampaignLLM) -> Iterator[Callable[[], list[subprocess.Popen[bytes]]]]:
    env = dict(worker_env(), OPENAI_BASE_URL=campaign_llm.url, OPENAI_API_KEY="test", HARDTESTS_LLM_MODEL="fake-model",
               HARDTESTS_LLM_MAX_RETRIES="0", HARDTESTS_CAMPAIGN_BACKOFF_S="0.2", HARDTESTS_RUN_STALE_S="4",
               HARDTESTS_LLM_IN_FLIGHT="4", HARDTESTS_JANITOR_FAST_S="1")
    started: list[subprocess.Popen[bytes]] = []

    from core.queues import get_queue

    get_queue("sandbox").empty()  # jobs an earlier test of this process left queued are not this campaign's

    def start() -> list[subprocess.Popen[bytes]]:
        procs = [subprocess.Popen([sys.executable, str(REPO / "manage.py"), *args], env=env, cwd=REPO,
                                  start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for args in (["llm_worker", "--skip-checks"], ["janitor", "--skip-checks"],
                              ["rqworker", "--skip-checks", "--worker-class", "hardtests_web.ops.worker.CheckedWorker",
                               "sandbox"])]
        started.extend(procs)
        return procs

    yield start
    for proc in started:
        process_group_stop(proc)  # the test's own kill is SIGKILL; the ones left stop as serve's do


def wait_for(predicate: Callable[[], bool], timeout: float, what: str,
             state: Callable[[], str] = lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{state()}")
        time.sleep(0.1)


def runs_state(campaign: Campaign) -> str:
    """Where each of the campaign's runs stands, and its RQ job's status: what a timeout shows."""
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    from core.queues import get_queue, redis_connection

    campaign.refresh_from_db()
    lines = [f"campaign: {campaign.status} {campaign.pause_reason!r}"]
    now = time.time()
    for run in GenerationRun.objects.filter(campaign=campaign).select_related("problem").order_by("pk"):
        try:
            job = Job.fetch(run.job_id, connection=redis_connection()).get_status() if run.job_id and \
                not run.job_id.startswith("llm:") else "-"
        except NoSuchJobError:
            job = "no such job"
        beat = f"{now - run.heartbeat_at.timestamp():.0f} s ago" if run.heartbeat_at else "never"
        lines.append(f"{run.problem.pid}: {run.status}/{run.stage} job={run.job_id or '-'} ({job}) "
                     f"kit={run.kit_id} requeues={run.requeues} beat {beat} error={run.error[-200:]!r}")
    # whoever else could take the campaign's work: LLM-stage workers alive, the sandbox queue's workers
    connection = redis_connection()
    lines.append(f"LLM-stage workers alive: {sorted(k.decode() for k in connection.keys('hardtests:llm-worker:*'))}")
    from rq.worker import Worker

    queue = get_queue("sandbox")
    lines.append(f"sandbox queue: {queue.count} queued; workers "
                 f"{[(w.name, w.pid, w.get_state()) for w in Worker.all(queue=queue)]}")
    return "\n".join(lines)


@pytest.mark.heavy(seconds=70)
def test_sigkilled_workers_resume_every_problem_once_without_asking_again(
    campaign_llm: CampaignLLM, workers: Callable[[], list[subprocess.Popen[bytes]]],
) -> None:
    ids = make_campaign_problems(PROBLEMS)
    campaign = campaign_create(name="resume", problem_ids=ids).campaign
    runs = GenerationRun.objects.filter(campaign=campaign)
    first = workers()

    def some_kits_some_open() -> bool:
        # Held (the fake LLM answers nothing more once 3 problems have their replies): kits for
        # 3 to 7 problems (those in flight may still finish), the others claimed or queued.
        kits = runs.filter(kit__isnull=False).count()
        return kits >= 3 and runs.filter(kit__isnull=True).count() >= 3

    wait_for(some_kits_some_open, 120, "a campaign half through its LLM stage")
    for proc in first:
        process_group_stop(proc, graceful=False)  # SIGKILL the whole group, work horses included
    saved = {pid for pid, in runs.filter(kit__isnull=False).values_list("problem__pid")}
    asked_before_kill = len(campaign_llm.log)
    assert 3 <= len(saved) < PROBLEMS
    campaign_llm.release()  # the requests the killed workers left waiting are answered to no one

    workers()
    wait_for(lambda: Campaign.objects.get(pk=campaign.pk).status == Campaign.Status.FINISHED, 240,
             "the resumed campaign to finish", lambda: runs_state(campaign))

    # Every problem ended exactly once: one run, succeeded, one kit, one active suite.
    assert runs.count() == PROBLEMS
    assert GenerationRun.objects.filter(problem_id__in=ids).count() == PROBLEMS
    assert sorted(runs.values_list("status", flat=True)) == ["succeeded"] * PROBLEMS
    for problem in Problem.objects.filter(pk__in=ids):
        assert TestKit.objects.filter(problem=problem).count() == 1, problem.pid
        assert TestSuite.objects.filter(problem=problem, status=TestSuite.Status.ACTIVE).count() == 1, problem.pid
    assert runs.filter(requeues__gt=0).exists()  # the kill really left work to resume
    # No LLM call was made for a problem whose kit was saved before the kill.
    asked_after = {pid for pid, _, _, _ in campaign_llm.log[asked_before_kill:]}
    assert not (asked_after & saved), sorted(asked_after & saved)
    # Totals add up: the campaign counted every recorded call once.
    campaign.refresh_from_db()
    calls = LLMCall.objects.filter(run__campaign=campaign)
    sums = calls.aggregate(n=Count("id"), p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    assert (campaign.llm_calls, campaign.prompt_tokens, campaign.completion_tokens) == (
        sums["n"], sums["p"] or 0, sums["c"] or 0)
    # Successful calls recorded = the server's successful answers, minus those cut off by the kill.
    answered = sum(1 for _, _, status, _ in campaign_llm.log if status == 200)
    assert calls.filter(error="").count() <= answered <= calls.filter(error="").count() + 2 * 4
    assert campaign.problem_count == PROBLEMS
