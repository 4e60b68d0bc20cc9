"""The display filters every page shares: "(s)" words read as their count says, and a run log's
UTC clock stamps become `<time>` elements the page shows in the reader's time zone."""

from __future__ import annotations

import re

import pytest
from django.template import Context, Template
from django.test import Client

from generation.models import GenerationRun
from hardtests_web.templatetags.humane import log_lines, plural_text
from tests.web.conftest import World

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("written", "shown"), [
    ("passes 2 sample/official test(s)", "passes 2 sample/official tests"),
    ("accepts all 1 known-correct candidate(s)", "accepts all 1 known-correct candidate"),
    ("queued judging of 4 candidate(s) against suite v2", "queued judging of 4 candidates against suite v2"),
    ("validator v1 rejects sample input(s) #1, #2", "validator v1 rejects sample inputs #1, #2"),
    ("06:42:29 1 edge generator(s) x 10 call(s)", "06:42:29 1 edge generator x 10 calls"),
    ("    return len(s)", "    return len(s)"),  # code is left alone
])
def test_plurals_read_as_the_count_says(written: str, shown: str) -> None:
    assert plural_text(written) == shown


def test_plurals_keeps_escaping() -> None:
    html = Template("{% load humane %}{{ v|plurals }}").render(Context({"v": "<b>2 test(s)</b>"}))
    assert html == "&lt;b&gt;2 tests&lt;/b&gt;"


def test_log_lines_mark_stamps_as_utc_moments_across_midnight() -> None:
    html = str(log_lines("23:59:58 start <b>\n00:00:02 2 input(s)\nno stamp\n", "2026-11-26T23:59:50+00:00"))
    assert ('<time datetime="2026-11-26T23:59:58+00:00" title="2026-11-26 23:59:58 UTC" data-local data-clock>'
            "23:59:58 UTC</time> start &lt;b&gt;") in html
    assert '<time datetime="2026-11-27T00:00:02+00:00"' in html and "2 inputs" in html
    assert "no stamp" in html and "(s)" not in html


def test_run_page_log_has_times_and_no_s_plurals(maintainer_client: Client, world: World) -> None:
    GenerationRun.objects.filter(pk=world.run.pk).update(
        log="06:42:29 oracle oracle.py (rank 1): passes 2 sample/official test(s)\n"
            "06:42:42 queued judging of 1 candidate(s) against suite v2\n")
    html = maintainer_client.get(f"/runs/{world.run.pk}/").content.decode()
    log = html.split('<pre class="data log">', 1)[1].split("</pre>", 1)[0]
    assert "passes 2 sample/official tests" in log and "queued judging of 1 candidate against" in log
    assert log.count("data-clock") == 2 and "(s)" not in log


def test_suite_tab_shows_call_numbers_as_stored(maintainer_client: Client, world: World) -> None:
    # Materialising numbers a generator's calls from 1 (generation.materialise.inputs): shown as is.
    html = maintainer_client.get(f"/problems/{world.problem.pk}/suite/?suite={world.suite.pk}&kind=regular").content.decode()
    calls = sorted(int(n) for n in re.findall(r"gen_regular</span> call (\d+)", html))
    assert calls == sorted(world.suite.tests.filter(kind="regular").values_list("call_number", flat=True))


def test_a_refused_label_names_every_missing_answer_once() -> None:
    from tests.factories import annotator
    from tests.review.test_studies_support import ensure_roles, make_problem, make_study

    ensure_roles()
    alice = annotator("alice")
    study = make_study(problems=[make_problem()], annotators=[alice], overlap=1)
    client = Client()
    client.force_login(alice)
    item_url = client.post(f"/studies/{study.pk}/next/")["Location"]  # claims the next item
    refused = client.post(item_url + "label/", {}, follow=True)
    assert refused.redirect_chain and refused.request["REQUEST_METHOD"] == "GET"  # post/redirect/get
    summary = re.search(r'id="label-errors">(.*?)</div>', refused.content.decode(), re.S)
    assert summary and re.sub(r"\s+", " ", summary[1]).strip() == \
        "<strong>Not submitted:</strong> label the validator; label the suite."


def test_a_missing_object_is_said_in_words(user_client: Client) -> None:
    html = user_client.get("/problems/99999/").content.decode()
    assert "There is no page at <code>/problems/99999/</code>: no such problem.</p>" in html
    assert "matches the given query" not in html


def test_an_empty_list_says_so_once(user_client: Client) -> None:
    from tests.factories import ProblemFactory

    ProblemFactory()
    unknown = user_client.get("/problems/?tag=nonexistent").content.decode()
    assert "No problem has the tag “nonexistent”" in unknown and 'id="no-match"' not in unknown
    searched = user_client.get("/problems/?q=zzzzqqq").content.decode()
    assert searched.count('id="no-match"') == 1 and "No problem matches “zzzzqqq” with these filters." in searched


def test_a_run_page_has_a_progress_bar_through_its_steps(maintainer_client: Client, world: World) -> None:
    running = GenerationRun.objects.create(problem=world.problem, mode=GenerationRun.Mode.FROM_KIT,
                                           status=GenerationRun.Status.RUNNING, stage=GenerationRun.Stage.VALIDATING)
    html = maintainer_client.get(f"/runs/{running.pk}/progress/", HTTP_HX_REQUEST="true").content.decode()
    # A run from a kit asks no LLM: generators, validation, oracles, saving, judging.
    assert '<progress value="1" max="5" aria-label="Run progress">' in html
    assert "Step 2 of 5: Validating inputs" in html
    done = maintainer_client.get(f"/runs/{world.run.pk}/").content.decode()
    assert '<progress value="7" max="7"' in done and "7/7 steps done" in done


def test_internal_names_read_as_words_in_the_suite_pickers(maintainer_client: Client, world: World) -> None:
    from problems.models import TestSuite
    from problems.services import suite_create

    TestSuite.objects.filter(pk=suite_create(problem=world.problem, origin=TestSuite.Origin.ORACLE_FREE).pk)
    for tab in ("verdicts", "suite"):
        html = maintainer_client.get(f"/problems/{world.problem.pk}/{tab}/").content.decode()
        options = " ".join(re.findall(r"<option[^>]*>(.*?)</option>", html))
        assert "oracle-free (model-made outputs)" in options and "oracle_free" not in options, tab
