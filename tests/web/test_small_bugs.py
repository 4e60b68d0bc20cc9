"""Round-2 small bugs, asserted on numbers and contents."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from generation.models import GenerationRun
from generation.runs import RunRecorder
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


@pytest.mark.parametrize("query", ["1A", "1a", "f/1"])
def test_search_finds_a_fragment_of_an_id(user_client: Client, world: World, query: str) -> None:
    html = user_client.get("/problems/", {"q": query}).content.decode()
    assert f"/problems/{world.problem.pk}/" in html and "No problems match." not in html


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
