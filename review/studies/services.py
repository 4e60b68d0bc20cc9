"""Writes for human validation studies. Keyword-only, typed, atomic where several rows change."""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from generation.services import generation_run_start
from problems.models import CodeOrigin, InputValidator, Problem, TestKit
from problems.services import kit_create, kit_with_edited_code, validator_create
from review.models import (
    Adjudication,
    Annotation,
    Study,
    StudyItem,
    SuiteAddition,
    ValidatorLabel,
    ValidatorReason,
    ValidatorTrial,
)
from review.studies import selectors
from review.studies.jobs import enqueue_suite_addition, enqueue_trial

log = logging.getLogger(__name__)

# A visit longer than this is someone who walked away from an open tab, not labelling time.
MAX_VISIT_MS = 2 * 3600 * 1000
MAX_INPUT_CHARS = 1_000_000


class StudyStateError(RuntimeError):
    """The study (or item) is not in a state that allows the operation."""


def normalise_input(text: str) -> str:
    """Browsers send textarea line ends as CRLF; test inputs use LF."""
    return (text or "").replace("\r\n", "\n").replace("\r", "\n")


# --- studies ----------------------------------------------------------------------------


def study_create(
    *,
    name: str,
    created_by: Any,
    guidelines: str = "",
    questions: str = Study.Questions.BOTH,
    selection: str = Study.Selection.FILTER,
    problem_filter: dict[str, Any] | None = None,
    problems: list[Problem] | None = None,
    annotators: list[Any] | None = None,
    overlap: int = 2,
    seed: int | None = None,
) -> Study:
    with transaction.atomic():
        study = Study.objects.create(
            name=name,
            guidelines=guidelines,
            questions=questions,
            selection=selection,
            problem_filter=problem_filter or {},
            overlap=overlap,
            seed=random.SystemRandom().randrange(2**31) if seed is None else seed,
            created_by=created_by,
        )
        study.problems.set(problems or [])
        study.annotators.set(annotators or [])
    return study


# Fields that decide which items exist and how many labels each needs: frozen once open.
_DRAFT_ONLY = {"questions", "selection", "problem_filter", "problems", "overlap", "seed"}


def study_update(*, study: Study, **fields: Any) -> Study:
    if study.status != Study.Status.DRAFT and _DRAFT_ONLY & set(fields):
        changed = sorted(_DRAFT_ONLY & set(fields))
        raise StudyStateError(f"{', '.join(changed)} can only change while the study is a draft")
    with transaction.atomic():
        m2m = {k: fields.pop(k) for k in ("problems", "annotators") if k in fields}
        for key, value in fields.items():
            setattr(study, key, value)
        study.save()
        if "annotators" in m2m:
            kept = {user.pk for user in m2m["annotators"]}
            removed = set(study.annotators.values_list("pk", flat=True)) - kept
            if removed:
                _release_claims(study=study, user_ids=removed)
        for key, value in m2m.items():
            getattr(study, key).set(value)
    return study


def _release_claims(*, study: Study, user_ids: set[int] | None = None, idle_before: Any = None) -> int:
    """Give back held items so they stop blocking the overlap; submitted labels stay."""
    held = Annotation.objects.filter(item__study=study, status=Annotation.Status.CLAIMED)
    if user_ids is not None:
        held = held.filter(annotator_id__in=user_ids)
    if idle_before is not None:
        held = held.filter(Q(last_viewed_at__lt=idle_before) | Q(last_viewed_at__isnull=True, claimed_at__lt=idle_before))
    released = 0
    for annotation in held:
        if Annotation.objects.filter(pk=annotation.pk, status=Annotation.Status.CLAIMED).delete()[0]:
            StudyItem.objects.filter(pk=annotation.item_id, claims__gt=0).update(claims=F("claims") - 1)
            released += 1
    return released


def study_release_idle_claims(*, study: Study, idle_hours: float = 24) -> int:
    """Items held by someone who has not opened them for `idle_hours` go back to the pool, so an
    annotator who walked away does not keep an item from reaching its overlap."""
    with transaction.atomic():
        return _release_claims(study=study, idle_before=timezone.now() - timedelta(hours=idle_hours))


def study_items_freeze(*, study: Study) -> int:
    """Resolve the problems to items, pinned to today's validator and suite, in seeded order."""
    pinned = []
    for problem in selectors.study_problems(study):
        parts = selectors.frozen_parts(study, problem)
        if parts is not None:
            pinned.append((problem, *parts))
    random.Random(study.seed).shuffle(pinned)
    StudyItem.objects.bulk_create(
        StudyItem(study=study, problem=problem, position=position, validator=validator, suite=suite)
        for position, (problem, validator, suite) in enumerate(pinned)
    )
    return len(pinned)


def study_open(*, study: Study) -> Study:
    """Draft -> open (freezing the items), or closed -> open again (items unchanged)."""
    with transaction.atomic():
        opened = Study.objects.filter(pk=study.pk, status=Study.Status.DRAFT).update(
            status=Study.Status.OPEN, opened_at=timezone.now()
        )
        if opened:
            if study_items_freeze(study=study) == 0:
                raise StudyStateError("no problem matches the selection with what the questions need "
                                      "(a validator, an active suite)")
        elif not Study.objects.filter(pk=study.pk, status=Study.Status.CLOSED).update(
            status=Study.Status.OPEN, closed_at=None
        ):
            raise StudyStateError("the study is already open")
    study.refresh_from_db()
    return study


def study_delete_draft(*, study: Study) -> bool:
    """Delete a study that was never opened (nobody has labelled anything); False otherwise."""
    deleted, _ = Study.objects.filter(pk=study.pk, status=Study.Status.DRAFT).delete()
    return bool(deleted)


def study_close(*, study: Study) -> Study:
    if not Study.objects.filter(pk=study.pk, status=Study.Status.OPEN).update(
        status=Study.Status.CLOSED, closed_at=timezone.now()
    ):
        raise StudyStateError("only an open study can be closed")
    study.refresh_from_db()
    return study


def study_set_results_opened(*, study: Study, opened: bool) -> Study:
    Study.objects.filter(pk=study.pk).update(results_opened=opened)
    study.refresh_from_db()
    return study


# --- labels -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Labels:
    validator_label: str = ""
    validator_reason: str = ""
    counterexample: str = ""
    suite_label: str = ""
    missing_cases: str = ""
    suggested_input: str = ""
    comment: str = ""


def annotation_view(*, annotation: Annotation) -> None:
    """Start the clock of a visit (the fallback when the page's own timer did not report)."""
    Annotation.objects.filter(pk=annotation.pk).update(last_viewed_at=timezone.now())


def _visit_ms(annotation: Annotation, elapsed_ms: int | None) -> int:
    if elapsed_ms is None and annotation.last_viewed_at is not None:
        elapsed_ms = int((timezone.now() - annotation.last_viewed_at).total_seconds() * 1000)
    return max(0, min(elapsed_ms or 0, MAX_VISIT_MS))


DRAFT_FIELDS = ("validator_label", "validator_reason", "counterexample", "suite_label", "missing_cases",
                "suggested_input", "comment")


def annotation_draft_save(*, annotation: Annotation, fields: dict[str, str]) -> bool:
    """Keep what an annotator has typed on an item they hold but have not submitted, so leaving
    the page loses nothing. Only a claimed annotation takes a draft: a submitted label changes
    only by submitting again, and results read submitted annotations only."""
    if annotation.item.study.status != Study.Status.OPEN:
        return False
    values = {name: str(fields.get(name) or "") for name in DRAFT_FIELDS}
    return bool(Annotation.objects.filter(pk=annotation.pk, status=Annotation.Status.CLAIMED).update(**values))


def annotation_submit(*, annotation: Annotation, labels: Labels, elapsed_ms: int | None = None) -> Annotation:
    """Record an annotator's labels on an item they hold (or re-label one they submitted)."""
    study = annotation.item.study
    if study.status != Study.Status.OPEN:
        raise StudyStateError("the study is not open")
    if annotation.status == Annotation.Status.SKIPPED:
        raise StudyStateError("claim the item again before labelling it")
    counterexample = normalise_input(labels.counterexample) if labels.validator_label == ValidatorLabel.INCORRECT else ""
    with transaction.atomic():
        changed = Annotation.objects.filter(
            pk=annotation.pk, status__in=[Annotation.Status.CLAIMED, Annotation.Status.SUBMITTED]
        ).update(
            status=Annotation.Status.SUBMITTED,
            validator_label=labels.validator_label,
            validator_reason=labels.validator_reason if labels.validator_label == ValidatorLabel.INCORRECT else "",
            counterexample=counterexample,
            counterexample_accepted=_checked(annotation, counterexample),
            suite_label=labels.suite_label,
            missing_cases=labels.missing_cases if labels.suite_label == "incomplete" else "",
            suggested_input=normalise_input(labels.suggested_input) if labels.suite_label == "incomplete" else "",
            comment=labels.comment,
            time_spent_ms=F("time_spent_ms") + _visit_ms(annotation, elapsed_ms),
            submitted_at=timezone.now(),
            last_viewed_at=None,
        )
        if not changed:
            raise StudyStateError("the item was skipped or released meanwhile")
    annotation.refresh_from_db()
    if counterexample and annotation.counterexample_accepted is None and annotation.item.validator is not None:
        # Not checked on the page (or checked on a different text): check it now, the job fills it in.
        trial_start(item=annotation.item, user=annotation.annotator, text=counterexample,
                    purpose=ValidatorTrial.Purpose.COUNTEREXAMPLE)
    return annotation


def _checked(annotation: Annotation, counterexample: str) -> bool | None:
    if not counterexample:
        return None
    trial = (
        ValidatorTrial.objects.filter(
            item_id=annotation.item_id, user_id=annotation.annotator_id, input=counterexample,
            status=ValidatorTrial.Status.DONE,
        )
        .order_by("-created_at")
        .first()
    )
    return trial.accepted if trial else None


# --- the try-it box and counterexample checks -------------------------------------------


def trial_start(*, item: StudyItem, user: Any, text: str, purpose: str = ValidatorTrial.Purpose.TRY) -> ValidatorTrial:
    """Queue a sandboxed run of the item's validator on `text`; the page polls the row."""
    if item.validator is None:
        raise StudyStateError("this item has no validator")
    text = normalise_input(text)
    if len(text) > MAX_INPUT_CHARS:
        raise StudyStateError("the input is too long to try here")
    trial = ValidatorTrial.objects.create(item=item, validator=item.validator, user=user, purpose=purpose, input=text)
    enqueue_trial(trial)
    return trial


# --- adjudication and closing the loop --------------------------------------------------


def adjudication_set(
    *,
    item: StudyItem,
    user: Any,
    validator_label: str = "",
    validator_reason: str = "",
    counterexample: str = "",
    suite_label: str = "",
    note: str = "",
) -> Adjudication:
    """Set the final label of an item (annotations stay as they were).

    An item adjudicated "incorrect" with a counterexample the validator wrongly accepts
    closes the loop: the input becomes a regression input of the validator, so every later
    version must reject it. "Too strict" counterexamples are valid inputs the validator
    rejects, the opposite direction, so they are not regression inputs.
    """
    if validator_label != ValidatorLabel.INCORRECT:
        validator_reason, counterexample = "", ""
    counterexample = normalise_input(counterexample)
    with transaction.atomic():
        adjudication, _ = Adjudication.objects.update_or_create(
            item=item,
            defaults={
                "validator_label": validator_label,
                "validator_reason": validator_reason,
                "counterexample": counterexample,
                "suite_label": suite_label,
                "note": note,
                "adjudicated_by": user,
            },
        )
        if (
            counterexample.strip()
            and validator_reason != ValidatorReason.TOO_STRICT_FORMAT
            and item.validator is not None
        ):
            regression_input_add(validator=item.validator, text=counterexample)
            adjudication.regression_recorded = True
            adjudication.save(update_fields=["regression_recorded"])
    return adjudication


def regression_input_add(*, validator: InputValidator, text: str) -> None:
    """Add to this validator and to the newest version (which later versions copy from)."""
    with transaction.atomic():
        newest = selectors.latest_validator(validator.problem)
        targets = {validator.pk} | ({newest.pk} if newest else set())
        for row in InputValidator.objects.select_for_update().filter(pk__in=targets):
            if text not in row.regression_inputs:
                row.regression_inputs = [*row.regression_inputs, text]
                row.save(update_fields=["regression_inputs"])


@dataclass(frozen=True)
class ValidatorEdit:
    kit: TestKit
    validator: InputValidator
    run: Any | None  # a generation.GenerationRun, when re-materialisation could start
    message: str


def validator_edit(*, item: StudyItem, user: Any, code: str, note: str = "") -> ValidatorEdit:
    """A maintainer's fix of the validator from a study item: a new validator and kit version,
    then a from-kit generation run to re-materialise the suite with it."""
    problem = item.problem
    code = normalise_input(code)
    with transaction.atomic():
        base = (item.suite.kit if item.suite and item.suite.kit_id else None) or TestKit.objects.filter(
            problem=problem
        ).order_by("-version").first()
        if base is not None:
            kit = kit_with_edited_code(kit=base, user=user, validator_code=code, note=note)
        else:
            validator = validator_create(
                problem=problem, code=code, origin=CodeOrigin.EDITED, edited_by=user, change_note=note
            )
            kit = kit_create(problem=problem, origin=CodeOrigin.EDITED, validator=validator, created_by=user)
    assert kit.validator is not None  # both branches make the kit with the edited validator
    validator = kit.validator
    run, message = _rematerialise(problem=problem, user=user)
    return ValidatorEdit(kit=kit, validator=validator, run=run, message=message)


def _rematerialise(*, problem: Problem, user: Any) -> tuple[Any | None, str]:
    try:
        run = generation_run_start(problem=problem, mode="from_kit", user=user)
    except Exception as exc:  # a refusal (e.g. a run already going) must not undo the saved edit
        log.warning("from-kit run for problem %s not started: %s", problem.pk, exc)
        return None, f"the suite was not re-materialised: {exc}"
    return run, "a from-kit generation run re-materialises the suite"


def suite_addition_start(
    *, item: StudyItem, user: Any, text: str, annotation: Annotation | None = None
) -> SuiteAddition:
    """Queue: validate the input, get two agreeing oracle outputs, then a new suite version with it."""
    text = normalise_input(text)
    if not text.strip():
        raise StudyStateError("the input is empty")
    if len(text) > MAX_INPUT_CHARS:
        raise StudyStateError("the input is too long")
    addition = SuiteAddition.objects.create(item=item, annotation=annotation, input=text, requested_by=user)
    enqueue_suite_addition(addition)
    return addition
