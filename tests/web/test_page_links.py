"""Problem pages link to pages of apps above `problems` only through problems.page_links, so they
render without those apps; with generation present the links are its URLs."""

from __future__ import annotations

import pytest
from django.test import Client

from problems import page_links
from tests.web.conftest import World

pytestmark = pytest.mark.django_db


def test_problem_pages_link_generation_pages_through_the_registry(maintainer_client: Client, world: World) -> None:
    html = maintainer_client.get(f"/problems/{world.problem.pk}/").content.decode()
    assert f'href="/problems/{world.problem.pk}/regenerate/?mode=from_kit"' in html
    assert f'href="/problems/{world.problem.pk}/runs/"' in html


def test_problem_pages_render_without_the_generation_pages(maintainer_client: Client, world: World,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # As if the generation app were not installed: nobody registered its pages.
    monkeypatch.setattr(page_links, "_registry", {})
    for url in (f"/problems/{world.problem.pk}/", f"/problems/{world.problem.pk}/kit/",
                f"/problems/{world.problem.pk}/suite/"):
        response = maintainer_client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert "/regenerate/" not in html and f"/problems/{world.problem.pk}/runs/" not in html, url
