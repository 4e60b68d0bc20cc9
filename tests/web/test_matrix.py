from __future__ import annotations

import pytest
from django.test import Client

from problems.models import JudgingTask, Solution
from tests.factories import SolutionFactory
from tests.web.conftest import World, htmx

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _url(world: World) -> str:
    return f"/problems/{world.problem.pk}/verdicts/"


def test_matrix_cells_show_verdict_glyph_time_and_memory(user_client: Client, world: World) -> None:
    html = user_client.get(_url(world)).content.decode()
    assert "<html" in html and 'id="matrix"' in html
    assert 'class="cell v-ac"><b>✓</b> AC<small>12 ms · 3.3 M</small>' in html
    assert 'class="cell v-wa"><b>✗</b> WA<small>9 ms · 2.9 M</small>' in html
    assert "oracle.py" in html and "good.py" in html and "bad.py" in html
    assert "hx-trigger" not in html.split('id="matrix"')[1].split(">")[0]  # nothing pending: no polling
    assert "Judge all solutions" not in html  # readers cannot judge


def test_matrix_partial_stops_polling_with_286_when_nothing_is_pending(user_client: Client, world: World) -> None:
    response = user_client.get(_url(world), **htmx("matrix"))
    assert response.status_code == 286
    assert "<html" not in response.content.decode()


def test_matrix_polls_while_judging_is_pending(user_client: Client, world: World) -> None:
    JudgingTask.objects.create(solution=world.good, suite=world.suite, status=JudgingTask.Status.RUNNING)
    full = user_client.get(_url(world)).content.decode()
    assert 'hx-trigger="every 2s"' in full and "1 solution queued or running" in full
    response = user_client.get(_url(world), **htmx("matrix"))
    assert response.status_code == 200 and b'hx-trigger="every 2s"' in response.content
    assert b"running" in response.content


def test_matrix_shows_failed_judging(user_client: Client, world: World) -> None:
    JudgingTask.objects.create(solution=world.good, suite=world.suite, status=JudgingTask.Status.FAILED,
                               error="worker died")
    html = user_client.get(_url(world)).content.decode()
    assert "judging failed" in html and "worker died" in html


def test_matrix_for_another_suite_version(user_client: Client, world: World) -> None:
    html = user_client.get(f"{_url(world)}?suite={world.old_suite.pk}").content.decode()
    assert f'value="{world.old_suite.pk}" selected' in html


def test_judge_all_queues_every_runnable_solution(maintainer_client: Client, world: World) -> None:
    SolutionFactory(problem=world.problem, role=Solution.Role.CANDIDATE, language="python2", code="print 1\n",
                    name="old.py")
    response = maintainer_client.post(f"{_url(world)}judge/", {"suite": world.suite.pk})
    assert response.status_code == 302 and response["Location"].endswith(f"/verdicts/?suite={world.suite.pk}")
    tasks = JudgingTask.objects.filter(suite=world.suite)
    assert tasks.count() == 3  # the python2 solution is not runnable
    page = maintainer_client.get(response["Location"]).content.decode()
    assert "Queued judging of 3 solutions" in page and 'hx-trigger="every 2s"' in page


def test_judge_all_refuses_others(client: Client, annotator_client: Client, user_client: Client, world: World) -> None:
    url = f"{_url(world)}judge/"
    assert annotator_client.post(url, {"suite": world.suite.pk}).status_code == 403
    assert user_client.post(url, {"suite": world.suite.pk}).status_code == 403
    anonymous = client.post(url, {"suite": world.suite.pk})
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert not JudgingTask.objects.exists()


def test_judge_all_needs_post_and_csrf(world: World) -> None:
    from tests.factories import maintainer

    client = Client(enforce_csrf_checks=True)
    client.force_login(maintainer())
    assert client.get(f"{_url(world)}judge/").status_code == 405
    assert client.post(f"{_url(world)}judge/", {"suite": world.suite.pk}).status_code == 403
    assert not JudgingTask.objects.exists()


def test_matrix_query_count_is_bounded(user_client: Client, world: World, django_assert_max_num_queries) -> None:
    from problems.services import verdict_record

    ordinals = list(world.suite.tests.values_list("ordinal", flat=True))
    for i in range(25):
        s = SolutionFactory(problem=world.problem, role=Solution.Role.CANDIDATE, code=f"print({i})\n", name=f"c{i}")
        verdict_record(solution=s, suite=world.suite, verdict="WA", passed=0, total=len(ordinals), complete=True,
                       results=[{"ordinal": o, "verdict": "TLE", "time_ms": 1000, "memory_kb": 100} for o in ordinals])
        JudgingTask.objects.create(solution=s, suite=world.suite, status=JudgingTask.Status.DONE)
    with django_assert_max_num_queries(12):
        assert user_client.get(_url(world)).status_code == 200
    with django_assert_max_num_queries(12):
        assert user_client.get(_url(world), **htmx("matrix")).status_code == 286
