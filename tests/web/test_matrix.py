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
    assert '<b>✓</b> AC<small>12 ms · 3.3 M</small>' in html
    assert '<b>✗</b> WA<small>9 ms · 2.9 M</small>' in html
    # Full kind names, not "dire"/"hack".
    assert "Hacking (HackGen)</span>" in html and "Regular (RPGen)</span>" in html
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
    response = client.get(f"{_url(world)}judge/")  # typed in the address bar: back to the tab
    assert response.status_code == 303 and response["Location"] == _url(world)
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


def _record_failures(world: World, solution: Solution, failing: dict[int, str]) -> None:
    from problems.blobs import blob_put
    from problems.services import verdict_record

    results = []
    for ordinal in world.suite.tests.order_by("ordinal").values_list("ordinal", flat=True):
        if ordinal in failing:
            sha, size = blob_put(failing[ordinal])
            results.append({"ordinal": ordinal, "verdict": "WA", "time_ms": 7, "wall_ms": 9, "memory_kb": 2048,
                            "output_sha256": sha, "output_size": size, "note": "wrong answer on line 1"})
        else:
            results.append({"ordinal": ordinal, "verdict": "AC", "time_ms": 5, "wall_ms": 6, "memory_kb": 2048})
    verdict_record(solution=solution, suite=world.suite, verdict="WA" if failing else "AC",
                   passed=len(results) - len(failing), total=len(results), complete=True, results=results)


def test_cell_opens_with_input_expected_actual_and_diff(user_client: Client, world: World) -> None:
    test = world.suite.tests.order_by("ordinal")[1]
    _record_failures(world, world.good, {test.ordinal: "41\n"})
    url = f"{_url(world)}{world.suite.pk}/{world.good.pk}/{test.ordinal}/"
    matrix = user_client.get(_url(world)).content.decode()
    assert f'hx-get="{url}"' in matrix
    html = user_client.get(url, **htmx("cell-detail")).content.decode()
    assert "<html" not in html
    assert test.input_preview.strip() in html and test.output_preview.strip() in html
    assert '<pre class="data actual-output">41\n</pre>' in html
    assert 'class="differs"' in html and "wrong answer on line 1" in html and "7 ms CPU" in html
    assert f"{url}output/" in html
    download = user_client.get(f"{url}output/")
    assert download.content == b"41\n"
    # good.py's gold verdict is AC, so failing a test contradicts it.
    assert world.good.gold_verdict == Solution.GoldVerdict.AC and "≠ gold: this program" in html
    # The full page (no JS) shows the matrix with the panel filled.
    full = user_client.get(url).content.decode()
    assert "<html" in full and '<pre class="data actual-output">41\n</pre>' in full


def test_failing_only_and_contradicts_gold_filters(user_client: Client, world: World) -> None:
    tests = list(world.suite.tests.order_by("ordinal"))
    # The oracle (known correct) fails tests[2]: that test contradicts gold.
    _record_failures(world, world.oracle, {tests[2].ordinal: "0\n"})
    all_rows = user_client.get(_url(world)).content.decode()
    assert all_rows.count('<th scope="row"') == len(tests)
    failing = user_client.get(f"{_url(world)}?show=failing").content.decode()
    # bad.py fails every test, so "failing only" keeps them all.
    assert failing.count('<th scope="row"') == len(tests) and f"{len(tests)} tests failed" in failing
    contra = user_client.get(f"{_url(world)}?show=contradicts").content.decode()
    assert contra.count('<th scope="row"') == 1
    assert f'<span class="num">{tests[2].ordinal + 1}</span>' in contra.split("<tbody>")[1]  # 1-based on the page
    assert '<tr class="contradicts">' in contra and "1 test failed by a program known to be correct" in contra
    # Columns: the oracle (gold correct, judged WA) contradicts; bad.py (gold WA, judged WA) does not.
    head = contra.split("<tbody>")[0]
    assert head.count('class="sol-head contradicts"') == 1


def test_judging_records_the_failing_output_and_message(world: World) -> None:
    from problems.blobs import blob_get
    from problems.judging import solution_judge

    world.bad.code = "print(7)\n"
    world.bad.save()
    verdict = solution_judge(solution=world.bad, suite=world.suite, mode="all")
    failing = [r for r in verdict.results if r["verdict"] != "AC"]
    assert failing and all(blob_get(r["output_sha256"]) == b"7\n" for r in failing)
    assert all("output_sha256" not in r for r in verdict.results if r["verdict"] == "AC")
