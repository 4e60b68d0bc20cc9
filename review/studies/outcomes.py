"""What the studies' jobs write when a sandboxed run ends (jobs.py calls these).

Apart from services.py, which queues those jobs, so that nothing imports in a circle.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from review.models import Annotation, SuiteAddition, ValidatorTrial


def trial_record(*, trial: ValidatorTrial, accepted: bool | None, error: str = "") -> None:
    status = ValidatorTrial.Status.FAILED if accepted is None else ValidatorTrial.Status.DONE
    with transaction.atomic():
        ValidatorTrial.objects.filter(pk=trial.pk).update(
            status=status, accepted=accepted, error=error[:4000], finished_at=timezone.now()
        )
        if accepted is not None and trial.user_id is not None:
            # A submitted counterexample that matches this text learns what the validator said.
            Annotation.objects.filter(
                item_id=trial.item_id, annotator_id=trial.user_id, counterexample=trial.input
            ).update(counterexample_accepted=accepted)


def suite_addition_record(
    *, addition: SuiteAddition, new_suite: Any = None, base_suite: Any = None, output_preview: str = "",
    error: str = "", log_lines: list[str] | None = None,
) -> None:
    SuiteAddition.objects.filter(pk=addition.pk).update(
        status=SuiteAddition.Status.FAILED if error else SuiteAddition.Status.DONE,
        new_suite=new_suite,
        base_suite=base_suite,
        output_preview=output_preview[:200],
        error=error[:4000],
        log="\n".join(log_lines or [])[:20000],
        finished_at=timezone.now(),
    )
