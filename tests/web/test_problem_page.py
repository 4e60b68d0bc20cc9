from __future__ import annotations

import io
import zipfile

import pytest
from django.test import Client

from problems.models import TestCase
from tests.web.conftest import World, htmx

pytestmark = pytest.mark.django_db

TABS = ["suite", "kit", "solutions", "verdicts", "runs"]


@pytest.mark.parametrize("tab", TABS)
def test_each_tab_is_a_full_page_and_an_htmx_partial(user_client: Client, world: World, tab: str) -> None:
    url = f"/problems/{world.problem.pk}/{tab}/"
    full = user_client.get(url)
    assert full.status_code == 200
    html = full.content.decode()
    assert "<html" in html and 'class="statement-box"' in html and 'id="problem-tabs"' in html
    partial = user_client.get(url, **htmx("problem-tabs"))
    part = partial.content.decode()
    assert partial.status_code == 200
    assert "<html" not in part and "statement-box" not in part
    assert part.lstrip().startswith('<div id="problem-tabs">')
    assert f'href="{url}" hx-get="{url}"' in part and 'aria-current="page"' in part


def test_history_restore_gets_the_full_page(user_client: Client, world: World) -> None:
    response = user_client.get(f"/problems/{world.problem.pk}/kit/", HTTP_HX_REQUEST="true",
                               HTTP_HX_HISTORY_RESTORE_REQUEST="true", HTTP_HX_TARGET="problem-tabs")
    assert b"<html" in response.content


def test_statement_is_markdown_with_math_and_sanitised(user_client: Client, world: World) -> None:
    html = user_client.get(f"/problems/{world.problem.pk}/").content.decode()
    assert '<span class="math-inline">\\(a_i\\)</span>' in html
    assert "<strong>bold</strong>" in html
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "vendor/katex/auto-render.min.js" in html and "js/math.js" in html
    assert "codeforces: 800" in html and "math" in html and "1000 ms" in html
    # Samples shown, escaped, in monospace blocks.
    assert '<pre class="data">1 2\n</pre>' in html


def test_no_inline_scripts_and_a_csp_header(user_client: Client, world: World) -> None:
    response = user_client.get(f"/problems/{world.problem.pk}/")
    assert "script-src 'self'" in response["Content-Security-Policy"]
    html = response.content.decode()
    for chunk in html.split("<script")[1:]:
        assert chunk.lstrip().startswith("src=")


def test_suite_tab_groups_tests_by_kind_with_previews_and_versions(user_client: Client, world: World) -> None:
    html = user_client.get(f"/problems/{world.problem.pk}/suite/").content.decode()
    assert f"Suite v{world.suite.version}" in html
    assert "Hacking (HackGen)" in html and "Regular (RPGen)" in html
    assert "v1" in html and "v3" in html and "Failed" in html
    assert "gen_hacking" in html
    assert f"/problems/{world.problem.pk}/suites/{world.suite.pk}.zip" in html


def test_suite_tests_partial_filters_by_kind(user_client: Client, world: World) -> None:
    url = f"/problems/{world.problem.pk}/suite/?suite={world.suite.pk}&kind=regular"
    html = user_client.get(url, **htmx("suite-tests")).content.decode()
    assert html.lstrip().startswith('<section id="suite-tests" class="wrap-on">')
    assert html.count('class="kind kind-regular"') == 3 and "kind-hacking" not in html


def test_older_suite_version_can_be_shown(user_client: Client, world: World) -> None:
    html = user_client.get(f"/problems/{world.problem.pk}/suite/?suite={world.old_suite.pk}").content.decode()
    assert f"Suite v{world.old_suite.version}" in html and "Superseded" in html


def test_suite_diff_counts_tests_by_hash_and_verdict_changes(user_client: Client, world: World) -> None:
    url = f"/problems/{world.problem.pk}/suite/compare/?a={world.old_suite.pk}&b={world.suite.pk}"
    part = user_client.get(url, **htmx("suite-diff")).content.decode()
    assert part.lstrip().startswith('<section id="suite-diff"')
    # old: direct 0,1,2 + hacking 10,11; new: direct 1,2 + hacking 10,11 + regular 20,21,22
    assert "+3 added" in part and "−1 removed" in part and "4 unchanged" in part
    assert "bad.py" in part and "changed" in part
    full = user_client.get(url)
    assert b"<html" in full.content and b"+3 added" in full.content


def test_download_one_test_and_the_whole_suite(user_client: Client, world: World) -> None:
    test = world.suite.tests.get(ordinal=0)
    body = user_client.get(f"/problems/{world.problem.pk}/tests/{test.pk}/input/")
    assert body.status_code == 200 and body.content == b"1 2\n"
    assert "attachment" in body["Content-Disposition"]
    out = user_client.get(f"/problems/{world.problem.pk}/tests/{test.pk}/output/")
    assert out.content == b"3\n"
    assert user_client.get(f"/problems/{world.problem.pk}/tests/{test.pk}/secret/").status_code == 404
    other = world.old_suite.tests.first()
    assert user_client.get(f"/problems/{world.problem.pk + 99}/tests/{other.pk}/input/").status_code == 404
    response = user_client.get(f"/problems/{world.problem.pk}/suites/{world.suite.pk}.zip")
    assert response.streaming and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = archive.namelist()
    assert len([n for n in names if n.endswith(".in")]) == world.suite.test_count
    assert archive.read("tests/0000.in") == b"1 2\n" and archive.read("tests/0000.out") == b"3\n"
    assert "manifest.json" in names


def test_kit_tab_highlights_code_and_lists_versions(user_client: Client, world: World) -> None:
    html = user_client.get(f"/problems/{world.problem.pk}/kit/").content.decode()
    assert '<div class="highlight">' in html and '<span class="k">def</span>' in html
    assert "validate_input" in html and "output_judging_function" in html
    assert "gen_hacking_input_big" in html and "Kit versions" in html and "fake-model" in html
    assert "Edit the validator" not in html  # only for maintainers


def test_kit_tab_offers_the_edit_form_to_maintainers(maintainer_client: Client, world: World) -> None:
    html = maintainer_client.get(f"/problems/{world.problem.pk}/kit/").content.decode()
    assert "Edit the validator" in html and f'action="/problems/{world.problem.pk}/kit/edit/"' in html
    assert 'name="csrfmiddlewaretoken"' in html


def test_solutions_tab_and_code_partial(user_client: Client, world: World) -> None:
    html = user_client.get(f"/problems/{world.problem.pk}/solutions/").content.decode()
    assert "Oracles" in html and "Candidates" in html and "oracle.py" in html and "bad.py" in html
    assert "✗ WA" in html and "Reliability" in html and "Gold verdict" in html
    url = f"/problems/{world.problem.pk}/solutions/{world.bad.pk}/"
    part = user_client.get(url, **htmx(f"code-{world.bad.pk}")).content.decode()
    assert "<html" not in part and '<div class="highlight">' in part
    assert "<script>x</script>" not in part and "&lt;script&gt;" in part
    full = user_client.get(url).content.decode()
    assert "<html" in full and '<div class="highlight">' in full


def test_problem_page_query_count_is_bounded(user_client: Client, world: World, django_assert_max_num_queries) -> None:
    from problems.services import NewTest, suite_add_tests, suite_create

    big = suite_create(problem=world.problem, origin="imported")
    suite_add_tests(suite=big, tests=[NewTest(input=f"{i}\n", output=f"{i}\n", kind=TestCase.Kind.IMPORTED)
                                      for i in range(120)])
    for tab in TABS:
        with django_assert_max_num_queries(14):
            assert user_client.get(f"/problems/{world.problem.pk}/{tab}/").status_code == 200


def test_unknown_problem_is_404(user_client: Client, db: None) -> None:
    assert user_client.get("/problems/999999/").status_code == 404
