"""A newcomer's first hour in a real browser (Debian Chromium through Playwright), at a phone's
width (390 px) and a laptop's (1366 px), one test per defect of the web round 4 walk:

1. a stale tab's form lands on the site's own page, with what was typed kept and sent again;
6. the evaluation compares one change at a time, names the missing pair, and home knows a
   running evaluation;
7. the code under review is wide and line-numbered, never clipped;
8. the run page: counts at full width, "unchanged, no new version" in the header, live
   relative times;
9. narrow screens: key columns and actions first, tabs wrap, a scroll cue on wide tables.

Bounded: one shared world per test, each page visited once per width.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.web.test_layout_browser import CHROMIUM, CHROMIUM_ARGS, LAPTOP, PHONE, SHOTS, horizontal_overflow

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
WIDTHS = [PHONE, LAPTOP]

# A validator with one long line (96 characters, long for a validator): at 1366 px it shows
# whole, without a sideways scroll; longer lines scroll inside the numbered pane.
LONG_LINE = "    return 1 <= a <= 10**9 and 1 <= b <= 10**9 and len(parts) == 2 and parts[0].isdigit() is True\n"
WIDE_VALIDATOR = "def validate_input(input_str):\n    parts = input_str.split()\n    a, b = int(parts[0]), int(parts[1])\n" \
                 + LONG_LINE


@pytest.fixture
def world(transactional_db: None, settings) -> dict[str, Any]:
    """Made before Playwright starts (its event loop refuses ORM calls in this thread)."""
    from django.utils import timezone

    from generation.models import GenerationRun
    from problems.models import Solution
    from problems.services import solution_upsert
    from review.evaluation.services import evaluation_report_compute, evaluation_select
    from review.models import EvaluationReport
    from tests.factories import annotator, maintainer
    from tests.problems.test_kill_order import _ab_suite, _known
    from tests.review.test_studies_support import ensure_roles, make_problem, make_study

    ensure_roles()
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    maintainer("maint")
    alice, bob = annotator("alice"), annotator("bob")
    problem = make_problem(title="Sum of two numbers, read from one line", validator=WIDE_VALIDATOR)
    study = make_study(problems=[problem], annotators=[alice, bob], overlap=2, name="Round four study")
    # the evaluation: a suite with a kill order (fast-suite section) and a candidate never judged
    suite = _ab_suite()
    _known(suite)
    solution_upsert(problem=suite.problem, role=Solution.Role.CANDIDATE, language="python3",
                    code="print(0)\n", name="never-judged.py", gold_verdict=Solution.GoldVerdict.WA)
    report = evaluation_report_compute(selection=evaluation_select(pids=[suite.problem.pid]),
                                       near_duplicate_budget_s=5)
    EvaluationReport.objects.create(status=EvaluationReport.Status.DONE, report=report, params={})
    running = EvaluationReport.objects.create(status=EvaluationReport.Status.JUDGING, params={},
                                              judging_total=4, judging_done=1)
    # a run that found nothing changed, just created, with every count the pipeline writes
    run = GenerationRun.objects.create(
        problem=problem, mode=GenerationRun.Mode.FROM_KIT, status=GenerationRun.Status.SUCCEEDED,
        stage=GenerationRun.Stage.DONE, created_at=timezone.now(), finished_at=timezone.now() + timedelta(seconds=2),
        counts={kind: {"generated": 120, "invalid": 3, "duplicate": 7, "validator_error": 0,
                       "oracle_disagreement": 1, "oracle_failed": 0, "kept": 109}
                for kind in ("direct", "regular", "hacking")},
        log="nothing changed: the kit gives exactly the tests of active suite v1 (3 tests); no new version made\n",
    )
    return {"problem": problem.pk, "study": study.pk, "run": run.pk, "running": running.pk,
            "report": report}


@pytest.fixture
def browser(world: dict, live_server) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        def login(username: str, width: int, context: Any = None) -> Any:
            context = context or chromium.new_context(viewport={"width": width, "height": 844 if width <= PHONE
                                                                  else 900})
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(f"{username}@{width}: {exc}"))
            # a 403 the test provokes on purpose is logged by Chromium as a failed resource
            page.on("console", lambda m: errors.append(f"{username}@{width}: {m.text}")
                    if m.type == "error" and "status of 403" not in m.text else None)
            page.goto(f"{live_server.url}/accounts/login/")
            page.fill("input[name=username]", username)
            page.fill("input[name=password]", "pw")
            page.click("button[type=submit]")
            page.wait_for_url(f"{live_server.url}/")
            page.base = live_server.url
            return page

        yield login
        chromium.close()
    assert not errors, errors


def x_inside(page: Any, locator: Any) -> bool:
    """The element is on screen sideways (whatever its height on the page): its box starts and
    ends inside the viewport's width, so no sideways scroll is needed to reach it."""
    box = locator.first.bounding_box()
    return bool(box and box["width"] > 0 and box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"])


# -- 1 ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_a_stale_tab_form_lands_on_the_site_page_and_keeps_what_was_typed(browser, world, width: int) -> None:
    from playwright.sync_api import expect

    page = browser("maint", width)
    page.goto(page.base + "/account/tokens/")
    page.fill("input[name=name]", "stale tab token")
    # another tab of the same browser logs out and in again: the first tab's token is stale
    other = page.context.new_page()
    other.goto(page.base + "/")
    other.evaluate("document.querySelector('form[action$=\"/accounts/logout/\"]').submit()")
    other.wait_for_url("**/accounts/login/**")
    other.fill("input[name=username]", "maint")
    other.fill("input[name=password]", "pw")
    other.click("button[type=submit]")
    other.wait_for_url(page.base + "/")
    other.close()
    with page.expect_navigation() as nav:
        page.click("form[action$='/account/tokens/new/'] button[type=submit]")
    assert nav.value.status == 403
    html = page.content()
    assert "CSRF verification failed" not in html  # not Django's bare page
    expect(page.locator("header.site-header")).to_be_visible()  # the site's own page, with navigation
    expect(page.locator("h1")).to_have_text("This form had expired")
    kept = page.locator("form.kept-resend input[name=name]")
    expect(kept).to_have_value("stale tab token")
    assert horizontal_overflow(page) <= 0
    page.screenshot(path=str(SHOTS / f"newcomer-{width}-csrf.png"), full_page=True)
    page.click("form.kept-resend button[type=submit]")
    expect(page.locator(".token-secret")).to_be_visible()  # sent again: the token exists
    expect(page.locator("table").get_by_text("stale tab token", exact=True)).to_be_visible()


# -- 6 ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_the_evaluation_reads_one_change_at_a_time_and_names_the_missing_pair(browser, world, width: int) -> None:
    from playwright.sync_api import expect

    page = browser("maint", width)
    # home: a running evaluation is said, not "no evaluation has run"
    page.goto(page.base + "/")
    steps = page.locator(".next-steps")
    expect(steps).to_contain_text(f"Evaluation #{world['running']} is running")
    assert "No evaluation has run" not in steps.inner_text()
    page.goto(page.base + "/evaluation/")
    arms = page.locator("table.fast-arms tbody th")
    expect(arms).to_have_count(4)
    labels = arms.all_inner_texts()
    assert labels[0].endswith("(baseline)") and labels[1].endswith("(order alone)")
    assert labels[2].endswith("(subset alone)") and labels[3].endswith("(both)")
    # every arm's ratio is the baseline's count over its own: the baseline is 1.00x of itself
    assert page.locator("table.fast-arms tr[data-arm=full_kind] td").first.inner_text() == "1.00x"
    fast = world["report"]["fast"]
    both = next(a for a in fast["arms"] if a["arm"] == "fast_kill")
    assert page.locator("table.fast-arms tr[data-arm=fast_kill] td").first.inner_text() == \
        f"{both['fewer_tests']:.2f}x"
    missing = page.locator("details.missing-pairs")
    expect(missing).to_contain_text("never-judged.py")
    expect(missing).to_contain_text("never judged")
    # the ratios first: precision and recall of the first metrics table are on screen sideways
    header = page.locator("table.metrics-table").first.locator("thead th")
    assert header.nth(1).inner_text() == "precision" and header.nth(2).inner_text() == "recall"
    assert x_inside(page, header.nth(2)), header.nth(2).bounding_box()
    assert horizontal_overflow(page) <= 0
    page.screenshot(path=str(SHOTS / f"newcomer-{width}-evaluation.png"), full_page=True)


# -- 7 ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_the_code_under_review_is_wide_numbered_and_never_clipped(browser, world, width: int) -> None:
    page = browser("alice", width)
    page.goto(f"{page.base}/studies/{world['study']}/")
    page.click("#start-labelling")
    page.wait_for_selector("#label-form")
    page.wait_for_load_state("load")  # measured once the whole page is parsed and styled
    code = page.locator("#validator .code-block pre")
    lines = code.locator(".line")
    assert lines.count() == 4
    # numbered by the stylesheet (generated content, so a copy of the code has no numbers)
    assert lines.first.evaluate("e => getComputedStyle(e, '::before').content") not in ("none", "normal")
    assert code.inner_text().startswith("def validate_input")
    box = code.bounding_box()
    sizes = code.evaluate("e => [e.scrollWidth, e.clientWidth, getComputedStyle(e).overflowX]")
    if width == LAPTOP:
        # at least half the screen wide, and the longest line shows whole
        assert box["width"] >= 0.5 * width, box
        assert sizes[0] <= sizes[1] + 1, sizes
    else:
        # the pane fits the phone and scrolls inside itself: no line is cut off unreachably
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, box
        assert sizes[2] in ("auto", "scroll"), sizes
    assert horizontal_overflow(page) <= 0
    page.screenshot(path=str(SHOTS / f"newcomer-{width}-annotate.png"), full_page=True)


# -- 8 ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_the_run_page_counts_at_full_width_unchanged_in_the_header_and_times_live(browser, world,
                                                                                   width: int) -> None:
    from playwright.sync_api import expect

    page = browser("maint", width)
    page.clock.install()
    page.goto(f"{page.base}/runs/{world['run']}/")
    expect(page.locator(".run-status-line #run-unchanged")).to_have_text("unchanged, no new version")
    expect(page.locator(".run-status-line")).to_contain_text("suite v1 stays active")
    created = page.locator(".problem-head time").first
    before = created.inner_text()
    # the server's words at load: the run was made moments before (a second or more on a busy machine)
    assert before in ("now", "a second ago") or before.endswith("seconds ago"), before
    page.clock.fast_forward(60_000)
    page.clock.run_for(16_000)  # the 15 s refresh
    after = created.inner_text()
    assert after != before and "minute" in after, (before, after)
    counts = page.locator("table.counts")
    headers = counts.locator("thead th")
    assert headers.nth(1).inner_text().lower().startswith("kept")  # the key column first
    assert x_inside(page, headers.nth(1)), headers.nth(1).bounding_box()
    main = page.locator("main").bounding_box()
    box = counts.bounding_box()
    if width == LAPTOP:
        # the page's width, every column shown (nothing cut, no inner scroll)
        assert box["width"] >= 0.9 * main["width"], (box, main)
        widths = counts.evaluate("e => [e.parentElement.scrollWidth, e.parentElement.clientWidth]")
        assert widths[0] <= widths[1] + 1, widths
        expect(headers.filter(has_text="disagree")).to_be_visible()
    assert horizontal_overflow(page) <= 0
    page.screenshot(path=str(SHOTS / f"newcomer-{width}-run.png"), full_page=True)


# -- 9 ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_narrow_screens_show_key_columns_actions_and_tabs_first(browser, world, width: int) -> None:
    page = browser("maint", width)
    page.goto(page.base + "/problems/")
    # key columns first at every width: what a phone shows is what matters
    assert [h.split()[0] for h in page.locator("table.problems thead th").all_inner_texts()[:3]] == \
        ["Id", "Title", "Suite"]
    suite_header = page.locator("table.problems thead th", has_text="Suite")
    assert x_inside(page, suite_header), suite_header.bounding_box()
    if width == PHONE:
        # the columns that do not fit are behind a visible cue
        assert page.locator(".scroll-cue.on").first.is_visible()
    page.goto(f"{page.base}/problems/{world['problem']}/")
    runs_tab = page.locator("nav.tabs a", has_text="Runs")
    assert runs_tab.is_visible() and x_inside(page, runs_tab), runs_tab.bounding_box()
    page.goto(f"{page.base}/problems/{world['problem']}/runs/")
    assert page.locator("table.runs thead th").all_inner_texts()[:4] == ["Run", "Status", "Stage / failure",
                                                                         "Tests kept"]
    status = page.locator("table.runs thead th", has_text="Status")
    assert x_inside(page, status), status.bounding_box()
    page.goto(f"{page.base}/studies/{world['study']}/results/")
    page.click("#all-items summary")
    review = page.locator("#all-items a.review-link").first
    # the action sits in the row's second cell (beside the problem), not in a last column
    assert review.evaluate("a => a.closest('td').cellIndex") == 1
    assert review.is_visible() and x_inside(page, review), review.bounding_box()
    page.goto(page.base + "/evaluation/")
    assert page.locator("table.metrics-table").first.locator("thead th").all_inner_texts()[1:3] == \
        ["precision", "recall"]
    recall = page.locator("table.metrics-table").first.locator("thead th", has_text="recall")
    assert x_inside(page, recall), recall.bounding_box()
    assert horizontal_overflow(page) <= 0
    page.screenshot(path=str(SHOTS / f"newcomer-{width}-evaluation-columns.png"), full_page=True)
