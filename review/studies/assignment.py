"""Who labels what next: overlap-capped claims in the study's seeded order.

Every item carries `claims`, the number of live claims plus submitted labels. A claim is
taken with one conditional UPDATE (`claims < overlap`) in the same transaction as the
Annotation row whose (item, annotator) pair is unique, so two annotators asking at the
same moment can never push an item past its overlap, and one annotator can never hold an
item twice. Skipping hands the slot back; a skipped item can be claimed again later.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from review.models import Annotation, Study, StudyItem


class AssignmentError(RuntimeError):
    """The study or the item cannot be claimed by this user now."""


def _claim_slot(*, item: StudyItem, overlap: int) -> bool:
    return StudyItem.objects.filter(pk=item.pk, claims__lt=overlap).update(claims=F("claims") + 1) == 1


def _take(item: StudyItem, user: Any, overlap: int) -> Annotation | None:
    try:
        with transaction.atomic():
            if not _claim_slot(item=item, overlap=overlap):
                return None
            return Annotation.objects.create(item=item, annotator=user, last_viewed_at=timezone.now())
    except IntegrityError:
        return None  # this annotator already has a row for the item (a double click); the slot rolls back


def current_claim(*, study: Study, user: Any) -> Annotation | None:
    return (
        Annotation.objects.filter(item__study=study, annotator=user, status=Annotation.Status.CLAIMED)
        .select_related("item")
        .order_by("item__position")
        .first()
    )


def item_next(*, study: Study, user: Any) -> Annotation | None:
    """Resume the item this user holds, else claim the first item in order they have not touched.

    Items they labelled or skipped are never offered again by this call (skipped ones are
    reached through `item_resume_skipped`). None when nothing is left for them.
    """
    if study.status != Study.Status.OPEN:
        raise AssignmentError("the study is not open")
    held = current_claim(study=study, user=user)
    if held is not None:
        return held
    touched = Annotation.objects.filter(item__study=study, annotator=user).values("item_id")
    candidates = study.items.exclude(pk__in=touched).filter(claims__lt=study.overlap).order_by("position")
    for item in candidates:
        annotation = _take(item, user, study.overlap)
        if annotation is not None:
            return annotation
    return None


def has_work(*, study: Study, user: Any) -> bool:
    """Whether `item_next` would give this user something now (held, or a free untouched item)."""
    if study.status != Study.Status.OPEN:
        return False
    touched = Annotation.objects.filter(item__study=study, annotator=user)
    if touched.filter(status=Annotation.Status.CLAIMED).exists():
        return True
    return study.items.exclude(pk__in=touched.values("item_id")).filter(claims__lt=study.overlap).exists()


def item_skip(*, annotation: Annotation, elapsed_ms: int = 0) -> bool:
    """Hand the slot back so someone else can label the item; the time spent so far is kept."""
    with transaction.atomic():
        changed = Annotation.objects.filter(pk=annotation.pk, status=Annotation.Status.CLAIMED).update(
            status=Annotation.Status.SKIPPED, time_spent_ms=F("time_spent_ms") + max(0, elapsed_ms)
        )
        if changed:
            StudyItem.objects.filter(pk=annotation.item_id, claims__gt=0).update(claims=F("claims") - 1)
    return bool(changed)


def item_resume_skipped(*, annotation: Annotation) -> bool:
    """Claim a skipped item again, if it still has a free slot."""
    study = annotation.item.study
    if study.status != Study.Status.OPEN:
        raise AssignmentError("the study is not open")
    with transaction.atomic():
        if not _claim_slot(item=annotation.item, overlap=study.overlap):
            return False
        changed = Annotation.objects.filter(pk=annotation.pk, status=Annotation.Status.SKIPPED).update(
            status=Annotation.Status.CLAIMED, last_viewed_at=timezone.now()
        )
        if not changed:
            transaction.set_rollback(True)
            return False
    return True


def skipped_items(*, study: Study, user: Any) -> list[Annotation]:
    return list(
        Annotation.objects.filter(item__study=study, annotator=user, status=Annotation.Status.SKIPPED)
        .select_related("item__problem")
        .order_by("item__position")
    )
