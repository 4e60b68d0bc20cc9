"""The home page's "what next" panel, which depends on who is looking.

Home is drawn by generation/ (below review in the layers), so review contributes its part as a
template tag rather than an import: annotators see the items waiting for them; maintainers the
next useful step (problems without a suite, an evaluation never run, studies to review).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.db.models import Exists, OuterRef
from django.urls import reverse

from core.permissions import is_maintainer
from problems.models import Problem, TestSuite
from review.evaluation.selectors import report_in_progress
from review.models import EvaluationReport, Study
from review.studies.selectors import my_progress

register = template.Library()


def studies_open(user: Any) -> bool:
    return Study.objects.filter(annotators=user, status=Study.Status.OPEN).exists()


def _annotator_steps(user: Any) -> list[dict[str, str]]:
    waiting, studies = 0, 0
    for study in Study.objects.filter(annotators=user, status=Study.Status.OPEN):
        done, total = my_progress(study, user)
        if total > done:
            waiting += total - done
            studies += 1
    if not waiting:
        # An annotator's first hour: say why the queue is empty rather than show nothing.
        if is_maintainer(user):
            return []
        text = ("Nothing to label right now: every item open to you is labelled." if studies_open(user)
                else "Nothing to label yet: a maintainer adds you to a study, and its items appear in My queue.")
        return [{"text": text, "action": "My queue", "url": reverse("studies:queue")}]
    where = f"{studies} open stud{'y' if studies == 1 else 'ies'}"
    return [{"text": f"{waiting} item{'s' if waiting != 1 else ''} to label in {where}.",
             "action": "Carry on", "url": reverse("studies:queue")}]


def _maintainer_steps() -> list[dict[str, str]]:
    steps = []
    with_suite = TestSuite.objects.filter(problem_id=OuterRef("pk"), origin=TestSuite.Origin.GENERATED,
                                          status__in=[TestSuite.Status.ACTIVE, TestSuite.Status.FAILED])
    missing = Problem.objects.exclude(Exists(with_suite)).count()
    if missing:
        steps.append({"text": f"{missing} problem{'s have' if missing != 1 else ' has'} no generated suite yet.",
                      "action": "See them", "url": reverse("problem_list") + "?suite=none"})
    failed = Problem.objects.filter(suites__origin=TestSuite.Origin.GENERATED, suites__status=TestSuite.Status.FAILED) \
        .exclude(suites__origin=TestSuite.Origin.GENERATED, suites__status=TestSuite.Status.ACTIVE).distinct().count()
    if failed:
        steps.append({"text": f"{failed} problem{'s' if failed != 1 else ''} only {'have' if failed != 1 else 'has'} "
                              "failed suites: read why and regenerate.",
                      "action": "See them", "url": reverse("problem_list") + "?suite=failed"})
    running = report_in_progress()
    if running is not None:
        # One is under way: say so (and where it is) rather than ask for another.
        steps.append({"text": f"Evaluation #{running.pk} is running ({running.get_status_display().lower()}, "
                              f"{running.percent}%): its figures appear when it finishes.",
                      "action": "Follow it", "url": reverse("evaluation:page")})
    elif not EvaluationReport.objects.filter(status=EvaluationReport.Status.DONE).exists():
        steps.append({"text": "No evaluation has run: measure the suites' precision and recall against the "
                              "candidates with known verdicts.", "action": "Evaluate", "url": reverse("evaluation:page")})
    if not Study.objects.exists():
        steps.append({"text": "No human validation study yet: have annotators check validators and suites.",
                      "action": "New study", "url": reverse("studies:create")})
    return steps


@register.inclusion_tag("review/_next_steps.html", takes_context=True)
def next_steps(context: dict[str, Any]) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"steps": []}
    steps = _annotator_steps(user)
    if is_maintainer(user):
        steps += _maintainer_steps()
    return {"steps": steps[:4]}
