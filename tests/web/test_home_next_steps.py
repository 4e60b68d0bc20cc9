"""Home depends on who is looking: annotators see the items waiting for them, maintainers the
next useful step."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.factories import ProblemFactory, annotator, maintainer

pytestmark = pytest.mark.django_db


def _home(user) -> str:
    client = Client()
    client.force_login(user)
    return client.get("/").content.decode()


def _steps(html: str) -> list[str]:
    section = html.split('aria-label="What next"', 1)[1].split("</section>", 1)[0] if "What next" in html else ""
    return [re.sub(r"\s+", " ", text).strip() for text in re.findall(r"<span>(.*?)</span>", section)]


def test_an_annotator_sees_how_many_items_wait_and_where_to_carry_on() -> None:
    from tests.review.test_studies_support import ensure_roles, make_problem, make_study

    ensure_roles()
    alice, bob = annotator("alice"), annotator("bob")
    problems = [make_problem(title=f"P{i}") for i in range(3)]
    make_study(problems=problems, annotators=[alice, bob], overlap=2)
    html = _home(alice)
    assert _steps(html) == ["3 items to label in 1 open study."]
    assert 'href="/studies/queue/"' in html.split('aria-label="What next"', 1)[1]
    carol = annotator("carol")  # in no study: told why the queue is empty, not left with nothing
    assert _steps(_home(carol)) == ["Nothing to label yet: a maintainer adds you to a study, and its items appear "
                                    "in My queue."]


def test_a_maintainer_is_shown_the_next_useful_step() -> None:
    ProblemFactory()
    ProblemFactory()
    steps = _steps(_home(maintainer("m")))
    assert steps[0] == "2 problems have no generated suite yet."
    assert any(s.startswith("No evaluation has run") for s in steps)
    assert any(s.startswith("No human validation study yet") for s in steps)
