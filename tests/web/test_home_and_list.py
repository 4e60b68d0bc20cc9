from __future__ import annotations

import pytest
from django.test import Client

from problems.models import DifficultyLabel, Problem, Tag
from tests.web.conftest import HTMX, World, htmx, many_problems

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def test_home_shows_totals_charts_and_recent_runs(user_client: Client, world: World) -> None:
    response = user_client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html
    assert "Generation outcomes" in html and "No valid oracle" in html
    assert 'class="chart"' in html  # server-side SVG, readable without hovering
    assert "Tests per kind across active suites" in html
    assert f"/runs/{world.run.pk}/" in html


def test_home_recent_runs_partial_refreshes_alone(user_client: Client, world: World) -> None:
    response = user_client.get("/", **htmx("recent-runs"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and 'id="recent-runs"' in html
    assert f"#{world.run.pk}" in html


def test_anonymous_is_sent_to_login(client: Client, world: World) -> None:
    for url in ("/", "/problems/", f"/problems/{world.problem.pk}/", f"/runs/{world.run.pk}/"):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_anonymous_htmx_gets_a_login_redirect_header(client: Client, world: World) -> None:
    response = client.get("/problems/", **htmx("problem-table"))
    assert response.status_code == 401 and "/accounts/login/" in response["HX-Redirect"]


def test_public_read_opens_pages_but_not_actions(client: Client, world: World, settings) -> None:
    settings.HARDTESTS_PUBLIC_READ = True
    assert client.get(f"/problems/{world.problem.pk}/verdicts/").status_code == 200
    response = client.post(f"/problems/{world.problem.pk}/verdicts/judge/", {"suite": world.suite.pk})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_login_page_is_styled_and_logs_in(client: Client, db: None) -> None:
    from tests.factories import UserFactory

    UserFactory(username="alice")
    page = client.get("/accounts/login/")
    assert page.status_code == 200 and b"Log in" in page.content
    response = client.post("/accounts/login/", {"username": "alice", "password": "pw"})
    assert response.status_code == 302 and response["Location"] == "/"


def test_list_full_page_and_htmx_table_partial(user_client: Client, world: World) -> None:
    full = user_client.get("/problems/")
    assert full.status_code == 200
    assert b"<html" in full.content and b'hx-get="/problems/"' in full.content
    assert b'hx-trigger="input changed delay:300ms, change"' in full.content
    partial = user_client.get("/problems/?q=sum", **htmx("problem-table"))
    html = partial.content.decode()
    assert "<html" not in html and html.lstrip().startswith('<section id="problem-table"')
    assert "cf/1A" in html


def test_titles_are_escaped_in_the_list(user_client: Client, world: World) -> None:
    html = user_client.get("/problems/").content.decode()
    assert "Sum of two &lt;b&gt;numbers&lt;/b&gt;" in html
    assert "<b>numbers</b>" not in html


@pytest.mark.parametrize(
    ("query", "expected", "absent"),
    [
        ("platform=codeforces", "cf/1A", "bulk/0001"),
        ("platform=atcoder", "bulk/0001", "cf/1A"),
        ("difficulty=codeforces:800", "cf/1A", "bulk/0001"),
        ("difficulty=codeforces:", "cf/1A", "bulk/0001"),
        ("tag=math", "cf/1A", "bulk/0001"),
        ("suite=active", "cf/1A", "bulk/0001"),
        ("suite=none", "bulk/0001", "cf/1A"),
        ("judge=yes", "cf/1A", "bulk/0001"),
        ("judge=no", "bulk/0001", "cf/1A"),
        ("q=statement+number+7", "bulk/0007", "bulk/0001"),
        ("q=STATE", "bulk/0003", "cf/1A"),
        ("q=bulk/001", "bulk/0012", "bulk/0020"),
        ("q=numbers", "cf/1A", "bulk/0001"),
    ],
)
def test_list_filters_and_search(user_client: Client, world: World, query: str, expected: str, absent: str) -> None:
    many_problems(30)
    html = user_client.get(f"/problems/?{query}", **htmx("problem-table")).content.decode()
    assert expected in html
    assert absent not in html


def test_failed_suite_status_means_failed_without_an_active_suite(user_client: Client, world: World) -> None:
    from problems.models import TestSuite
    from problems.services import suite_create, suite_fail

    lonely = Problem.objects.create(source="x", pid="x/1", title="Only failures", statement="s")
    suite_fail(suite=suite_create(problem=lonely, origin=TestSuite.Origin.GENERATED), note="boom")
    html = user_client.get("/problems/?suite=failed").content.decode()
    assert "x/1" in html and "cf/1A" not in html  # cf/1A has a failed suite but also an active one


def test_search_stays_correct_after_edits(user_client: Client, world: World) -> None:
    world.problem.statement = "Completely different zebra text"
    world.problem.save()
    assert "cf/1A" in user_client.get("/problems/?q=zebra").content.decode()
    assert "cf/1A" not in user_client.get("/problems/?q=numbers+read").content.decode()
    extra = Problem.objects.create(source="x", pid="x/okapi", title="Okapi", statement="an okapi")
    assert "x/okapi" in user_client.get("/problems/?q=okapi").content.decode()
    extra.delete()
    assert "No problem matches “okapi”" in user_client.get("/problems/?q=okapi").content.decode()


def test_search_falls_back_to_a_scan_without_the_index(user_client: Client, world: World, monkeypatch) -> None:
    import problems.selectors.search as selectors

    monkeypatch.setattr(selectors, "_sqlite_fts_ready", lambda: False)
    assert "cf/1A" in user_client.get("/problems/?q=numb").content.decode()


def test_sorting_and_pagination_keep_the_filters_in_the_url(user_client: Client, db: None) -> None:
    many_problems(120)
    first = user_client.get("/problems/?platform=atcoder&sort=-pid").content.decode()
    assert first.index("bulk/0119") < first.index("bulk/0118")
    assert "Page 1 of 3" in first
    assert "?platform=atcoder&amp;sort=-pid&amp;page=2" in first
    second = user_client.get("/problems/?platform=atcoder&sort=-pid&page=2", **htmx("problem-table")).content.decode()
    assert "bulk/0069" in second and "bulk/0119" not in second
    last = user_client.get("/problems/?page=999").content.decode()
    assert "Page 3 of 3" in last


def test_an_unknown_tag_matches_nothing_and_says_so(user_client: Client, world: World) -> None:
    response = user_client.get("/problems/?tag=nope&suite=weird&page=x")
    html = response.content.decode()
    assert response.status_code == 200 and "cf/1A" not in html
    assert "No problem has the tag “nope”: nothing matches." in html
    # One empty-state message, not two (the table's own empty row stays out).
    assert html.count("nothing matches") == 1 and "No problems match" not in html
    # A known tag with invalid other values (suite=weird, page=x ignored) still lists its problems.
    assert "cf/1A" in user_client.get("/problems/?tag=math&suite=weird&page=x").content.decode()


def test_per_page_sets_the_page_size_and_stays_in_the_links(user_client: Client, db: None) -> None:
    many_problems(120)
    html = user_client.get("/problems/?per_page=25").content.decode()
    assert "Showing 1–25 of 120 problems" in html and "Page 1 of 5" in html
    assert "per_page=25&amp;page=2" in html
    assert "Showing 1–50 of 120" in user_client.get("/problems/?per_page=7").content.decode()  # not offered: default


def test_list_query_count_does_not_grow_with_rows(user_client: Client, world: World, django_assert_max_num_queries) -> None:
    problems = many_problems(60)
    tag = Tag.objects.create(name="graphs")
    for p in problems:
        p.tags.add(tag)
        DifficultyLabel.objects.create(problem=p, source="atcoder", level="300")
    user_client.get("/problems/")  # warm the facet cache
    with django_assert_max_num_queries(10):
        assert user_client.get("/problems/?tag=graphs&q=bulk").status_code == 200
    with django_assert_max_num_queries(10):
        assert user_client.get("/problems/", **HTMX).status_code == 200


def test_search_index_repairs_itself_after_a_table_remake(user_client: Client, world: World) -> None:
    from django.db import connection

    from problems.selectors import _sqlite_fts_ready, search_index_install

    if connection.vendor != "sqlite":
        pytest.skip("SQLite triggers only")
    search_index_install()
    with connection.cursor() as cursor:  # what Django's table remake does to the triggers
        cursor.execute("DROP TRIGGER problems_problem_fts_ai")
    Problem.objects.create(source="x", pid="x/gnu", title="Gnu", statement="a gnu")
    from django.core.cache import cache

    cache.clear()
    assert not _sqlite_fts_ready()
    assert "cf/1A" in user_client.get("/problems/?q=numbers").content.decode()
    assert "x/gnu" in user_client.get("/problems/?q=gnu").content.decode()  # the slow path is still right
    assert search_index_install() is True
    assert _sqlite_fts_ready() and search_index_install() is False
    assert "x/gnu" in user_client.get("/problems/?q=gnu").content.decode()  # rebuilt index has it


def test_filtered_counts_stop_at_the_cap_and_paging_goes_on(user_client: Client, db: None) -> None:
    from problems.selectors import COUNT_CAP

    many_problems(COUNT_CAP + 60)
    html = user_client.get("/problems/?platform=atcoder").content.decode()
    assert f"of {COUNT_CAP:,}+ problems" in html and "Next" in html and "of 21" not in html
    last = user_client.get(f"/problems/?platform=atcoder&page={COUNT_CAP // 50 + 2}").content.decode()
    assert f"bulk/{COUNT_CAP + 59:04d}" in last and 'rel="next"' not in last
    assert "Page 1 of 22" in user_client.get("/problems/").content.decode()  # unfiltered: exact
