"""Reads that the study pages share, and the visibility rules (who may see what)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import nh3
from django.db.models import Count, Q, QuerySet
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from core.permissions import is_maintainer
from problems.judging import suite_for_judging
from problems.markdown import render_markdown
from problems.models import InputValidator, Problem, TestCase, TestSuite
from review.models import Annotation, Study, StudyItem

PREVIEW_TESTS_PER_KIND = 12
# Display order of test kinds on the annotation page: the ones people write first.
KIND_ORDER = ["public", "direct", "regular", "stratified", "hacking", "imported"]


# --- visibility -------------------------------------------------------------------------


def studies_visible_to(user: Any) -> QuerySet[Study]:
    """Maintainers see every study; annotators only the non-draft studies they are in."""
    studies = Study.objects.annotate(n_items=Count("items", distinct=True))
    if is_maintainer(user):
        return studies
    if not getattr(user, "is_authenticated", False):
        return studies.none()
    return studies.filter(annotators=user).exclude(status=Study.Status.DRAFT)


def is_member(study: Study, user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False)) and study.annotators.filter(pk=user.pk).exists()


def can_view_study(study: Study, user: Any) -> bool:
    if is_maintainer(user):
        return True
    return study.status != Study.Status.DRAFT and is_member(study, user)


def can_label(study: Study, user: Any) -> bool:
    return study.status == Study.Status.OPEN and is_member(study, user)


def can_see_results(study: Study, user: Any) -> bool:
    """Blindness: annotators see others' labels and aggregates only after closing, or when opened."""
    if is_maintainer(user):
        return True
    if not can_view_study(study, user):
        return False
    return study.status == Study.Status.CLOSED or study.results_opened


# --- problem selection ------------------------------------------------------------------


def problems_for_filter(spec: dict[str, Any]) -> QuerySet[Problem]:
    problems = Problem.objects.all()
    if spec.get("source"):
        problems = problems.filter(source=spec["source"])
    if spec.get("platform"):
        problems = problems.filter(platform=spec["platform"])
    if spec.get("tag"):
        problems = problems.filter(tags__name=spec["tag"])
    if spec.get("difficulty"):
        problems = problems.filter(difficulties__level=spec["difficulty"])
    if spec.get("search"):
        term = spec["search"]
        problems = problems.filter(Q(title__icontains=term) | Q(pid__icontains=term))
    problems = problems.distinct().order_by("pk")
    limit = spec.get("limit")
    if limit:
        problems = problems[: int(limit)]
    return problems


def study_problems(study: Study) -> list[Problem]:
    if study.selection == Study.Selection.LIST:
        return list(study.problems.order_by("pk"))
    return list(problems_for_filter(study.problem_filter or {}))


def latest_validator(problem: Problem) -> InputValidator | None:
    return InputValidator.objects.filter(problem=problem).order_by("-version").first()


def frozen_parts(study: Study, problem: Problem) -> tuple[InputValidator | None, TestSuite | None] | None:
    """What an item pins (validator, suite), or None when the problem lacks what the study asks about."""
    validator = latest_validator(problem) if study.asks_validator else None
    suite = suite_for_judging(problem) if study.asks_suite else None
    if study.asks_validator and validator is None:
        return None
    if study.asks_suite and suite is None:
        return None
    if suite is not None and validator is None:
        # A suite question still benefits from seeing the validator that built the suite.
        validator = suite.validator or latest_validator(problem)
    return validator, suite


# --- the annotation page ----------------------------------------------------------------


def markdown_html(text: str) -> SafeString:
    # render_markdown sanitises with nh3, so marking the result safe is what it is for.
    return mark_safe(render_markdown(text))  # noqa: S308


_FORMATTER = HtmlFormatter(cssclass="highlight", linenos=False)


def highlighted_python(code: str) -> SafeString:
    """Pygments escapes the code; nh3 then keeps only spans with classes, as a second guard."""
    html = highlight(code or "", PythonLexer(), _FORMATTER)
    cleaned = nh3.clean(html, tags={"div", "pre", "span"}, attributes={"div": {"class"}, "span": {"class"}})
    return mark_safe(_numbered_lines(cleaned))  # noqa: S308


def _numbered_lines(html: str) -> str:
    """Each line of the <pre> in a `span.line`, which the stylesheet numbers with a counter (the
    numbers are generated content: copying the code never copies them). Pygments closes every
    token's span at the end of its line, so splitting at line breaks keeps the markup whole."""
    start, end = html.find("<pre>"), html.rfind("</pre>")
    if start < 0 or end < start:
        return html
    body = html[start + len("<pre>"):end]
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    numbered = "\n".join(f'<span class="line">{line}</span>' for line in lines)
    return f'{html[:start]}<pre class="numbered">{numbered}\n</pre>{html[end + len("</pre>"):]}'



@dataclass
class KindGroup:
    kind: str
    label: str
    count: int
    tests: list[TestCase] = field(default_factory=list)
    page: int = 1
    pages: int = 1

    @property
    def first(self) -> int:
        return (self.page - 1) * PREVIEW_TESTS_PER_KIND + 1 if self.tests else 0

    @property
    def last(self) -> int:
        return self.first + len(self.tests) - 1 if self.tests else 0


def _page_number(value: Any) -> int:
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return 1


def tests_by_kind(suite: TestSuite | None, per_kind: int = PREVIEW_TESTS_PER_KIND,
                  pages: dict[str, Any] | None = None, only: str | None = None) -> list[KindGroup]:
    """Tests grouped by kind, one page of each (every test reachable by paging a group)."""
    if suite is None:
        return []
    labels = dict(TestCase.Kind.choices)
    counts = dict(suite.tests.values_list("kind").annotate(n=Count("pk")).values_list("kind", "n"))
    groups = []
    for kind in sorted(counts, key=lambda k: KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER)):
        if only is not None and kind != only:
            continue
        last_page = max(1, -(-counts[kind] // per_kind))
        page = min(_page_number((pages or {}).get(kind)), last_page)
        tests = list(suite.tests.filter(kind=kind).order_by("ordinal")[(page - 1) * per_kind : page * per_kind])
        groups.append(KindGroup(kind=kind, label=labels.get(kind, kind), count=counts[kind], tests=tests,
                                page=page, pages=last_page))
    return groups


def item_page_context(item: StudyItem, pages: dict[str, Any] | None = None) -> dict[str, Any]:
    problem = item.problem
    return {
        "item": item,
        "problem": problem,
        "statement_html": markdown_html(problem.statement),
        "guidelines_html": markdown_html(item.study.guidelines),
        "validator_html": highlighted_python(item.validator.code) if item.validator else None,
        "kind_groups": tests_by_kind(item.suite, pages=pages),
    }


# --- progress and labels ----------------------------------------------------------------


def study_progress(study: Study) -> dict[str, int]:
    items = study.items.count()
    submitted = Annotation.objects.filter(item__study=study, status=Annotation.Status.SUBMITTED)
    per_item = submitted.values("item_id").annotate(n=Count("pk"))
    complete = sum(1 for row in per_item if row["n"] >= study.overlap)
    return {
        "items": items,
        "labels_needed": items * study.overlap,
        "labels_submitted": submitted.count(),
        "items_complete": complete,
        "claimed": Annotation.objects.filter(item__study=study, status=Annotation.Status.CLAIMED).count(),
    }


def my_progress(study: Study, user: Any) -> tuple[int, int]:
    """(labelled, reachable) for one annotator: what they submitted, against that plus what they
    hold and the items still open to them (not yet at the overlap, not touched by them)."""
    mine = Annotation.objects.filter(item__study=study, annotator=user)
    done = mine.filter(status=Annotation.Status.SUBMITTED).count()
    held = mine.filter(status=Annotation.Status.CLAIMED).count()
    open_items = study.items.filter(claims__lt=study.overlap).exclude(annotations__annotator=user).count()
    return done, done + held + open_items


def my_queues(user: Any) -> list[dict[str, Any]]:
    """Every open study the annotator labels in, with their progress (the "my queue" page)."""
    rows = []
    for study in Study.objects.filter(annotators=user).exclude(status=Study.Status.DRAFT).order_by("-id"):
        done, total = my_progress(study, user)
        held = Annotation.objects.filter(item__study=study, annotator=user, status=Annotation.Status.CLAIMED) \
            .select_related("item").order_by("item__position").first()
        rows.append({"study": study, "done": done, "total": total, "held": held,
                     "percent": round(100 * done / total) if total else 0, "remaining": total - done})
    return rows


def my_annotations(study: Study, user: Any) -> list[Annotation]:
    return list(
        Annotation.objects.filter(item__study=study, annotator=user)
        .select_related("item__problem")
        .order_by("item__position")
    )


def submitted_annotations(study: Study) -> QuerySet[Annotation]:
    return (
        Annotation.objects.filter(item__study=study, status=Annotation.Status.SUBMITTED)
        .select_related("item__problem", "annotator")
        .order_by("item__position", "annotator__username")
    )


def labels_by_item(annotations: Iterable[Annotation], attribute: str) -> dict[int, dict[int, str]]:
    table: dict[int, dict[int, str]] = defaultdict(dict)
    for annotation in annotations:
        label = getattr(annotation, attribute)
        if label:
            table[annotation.item_id][annotation.annotator_id] = label
    return dict(table)
