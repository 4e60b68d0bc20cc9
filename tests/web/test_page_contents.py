"""What the runs tab, the problems list (search, sort), the admin and the problem page show,
asserted on numbers and contents."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from generation.models import GenerationRun
from generation.recorder import RunRecorder
from tests.web.conftest import World

pytestmark = pytest.mark.django_db


def test_runs_tab_counts_kept_tests_once_and_lists_newest_first(user_client: Client, world: World) -> None:
    counts = {"direct": {"generated": 30, "kept": 20}, "hacking": {"generated": 50, "kept": 40},
              "total": {"generated": 80, "kept": 60}}
    newest = GenerationRun.objects.create(problem=world.problem, mode=GenerationRun.Mode.FROM_KIT,
                                          status=GenerationRun.Status.SUCCEEDED, counts=counts)
    html = user_client.get(f"/problems/{world.problem.pk}/runs/").content.decode()
    rows = html.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    first = rows[0]
    assert f"#{newest.pk}<" in first
    kept = re.findall(r'<td class="num">(\d+|—)</td>', first)[0]
    assert kept == "60"  # not 120
    ids = [int(m) for m in re.findall(r"/runs/(\d+)/", html.split("<tbody>")[1])]
    assert ids == sorted(ids, reverse=True)


def test_queued_stage_counts_from_when_the_run_was_created(world: World) -> None:
    run = GenerationRun.objects.create(problem=world.problem, mode=GenerationRun.Mode.FROM_KIT)
    GenerationRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=150))
    run.refresh_from_db()
    recorder = RunRecorder(run)
    recorder.stage(GenerationRun.Stage.LLM_VALIDATOR)
    assert 150 <= recorder.stage_seconds["queued"] < 200


@pytest.mark.postgres
@pytest.mark.parametrize("query", ["1A", "1a", "f/1"])
def test_search_finds_a_fragment_of_an_id(user_client: Client, world: World, query: str) -> None:
    html = user_client.get("/problems/", {"q": query}).content.decode()
    assert f"/problems/{world.problem.pk}/" in html and "No problems match." not in html


@pytest.mark.postgres
def test_a_too_long_query_says_so_instead_of_being_ignored(user_client: Client, world: World) -> None:
    html = user_client.get("/problems/", {"q": "x" * 5000}).content.decode()
    assert "The search is 5,000 characters long; at most 200 are searched." in html


def test_sort_menu_has_one_id_entry(user_client: Client, world: World) -> None:
    html = user_client.get("/problems/").content.decode()
    options = re.findall(r"<option[^>]*>(Sort: [^<]*)</option>", html)
    assert [o.lower() for o in options].count("sort: id") == 1
    assert len(options) == len(set(o.lower() for o in options))


def test_admin_says_problem_aliases(client: Client) -> None:
    from django.contrib.auth import get_user_model

    admin = get_user_model().objects.create_superuser("root", "r@example.com", "pw")
    client.force_login(admin)
    html = client.get("/admin/").content.decode()
    assert "Problem aliases" in html and "aliass" not in html.lower()


def test_suite_table_names_oracles_by_file_and_language(user_client: Client, world: World) -> None:
    world.suite.tests.update(oracle_id=world.oracle.pk)
    html = user_client.get(f"/problems/{world.problem.pk}/suite/?suite={world.suite.pk}").content.decode()
    assert f"oracle.py · {world.oracle.language}" in html and f"oracle #{world.oracle.pk}" not in html
    assert '<section id="suite-tests" class="wrap-on">' in html  # wrapped by default


def test_samples_are_not_shown_twice(user_client: Client, world: World) -> None:
    world.problem.samples = [{"input": "3 4\n", "output": "7\n"}]
    world.problem.statement = "Add two numbers.\n\nExample input:\n\n    3 4\n\nOutput: 7"
    world.problem.save()
    html = user_client.get(f"/problems/{world.problem.pk}/").content.decode()
    assert '<h3 class="h5">Samples</h3>' not in html
    world.problem.statement = "Add two numbers."
    world.problem.save()
    html = user_client.get(f"/problems/{world.problem.pk}/").content.decode()
    assert '<h3 class="h5">Samples</h3>' in html
