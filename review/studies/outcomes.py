"""What the studies' jobs write when a sandboxed run ends (jobs.py calls these).

Apart from services.py, which queues those jobs, so that nothing imports in a circle.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from core import joblife
from review.models import Annotation, SuiteAddition, ValidatorTrial
from review.models.studies import SUITE_ADDITION, VALIDATOR_TRIAL


def trial_record(*, trial: ValidatorTrial, accepted: bool | None, error: str = "") -> None:
    with transaction.atomic():
        if accepted is None:
            recorded = joblife.fail(VALIDATOR_TRIAL, pk=trial.pk, reason=error, accepted=None)
        else:
            recorded = joblife.finish(VALIDATOR_TRIAL, pk=trial.pk, accepted=accepted, error=error[:4000],
                                      from_status=VALIDATOR_TRIAL.open)
        if recorded and accepted is not None and trial.user_id is not None:
            # A submitted counterexample that matches this text learns what the validator said.
            Annotation.objects.filter(
                item_id=trial.item_id, annotator_id=trial.user_id, counterexample=trial.input
            ).update(counterexample_accepted=accepted)


def suite_addition_record(
    *, addition: SuiteAddition, new_suite: Any = None, base_suite: Any = None, output_preview: str = "",
    error: str = "", log_lines: list[str] | None = None,
) -> None:
    fields = {"new_suite": new_suite, "base_suite": base_suite, "output_preview": output_preview[:200],
              "log": "\n".join(log_lines or [])[:20000]}
    if error:
        joblife.fail(SUITE_ADDITION, pk=addition.pk, reason=error, **fields)
    else:
        joblife.finish(SUITE_ADDITION, pk=addition.pk, from_status=SUITE_ADDITION.open, error="", **fields)
