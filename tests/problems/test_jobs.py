from __future__ import annotations

import pytest
from django.utils import timezone

from core.queues import get_queue
from problems.jobs import SANDBOX_QUEUE, judging_requeue_orphans, judging_sweep_dead
from problems.models import JudgingTask, TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.factories import ProblemFactory, SolutionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def task_factory():
    problem = ProblemFactory()
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED)
    suite_add_tests(suite=suite, tests=[NewTest(input="1 2\n", output="3\n", kind="direct")])
    suite_activate(suite=suite)
    solution = SolutionFactory(problem=problem)
    get_queue(SANDBOX_QUEUE).empty()

    def make(**fields):
        return JudgingTask.objects.create(solution=solution, suite=suite, **fields)

    return make


def test_unfinished_tasks_are_queued_again_on_a_fresh_redis(task_factory):
    queued = task_factory(status=JudgingTask.Status.QUEUED, job_id="lost-1")
    running = task_factory(status=JudgingTask.Status.RUNNING, job_id="lost-2")
    done = task_factory(status=JudgingTask.Status.DONE)
    assert judging_requeue_orphans() == 2
    queue = get_queue(SANDBOX_QUEUE)
    assert len(queue) == 2
    for task in (queued, running):
        task.refresh_from_db()
        assert task.status == JudgingTask.Status.QUEUED and task.job_id in queue.job_ids
    done.refresh_from_db()
    assert done.status == JudgingTask.Status.DONE


def test_a_task_whose_job_vanished_is_recorded_as_failed(task_factory):
    dead = task_factory(status=JudgingTask.Status.RUNNING, job_id="no-such-job")
    JudgingTask.objects.filter(pk=dead.pk).update(created_at=timezone.now() - timezone.timedelta(minutes=10))
    fresh = task_factory(status=JudgingTask.Status.RUNNING, job_id="no-such-job-either")
    assert judging_sweep_dead() == 1
    dead.refresh_from_db()
    fresh.refresh_from_db()
    assert dead.status == JudgingTask.Status.FAILED and "worker died" in dead.error
    assert fresh.status == JudgingTask.Status.RUNNING
