"""The results of a study: rates with Wilson intervals, per-annotator numbers, agreement,
disagreements, and the export of every label. Callers check `can_see_results` first."""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import PermissionDenied

from review.models import Adjudication, Annotation, Study, StudyItem, SuiteLabel, ValidatorLabel
from review.studies import agreement as stats
from review.studies.selectors import can_see_results, labels_by_item, submitted_annotations

VALIDATOR_CATEGORIES = tuple(ValidatorLabel.values)
SUITE_CATEGORIES = tuple(SuiteLabel.values)


@dataclass
class QuestionResult:
    """One question (validator or suite) over the whole study."""

    name: str
    positive: str
    negative: str
    item_rate: stats.Rate  # over items with a final label (adjudicated, else a clear majority)
    label_rate: stats.Rate  # over individual labels
    unsure_items: int
    undecided_items: int
    agreement: stats.Agreement
    pairs: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class AnnotatorRow:
    username: str
    submitted: int
    skipped: int
    in_progress: int
    validator_counts: dict[str, int]
    validator_rate: stats.Rate
    suite_counts: dict[str, int]
    suite_rate: stats.Rate
    median_seconds: float | None


@dataclass
class ItemRow:
    item: StudyItem
    annotations: list[Annotation]
    adjudication: Adjudication | None
    validator_final: str | None
    suite_final: str | None
    validator_disagree: bool
    suite_disagree: bool


def final_label(labels: list[str], adjudicated: str) -> str | None:
    return adjudicated or stats.majority(labels)


def _question(
    name: str, positive: str, negative: str, categories: tuple[str, ...], table: dict[int, dict[int, str]],
    finals: dict[int, str | None], usernames: dict[int, str],
) -> QuestionResult:
    decided = [label for label in finals.values() if label in (positive, negative)]
    labels = [label for by in table.values() for label in by.values() if label in (positive, negative)]
    result = stats.agreement(table, categories)
    return QuestionResult(
        name=name,
        positive=positive,
        negative=negative,
        item_rate=stats.wilson(decided.count(positive), len(decided)),
        label_rate=stats.wilson(labels.count(positive), len(labels)),
        unsure_items=sum(1 for label in finals.values() if label == ValidatorLabel.UNSURE),
        undecided_items=sum(1 for item in table if finals.get(item) is None),
        agreement=result,
        pairs=[
            {"first": usernames.get(p.first, p.first), "second": usernames.get(p.second, p.second),
             "items": p.items, "kappa": p.kappa, **_pair_matrix(table, p.first, p.second, categories)}
            for p in result.pairs
        ],
    )


def _pair_matrix(table: dict[int, dict[int, str]], first: Any, second: Any,
                 categories: tuple[str, ...]) -> dict[str, Any]:
    """How two annotators' labels cross on the items both labelled: rows are the first one's
    label, columns the second one's; the diagonal is where they agree."""
    counts: dict[tuple[str | None, str | None], int] = {(a, b): 0 for a in categories for b in categories}
    for by in table.values():
        a, b = by.get(first), by.get(second)
        if (a, b) in counts:
            counts[a, b] += 1
    rows = [(a, [(counts[a, b], a == b) for b in categories]) for a in categories]
    agree = sum(counts[c, c] for c in categories)
    return {"categories": categories, "rows": rows, "agree": agree, "shared": sum(counts.values())}


def _check(study: Study, viewer: Any) -> None:
    # The views check first; this is the second lock on the same door (blind labelling).
    if not can_see_results(study, viewer):
        raise PermissionDenied("results are hidden until the study closes")


def study_results(study: Study, *, viewer: Any) -> dict[str, Any]:
    _check(study, viewer)
    items = list(study.items.select_related("problem", "validator", "suite", "adjudication").order_by("position"))
    annotations = list(submitted_annotations(study))
    usernames = {a.annotator_id: a.annotator.username for a in annotations}
    by_item: dict[int, list[Annotation]] = defaultdict(list)
    for annotation in annotations:
        by_item[annotation.item_id].append(annotation)

    rows: list[ItemRow] = []
    for item in items:
        adjudication = getattr(item, "adjudication", None)
        mine = by_item.get(item.pk, [])
        v_labels = [a.validator_label for a in mine if a.validator_label]
        s_labels = [a.suite_label for a in mine if a.suite_label]
        rows.append(ItemRow(
            item=item,
            annotations=mine,
            adjudication=adjudication,
            validator_final=final_label(v_labels, adjudication.validator_label if adjudication else ""),
            suite_final=final_label(s_labels, adjudication.suite_label if adjudication else ""),
            validator_disagree=len(set(v_labels)) > 1,
            suite_disagree=len(set(s_labels)) > 1,
        ))

    questions = []
    if study.asks_validator:
        table = labels_by_item(annotations, "validator_label")
        finals = {r.item.pk: r.validator_final for r in rows if r.item.pk in table or r.adjudication}
        questions.append(_question("Validator correct", ValidatorLabel.CORRECT, ValidatorLabel.INCORRECT,
                                   VALIDATOR_CATEGORIES, table, finals, usernames))
    if study.asks_suite:
        table = labels_by_item(annotations, "suite_label")
        finals = {r.item.pk: r.suite_final for r in rows if r.item.pk in table or r.adjudication}
        questions.append(_question("Suite complete", SuiteLabel.COMPLETE, SuiteLabel.INCOMPLETE,
                                   SUITE_CATEGORIES, table, finals, usernames))

    return {
        "questions": questions,
        "annotators": annotator_rows(study),
        "items": rows,
        "disagreements": [r for r in rows if r.validator_disagree or r.suite_disagree],
    }


def annotator_rows(study: Study) -> list[AnnotatorRow]:
    everything = Annotation.objects.filter(item__study=study).select_related("annotator")
    grouped: dict[str, list[Annotation]] = defaultdict(list)
    for annotation in everything:
        grouped[annotation.annotator.username].append(annotation)
    for user in study.annotators.all():
        grouped.setdefault(user.username, [])
    rows = []
    for username in sorted(grouped):
        mine = grouped[username]
        done = [a for a in mine if a.status == Annotation.Status.SUBMITTED]
        v = Counter(a.validator_label for a in done if a.validator_label)
        s = Counter(a.suite_label for a in done if a.suite_label)
        times = [a.time_spent_ms / 1000 for a in done]
        rows.append(AnnotatorRow(
            username=username,
            submitted=len(done),
            skipped=sum(1 for a in mine if a.status == Annotation.Status.SKIPPED),
            in_progress=sum(1 for a in mine if a.status == Annotation.Status.CLAIMED),
            validator_counts={c: v.get(c, 0) for c in VALIDATOR_CATEGORIES},
            validator_rate=stats.wilson(v[ValidatorLabel.CORRECT], v[ValidatorLabel.CORRECT] + v[ValidatorLabel.INCORRECT]),
            suite_counts={c: s.get(c, 0) for c in SUITE_CATEGORIES},
            suite_rate=stats.wilson(s[SuiteLabel.COMPLETE], s[SuiteLabel.COMPLETE] + s[SuiteLabel.INCOMPLETE]),
            median_seconds=statistics.median(times) if times else None,
        ))
    return rows


# --- export -----------------------------------------------------------------------------

EXPORT_FIELDS = [
    "study_id", "study", "item_number", "item_index_0based", "problem_id", "problem_pid", "problem_title",
    "validator_version", "suite_id", "suite_version", "annotator", "status",
    "validator_label", "validator_reason", "counterexample", "counterexample_accepted",
    "suite_label", "missing_cases", "suggested_input", "comment", "time_spent_ms",
    "claimed_at", "submitted_at",
    "final_validator_label", "final_validator_reason", "final_counterexample", "final_suite_label",
    "adjudication_note", "adjudicated_by",
]
# Free text a spreadsheet could read as a formula; inputs (counterexamples) are kept exact.
_FREE_TEXT = {"comment", "missing_cases", "adjudication_note", "problem_title", "study"}


def export_rows(study: Study, *, viewer: Any) -> Iterator[dict[str, Any]]:
    _check(study, viewer)
    annotations = (
        Annotation.objects.filter(item__study=study)
        .select_related("item__problem", "item__validator", "item__suite", "item__adjudication__adjudicated_by",
                        "annotator")
        .order_by("item__position", "annotator__username")
    )
    for a in annotations:
        item = a.item
        adj = getattr(item, "adjudication", None)
        yield {
            "study_id": study.pk,
            "study": study.name,
            "item_number": item.position + 1,  # as the pages number items
            "item_index_0based": item.position,
            "problem_id": item.problem_id,
            "problem_pid": item.problem.pid,
            "problem_title": item.problem.title,
            "validator_version": item.validator.version if item.validator else None,
            "suite_id": item.suite_id,
            "suite_version": item.suite.version if item.suite else None,
            "annotator": a.annotator.username,
            "status": a.status,
            "validator_label": a.validator_label,
            "validator_reason": a.validator_reason,
            "counterexample": a.counterexample,
            "counterexample_accepted": a.counterexample_accepted,
            "suite_label": a.suite_label,
            "missing_cases": a.missing_cases,
            "suggested_input": a.suggested_input,
            "comment": a.comment,
            "time_spent_ms": a.time_spent_ms,
            "claimed_at": a.claimed_at.isoformat() if a.claimed_at else None,
            "submitted_at": a.submitted_at.isoformat() if a.submitted_at else None,
            "final_validator_label": adj.validator_label if adj else "",
            "final_validator_reason": adj.validator_reason if adj else "",
            "final_counterexample": adj.counterexample if adj else "",
            "final_suite_label": adj.suite_label if adj else "",
            "adjudication_note": adj.note if adj else "",
            "adjudicated_by": adj.adjudicated_by.username if adj and adj.adjudicated_by else "",
        }


def _cell(key: str, value: Any) -> Any:
    if key in _FREE_TEXT and isinstance(value, str) and value[:1] in ("=", "+", "@", "\t", "\r"):
        return "'" + value
    return "" if value is None else value


def export_csv(study: Study, *, viewer: Any) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=EXPORT_FIELDS)
    writer.writeheader()
    for row in export_rows(study, viewer=viewer):
        writer.writerow({k: _cell(k, v) for k, v in row.items()})
    return out.getvalue()


def export_jsonl(study: Study, *, viewer: Any) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in export_rows(study, viewer=viewer))
