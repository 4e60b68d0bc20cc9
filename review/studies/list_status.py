"""Review status of problems, as a filter and a column of the problems list.

A problem is *reviewed* once some study item of it has a submitted annotation or an
adjudication; *flagged* when a label says its validator is incorrect or its suite
incomplete (the adjudication decides where there is one, otherwise any submitted label
counts); *pending* when it sits in an open study with no labels yet.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from problems.list_extensions import Cell, ListExtension
from review.models import Annotation, Study, StudyItem, SuiteLabel, ValidatorLabel

CHOICES = [
    ("", "Any review status"),
    ("unreviewed", "Not reviewed"),
    ("pending", "In an open study, no labels yet"),
    ("reviewed", "Reviewed"),
    ("clean", "Reviewed, nothing flagged"),
    ("flagged", "Flagged by reviewers"),
]


def _submitted(*conditions: Q) -> Exists:
    """Whether the study item (the outer row) has a submitted annotation meeting ``conditions``."""
    return Exists(
        Annotation.objects.filter(*conditions, item=OuterRef("pk"), status=Annotation.Status.SUBMITTED)
    )


def _flag_q(prefix: str) -> Q:
    return Q(**{f"{prefix}validator_label": ValidatorLabel.INCORRECT}) | Q(
        **{f"{prefix}suite_label": SuiteLabel.INCOMPLETE}
    )


def _reviewed_items() -> QuerySet[StudyItem]:
    return StudyItem.objects.filter(Q(adjudication__isnull=False) | _submitted())


def _flagged_items() -> QuerySet[StudyItem]:
    return StudyItem.objects.filter(
        _flag_q("adjudication__") | (Q(adjudication__isnull=True) & _submitted(_flag_q("")))
    )


def review_status_apply(qs: QuerySet[Any], value: str) -> QuerySet[Any]:
    reviewed = _reviewed_items().values("problem_id")
    if value == "unreviewed":
        return qs.exclude(pk__in=reviewed)
    if value == "pending":
        open_items = StudyItem.objects.filter(study__status=Study.Status.OPEN).values("problem_id")
        return qs.filter(pk__in=open_items).exclude(pk__in=reviewed)
    if value == "reviewed":
        return qs.filter(pk__in=reviewed)
    flagged = _flagged_items().values("problem_id")
    if value == "clean":
        return qs.filter(pk__in=reviewed).exclude(pk__in=flagged)
    if value == "flagged":
        return qs.filter(pk__in=flagged)
    return qs


def review_status_cells(problem_ids: list[int]) -> dict[int, Cell]:
    """One query: every study item of these problems with what its labels say."""
    rows = (
        StudyItem.objects.filter(problem_id__in=problem_ids)
        .annotate(
            labelled=_submitted(),
            labelled_flag=_submitted(_flag_q("")),
        )
        .values_list(
            "problem_id",
            "study__status",
            "adjudication__id",
            "adjudication__validator_label",
            "adjudication__suite_label",
            "labelled",
            "labelled_flag",
        )
    )
    state: dict[int, str] = {}
    rank = {"pending": 1, "reviewed": 2, "flagged": 3}
    for pid, study_status, adjudicated, adj_validator, adj_suite, labelled, labelled_flag in rows:
        if adjudicated is not None:
            flagged = adj_validator == ValidatorLabel.INCORRECT or adj_suite == SuiteLabel.INCOMPLETE
            item = "flagged" if flagged else "reviewed"
        elif labelled:
            item = "flagged" if labelled_flag else "reviewed"
        elif study_status == Study.Status.OPEN:
            item = "pending"
        else:
            continue
        if rank[item] > rank.get(state.get(pid, ""), 0):
            state[pid] = item
    cells = {
        "pending": Cell("in study", "st-queued", "In an open study; no labels yet"),
        "reviewed": Cell("reviewed", "st-succeeded", "Reviewers found nothing wrong"),
        "flagged": Cell(
            "flagged", "st-failed", "A reviewer marked the validator incorrect or the suite incomplete"
        ),
    }
    return {pid: cells[s] for pid, s in state.items()}


REVIEW_STATUS = ListExtension(
    name="review",
    label="Review status",
    choices=CHOICES,
    apply=review_status_apply,
    column="Review",
    cells=review_status_cells,
)
