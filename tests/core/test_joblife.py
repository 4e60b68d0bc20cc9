"""Every long job kind passes the same lifecycle tests (core.joblife): claim, heartbeat, a dead
worker swept (by the real reaper and the real janitor's sweep, on the real Redis), cancel, fail
with a reason. Parametrised over every declared kind; a model that looks like a long job (a
status, an error and a finished_at) and is not declared fails the first test."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.apps import apps
from django.db import models
from django.utils import timezone
from rq.job import Job, JobStatus
from rq.worker import Worker
from rq.worker_registration import REDIS_WORKER_KEYS, WORKERS_BY_QUEUE_KEY

from core import joblife
from core.queues import WORKER_HEALTH_HASH, get_queue, redis_connection
from hardtests_web.ops.janitor import dead_jobs
from hardtests_web.ops.reaper import dead_workers_sweep

pytestmark = pytest.mark.django_db

QUEUE = "sandbox"
KINDS = {kind.name: kind for kind in joblife.kinds()}


def _judging_task() -> models.Model:
    from problems.models import JudgingTask, TestSuite
    from problems.services import NewTest, suite_add_tests, suite_create
    from tests.factories import ProblemFactory, SolutionFactory

    problem = ProblemFactory()
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED)
    suite_add_tests(suite=suite, tests=[NewTest(input="1 2\n", output="3\n", kind="direct")])
    return JudgingTask.objects.create(solution=SolutionFactory(problem=problem), suite=suite)


def _study_item() -> Any:
    from tests.factories import annotator
    from tests.review.test_studies_support import LOOSE_VALIDATOR, make_problem, make_study

    problem = make_problem(validator=LOOSE_VALIDATOR)
    return make_study(problems=[problem], annotators=[annotator("a")], overlap=1).items.get()


def _validator_trial() -> models.Model:
    from review.models import ValidatorTrial

    item = _study_item()
    return ValidatorTrial.objects.create(item=item, validator=item.validator, input="1 2\n")


def _suite_addition() -> models.Model:
    from review.models import SuiteAddition

    return SuiteAddition.objects.create(item=_study_item(), input="1 2\n")


def _evaluation_report() -> models.Model:
    from review.models import EvaluationReport

    return EvaluationReport.objects.create(params={"pids": []})


def _curation_job() -> models.Model:
    from curation.models import CurationJob

    return CurationJob.objects.create(name="lifecycle")


def _generation_run() -> models.Model:
    from generation.models import GenerationRun
    from tests.factories import ProblemFactory

    return GenerationRun.objects.create(problem=ProblemFactory(), mode=GenerationRun.Mode.FROM_KIT)


FACTORIES: dict[str, Callable[[], models.Model]] = {
    "generation_run": _generation_run,
    "curation_job": _curation_job,
    "evaluation_report": _evaluation_report,
    "judging_task": _judging_task,
    "validator_trial": _validator_trial,
    "suite_addition": _suite_addition,
}


def test_every_long_job_model_is_a_declared_kind() -> None:
    """A model with a status, an error and a finished time is a long job: it moves through core.joblife."""
    def looks_like_a_job(model: type[models.Model]) -> bool:
        names = {f.name for f in model._meta.get_fields()}
        return {"status", "error", "finished_at"} <= names

    long_jobs = {m._meta.label for m in apps.get_models() if looks_like_a_job(m)}
    declared = {kind.model._meta.label for kind in joblife.kinds()}
    assert long_jobs == declared
    assert set(FACTORIES) == set(KINDS)


@pytest.fixture(params=sorted(KINDS))
def kind(request: pytest.FixtureRequest) -> joblife.JobKind:
    return KINDS[request.param]


@pytest.fixture
def row(kind: joblife.JobKind) -> models.Model:
    made = FACTORIES[kind.name]()
    assert made.status == kind.queued  # type: ignore[attr-defined]
    return made


def _read(kind: joblife.JobKind, row: models.Model) -> Any:
    return kind.model._default_manager.get(pk=row.pk)


def _enqueue(kind: joblife.JobKind, row: models.Model) -> Job:
    """A real RQ job for the row (never run here: a worker would run the kind's real code)."""
    get_queue(QUEUE).empty()
    job = get_queue(QUEUE).enqueue("builtins.len", [row.pk])
    if kind.job_id_field:
        kind.model._default_manager.filter(pk=row.pk).update(**{kind.job_id_field: job.id})
    return job


def _die_under(job: Job, name: str) -> None:
    """`name` took `job` and was SIGKILLed: RQ still lists it and the job as started; its beat
    (the checked worker's health record) has expired."""
    connection = redis_connection()
    key = Worker.redis_worker_namespace_prefix + name
    job.set_status(JobStatus.STARTED)
    connection.hset(key, mapping={"current_job": job.id, "queues": QUEUE, "birth": "x"})
    connection.sadd(REDIS_WORKER_KEYS, key)
    connection.sadd(WORKERS_BY_QUEUE_KEY % QUEUE, key)
    connection.hset(WORKER_HEALTH_HASH, name, json.dumps({"expires_at": time.time() - 60}))


def _age(kind: joblife.JobKind, row: models.Model, seconds: float, *, beat: bool = True) -> None:
    """Make the row (and its beat, unless beat=False) look `seconds` old, past the sweep's grace
    for a new row."""
    past = timezone.now() - timedelta(seconds=seconds)
    fields = {f.name for f in kind.model._meta.get_fields()}
    names = ("created_at", kind.heartbeat_field, kind.started_field) if beat else ("created_at",)
    values = {name: past for name in names
              if name and name in fields and (name == "created_at" or getattr(_read(kind, row), name))}
    kind.model._default_manager.filter(pk=row.pk).update(**values)


def test_claim_is_won_once_and_names_the_worker(kind: joblife.JobKind, row: models.Model) -> None:
    assert joblife.claim(kind, pk=row.pk, worker="w1", job_id="job-1")
    assert not joblife.claim(kind, pk=row.pk, worker="w2", job_id="job-2")  # another worker: lost
    got = _read(kind, row)
    assert got.status == kind.running[0]
    if kind.worker_field:
        assert getattr(got, kind.worker_field) == "w1"
    if kind.heartbeat_field:
        assert getattr(got, kind.heartbeat_field) is not None


def test_heartbeat_only_while_running(kind: joblife.JobKind, row: models.Model) -> None:
    if not kind.heartbeat_field:
        pytest.skip(f"{kind.name} has no heartbeat")
    assert not joblife.heartbeat(kind, pk=row.pk)  # queued: nobody holds it
    joblife.claim(kind, pk=row.pk, worker="w1")
    _age(kind, row, 30)
    before = getattr(_read(kind, row), kind.heartbeat_field)
    assert joblife.heartbeat(kind, pk=row.pk)
    assert getattr(_read(kind, row), kind.heartbeat_field) > before
    joblife.fail(kind, pk=row.pk, reason="x")
    assert not joblife.heartbeat(kind, pk=row.pk)  # the worker learns it should stop


def test_fail_records_the_reason_once(kind: joblife.JobKind, row: models.Model) -> None:
    joblife.claim(kind, pk=row.pk, worker="w1")
    assert joblife.fail(kind, pk=row.pk, reason="SandboxFailed: the machine failed")
    assert not joblife.fail(kind, pk=row.pk, reason="a second reason")
    assert not joblife.finish(kind, pk=row.pk)  # a failed row is never made done by a late worker
    got = _read(kind, row)
    assert got.status == kind.failed
    assert getattr(got, kind.error_field) == "SandboxFailed: the machine failed"
    assert getattr(got, kind.finished_field) is not None


def test_finish_only_a_running_row(kind: joblife.JobKind, row: models.Model) -> None:
    assert not joblife.finish(kind, pk=row.pk)
    joblife.claim(kind, pk=row.pk, worker="w1")
    assert joblife.finish(kind, pk=row.pk)
    got = _read(kind, row)
    assert got.status == kind.done and getattr(got, kind.finished_field) is not None


def test_cancel_a_queued_row_at_once(kind: joblife.JobKind, row: models.Model) -> None:
    assert joblife.cancel(kind, pk=row.pk, who="alice") == "cancelled"
    got = _read(kind, row)
    assert got.status == kind.cancelled and "cancelled by alice" in getattr(got, kind.error_field)
    assert not joblife.claim(kind, pk=row.pk, worker="w1")  # its job, delivered later, does nothing
    assert joblife.cancel(kind, pk=row.pk, who="bob") == "finished"


def test_cancel_a_running_row(kind: joblife.JobKind, row: models.Model) -> None:
    joblife.claim(kind, pk=row.pk, worker="w1")
    answer = joblife.cancel(kind, pk=row.pk, who="alice")
    got = _read(kind, row)
    if kind.cancel_flag:
        assert answer == "requested" and getattr(got, kind.cancel_flag) is True
        assert got.status == kind.running[0]  # its worker stops at its next check
    else:
        assert answer == "cancelled" and got.status == kind.cancelled
        assert not joblife.finish(kind, pk=row.pk)  # the worker's late result records nothing


def test_a_dead_worker_s_job_runs_again_once_then_its_row_fails_with_the_reason(
        kind: joblife.JobKind, row: models.Model) -> None:
    """The real reaper and the janitor's sweep: a worker that stopped beating has its job queued
    again (the row stays claimed and the re-run claims it again); dying a second time fails it."""
    if not kind.job_id_field:
        pytest.skip(f"{kind.name} has no RQ job of its own (its chunks' jobs carry no row)")
    connection = redis_connection()
    dead_workers_sweep(connection)  # what earlier tests in this process left listed is not counted below
    job = _enqueue(kind, row)
    assert joblife.claim(kind, pk=row.pk, worker="w-dead", job_id=job.id)
    _die_under(job, "w-dead")
    _age(kind, row, 600, beat=False)  # its beat is recent: the reaper acts within seconds
    assert dead_workers_sweep(connection) == 1
    assert job.get_status(refresh=True) == JobStatus.QUEUED  # queued again, at the front
    assert joblife.sweep(kind) == 0  # its job will run: the row is left to it
    assert joblife.claim(kind, pk=row.pk, worker="w-next", job_id=job.id)  # the re-run takes it back
    assert not joblife.claim(kind, pk=row.pk, worker="w-other", job_id="another-job")
    _die_under(job, "w-next")
    _age(kind, row, 600, beat=False)
    assert dead_workers_sweep(connection) == 1
    assert job.get_status(refresh=True) == JobStatus.FAILED  # died twice: RQ gives up
    assert dead_jobs() == 1
    got = _read(kind, row)
    if kind.on_dead == "requeue":
        assert got.status == kind.queued
    else:
        assert got.status == kind.failed
        assert "worker died" in getattr(got, kind.error_field)
        if kind.worker_field:
            assert "w-next" in getattr(got, kind.error_field)


def test_a_row_whose_job_vanished_is_swept_after_the_grace(kind: joblife.JobKind, row: models.Model) -> None:
    if not kind.job_id_field:
        pytest.skip(f"{kind.name} has no RQ job of its own")
    job = _enqueue(kind, row)
    joblife.claim(kind, pk=row.pk, worker="w1", job_id=job.id)
    job.delete()  # Redis restarted empty, or the job expired
    if kind.sweep is None:  # (generation writes a run's job id before it queues the job: no grace)
        assert joblife.sweep(kind) == 0  # a new row: its job id may not be written yet
    _age(kind, row, 600, beat=False)
    assert joblife.sweep(kind) == 1
    got = _read(kind, row)
    assert got.status == (kind.queued if kind.on_dead == "requeue" else kind.failed)


def test_a_row_whose_own_beat_stopped_is_swept(kind: joblife.JobKind, row: models.Model) -> None:
    if kind.stale_after_s is None:
        pytest.skip(f"{kind.name}'s worker does not beat per row: its RQ job says whether it lives")
    joblife.claim(kind, pk=row.pk, worker="w-silent")
    assert joblife.sweep(kind) == 0  # it beat just now
    _age(kind, row, kind.stale_after_s() + 60)
    silent_since = getattr(_read(kind, row), kind.heartbeat_field or "")
    assert joblife.sweep(kind) == 1
    assert joblife.sweep(kind) == 0  # dealt with once
    got = _read(kind, row)
    if kind.on_dead == "requeue":  # taken back to run again (a campaign run: queued; a curation job: resumed)
        assert got.status in kind.open and getattr(got, kind.heartbeat_field or "") > silent_since
    else:
        assert got.status == kind.failed and "no heartbeat since" in getattr(got, kind.error_field)
