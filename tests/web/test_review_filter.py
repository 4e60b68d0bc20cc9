"""The problems list's review-status filter and column, which the review app adds to a page
that cannot import it (problems.list_extensions)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from review.models import Adjudication, Annotation, Study, StudyItem
from tests.factories import ProblemFactory, UserFactory
from tests.web.conftest import htmx, many_problems

# One problem in each review state; the pid says which.
NAMES = ["r/none", "r/pending", "r/ok", "r/flag-label", "r/adjudicated-ok", "r/adjudicated-bad", "r/draft"]


@pytest.fixture
def reviews(db: None) -> dict[str, object]:
    names = NAMES
    problems = {n: ProblemFactory(pid=n, title=n) for n in names}
    anna, bob = UserFactory(username="anna"), UserFactory(username="bob")
    open_study = Study.objects.create(name="open", status=Study.Status.OPEN)
    draft = Study.objects.create(name="draft", status=Study.Status.DRAFT)
    items = {}
    for position, name in enumerate(names[1:-1]):
        items[name] = StudyItem.objects.create(study=open_study, problem=problems[name], position=position)
    StudyItem.objects.create(study=draft, problem=problems["r/draft"], position=0)
    submitted = Annotation.Status.SUBMITTED
    # A claim in progress is not a label: r/pending stays pending.
    Annotation.objects.create(item=items["r/pending"], annotator=anna, status=Annotation.Status.CLAIMED)
    Annotation.objects.create(
        item=items["r/ok"],
        annotator=anna,
        status=submitted,
        validator_label="correct",
        suite_label="complete",
    )
    Annotation.objects.create(
        item=items["r/flag-label"], annotator=anna, status=submitted, validator_label="correct"
    )
    Annotation.objects.create(
        item=items["r/flag-label"], annotator=bob, status=submitted, suite_label="incomplete"
    )
    # The adjudication overrides the annotator who flagged it...
    Annotation.objects.create(
        item=items["r/adjudicated-ok"], annotator=anna, status=submitted, validator_label="incorrect"
    )
    Adjudication.objects.create(item=items["r/adjudicated-ok"], validator_label="correct")
    # ...and decides even without any submitted annotation.
    Adjudication.objects.create(item=items["r/adjudicated-bad"], validator_label="incorrect")
    return problems


def _pids(html: str) -> set[str]:
    return set(re.findall(r'class="problem-title">(r/[\w-]+)<', html))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", set(NAMES)),
        ("unreviewed", {"r/none", "r/pending", "r/draft"}),
        ("pending", {"r/pending"}),
        ("reviewed", {"r/ok", "r/flag-label", "r/adjudicated-ok", "r/adjudicated-bad"}),
        ("clean", {"r/ok", "r/adjudicated-ok"}),
        ("flagged", {"r/flag-label", "r/adjudicated-bad"}),
    ],
)
def test_review_status_filter(user_client: Client, reviews: dict, value: str, expected: set[str]) -> None:
    response = user_client.get(f"/problems/?review={value}")
    assert response.status_code == 200
    assert _pids(response.content.decode()) == expected
    # The htmx partial applies the same filter.
    partial = user_client.get(f"/problems/?review={value}", **htmx("problem-table")).content.decode()
    assert _pids(partial) == expected and "<html" not in partial


def test_review_column_and_form_field(user_client: Client, reviews: dict) -> None:
    html = user_client.get("/problems/?sort=pid").content.decode()
    assert '<select name="review"' in html and "Flagged by reviewers" in html
    assert '<th scope="col">Review</th>' in html
    # The last nowrap cell of each row is the review column.
    cells = {}
    for line in html.split("<tbody>")[1].split("</tr>"):
        match = re.search(r'class="problem-title">(r/[\w-]+)<', line)
        if match:
            cells[match.group(1)] = re.findall(r"<td class=\"nowrap\"><span[^>]*>([^<]+)</span></td>", line)[
                -1
            ]
    assert cells == {
        "r/none": "—",
        "r/pending": "in study",
        "r/ok": "reviewed",
        "r/flag-label": "flagged",
        "r/adjudicated-ok": "reviewed",
        "r/adjudicated-bad": "flagged",
        "r/draft": "—",
    }


def test_review_filter_keeps_other_filters_and_unknown_values_are_ignored(
    user_client: Client, reviews: dict
) -> None:
    html = user_client.get("/problems/?review=flagged&q=adjudicated").content.decode()
    assert _pids(html) == {"r/adjudicated-bad"}
    assert _pids(user_client.get("/problems/?review=bogus").content.decode()) == set(reviews)


def test_review_column_costs_one_query(
    user_client: Client, reviews: dict, django_assert_max_num_queries
) -> None:
    problems = many_problems(60)
    study = Study.objects.get(name="open")
    for position, problem in enumerate(problems, start=100):
        StudyItem.objects.create(study=study, problem=problem, position=position)
    user_client.get("/problems/")  # warm the facet cache
    with django_assert_max_num_queries(11):
        assert user_client.get("/problems/?review=pending", **htmx("problem-table")).status_code == 200
    with django_assert_max_num_queries(11):
        assert user_client.get("/problems/").status_code == 200
