"""RQ jobs of studies, on the `sandbox` queue. They take ids, claim the row with a
conditional update, call one function, and record the outcome (or failure) on the row."""

from __future__ import annotations

import logging
from collections.abc import Callable

import django_rq
from django.db import transaction

from core import joblife
from core.embedded import ensure_redis
from review.models import SuiteAddition, ValidatorTrial
from review.models.studies import SUITE_ADDITION, VALIDATOR_TRIAL
from review.studies import outcomes, sandboxed

log = logging.getLogger(__name__)
SANDBOX_QUEUE = "sandbox"


def validator_trial_job(trial_id: int) -> str:
    worker, job_id = joblife.current_worker()
    if not joblife.claim(VALIDATOR_TRIAL, pk=trial_id, worker=worker, job_id=job_id):
        return "skipped"
    trial = ValidatorTrial.objects.select_related("validator").get(pk=trial_id)
    try:
        accepted, error = sandboxed.validator_verdicts(trial.validator.code, [trial.input])[0]
    except Exception as exc:
        log.exception("validator trial %s failed", trial_id)
        outcomes.trial_record(trial=trial, accepted=None, error=f"{type(exc).__name__}: {exc}")
        raise
    outcomes.trial_record(trial=trial, accepted=accepted, error=error)
    return "accepted" if accepted else "rejected" if accepted is False else "failed"


def suite_addition_job(addition_id: int) -> str:
    worker, job_id = joblife.current_worker()
    if not joblife.claim(SUITE_ADDITION, pk=addition_id, worker=worker, job_id=job_id):
        return "skipped"
    addition = SuiteAddition.objects.select_related("item__problem", "item__suite").get(pk=addition_id)
    try:
        base, suite, output, lines = sandboxed.suite_with_added_input(addition)
    except sandboxed.AdditionRefused as exc:
        outcomes.suite_addition_record(addition=addition, error=str(exc))
        return "refused"
    except Exception as exc:
        log.exception("suite addition %s failed", addition_id)
        outcomes.suite_addition_record(addition=addition, error=f"{type(exc).__name__}: {exc}")
        raise
    outcomes.suite_addition_record(
        addition=addition, base_suite=base, new_suite=suite, output_preview=sandboxed.output_preview(output),
        log_lines=lines,
    )
    return "added"


def _enqueue(
    model: type[ValidatorTrial] | type[SuiteAddition], pk: int, func: Callable[[int], str], timeout: int
) -> None:
    ensure_redis()

    def enqueue() -> None:
        job = django_rq.get_queue(SANDBOX_QUEUE).enqueue(func, pk, job_timeout=timeout, failure_ttl=7 * 86400)
        model.objects.filter(pk=pk).update(job_id=job.id)

    transaction.on_commit(enqueue)


def enqueue_trial(trial: ValidatorTrial) -> None:
    _enqueue(ValidatorTrial, trial.pk, validator_trial_job, 120)


def enqueue_suite_addition(addition: SuiteAddition) -> None:
    _enqueue(SuiteAddition, addition.pk, suite_addition_job, 1800)
