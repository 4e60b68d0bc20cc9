"""Workflows in a real browser (headless Debian Chromium through Playwright): a failing verdict
opens with its diff, a broken validator cannot be saved, revert restores the previous kit,
the study form refuses an overlap above the annotators chosen, an annotator's draft survives
navigating away, and the first-run banner appears and goes away.

Screenshots go to screenshots/flow-*.png (gitignored).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]
SHOTS = REPO / "screenshots"
WAIT_MS = 30_000
V1_MARK = "1 <= a <= 10**9 and 1 <= b <= 10**9"


def in_thread(fn: Callable[[], Any]) -> None:
    """ORM calls from a test body: Playwright's sync API runs an event loop in this thread and
    Django refuses ORM calls there, so they run in a thread of their own."""
    failure: list[BaseException] = []

    def run() -> None:
        from django.db import connection

        try:
            fn()
        except BaseException as exc:  # re-raised in the test thread
            failure.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


@pytest.fixture
def world(transactional_db: None, settings) -> dict[str, Any]:
    """Made before Playwright starts (see in_thread)."""
    from problems.judging import solution_judge
    from problems.models import Solution
    from problems.services import kit_with_edited_code, solution_upsert
    from review.studies.services import study_create
    from tests.factories import annotator, maintainer
    from tests.review.test_studies_support import ensure_roles, make_problem, make_study

    ensure_roles()
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    m = maintainer("maint")
    alice, bob = annotator("alice"), annotator("bob")
    problem = make_problem(title="Sum Of Two")
    wrong, _ = solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3",
                               code="print(42)\n", name="always42.py")
    verdict = solution_judge(solution=wrong, suite=problem.suites.get(status="active"), mode="all")
    assert verdict.verdict == "WA"
    v1 = problem.kits.get()
    v2 = kit_with_edited_code(kit=v1, user=m, validator_code="def validate_input(s):\n    return True  # too loose\n",
                              judge_code="", note="loosen")
    study = make_study(problems=[problem], annotators=[alice, bob], overlap=2, name="Draft study")
    draft = study_create(name="Unopened", created_by=m, questions="both", selection="list", problems=[problem],
                         annotators=[], overlap=1, seed=1)
    return {"problem": problem.pk, "wrong": wrong.pk, "v1": v1.version, "v2": v2.version, "study": study.pk,
            "draft": draft.pk, "alice": alice.pk, "bob": bob.pk}


@pytest.fixture
def browser(world: dict, live_server) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    sync_api.expect.set_options(timeout=WAIT_MS)
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        def login(username: str) -> Any:
            context = chromium.new_context(viewport={"width": 1360, "height": 900})
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(f"{username}: {exc}"))
            # 422 is a refused form re-rendered with its errors, and the try-it box is refused a
            # 3 MB input on purpose: both are expected where the test provokes them.
            page.on("console", lambda m: errors.append(f"{username}: {m.text}")
                    if m.type == "error" and "422" not in m.text and "400" not in m.text else None)
            page.on("response", lambda r: errors.append(f"{username}: {r.status} {r.url}")
                    if r.status >= 400 and r.status != 422 and not (r.status == 400 and "/try/" in r.url) else None)
            page.goto(f"{live_server.url}/accounts/login/")
            page.fill("input[name=username]", username)
            page.fill("input[name=password]", "pw")
            page.click("button[type=submit]")
            page.wait_for_url(f"{live_server.url}/")
            page.base = live_server.url
            return page

        yield login
        chromium.close()
    assert not errors, errors  # a CSP violation or a script error shows up as a console error


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"flow-{name}.png"), full_page=True)


def test_failing_cell_opens_with_its_diff(browser, world) -> None:
    from playwright.sync_api import expect

    page = browser("maint")
    page.goto(f"{page.base}/problems/{world['problem']}/verdicts/")
    wrong_cells = page.locator(f"td.cell a[href*='/{world['wrong']}/']")
    expect(wrong_cells).to_have_count(3)
    wrong_cells.first.click()
    panel = page.locator("#cell-detail")
    expect(panel.locator(".actual-output")).to_have_text("42\n")
    expect(panel.locator("table.diff tr.differs")).to_have_count(1)
    expect(panel.locator("table.diff tr.differs")).to_contain_text("42")
    expect(panel).to_contain_text("Expected output")
    expect(panel).to_contain_text("ms CPU")
    expect(panel.locator("a", has_text="download")).to_have_count(3)
    shot(page, "01-matrix-cell")
    page.select_option("select[name=show]", "failing")
    expect(page).to_have_url(re.compile(r"show=failing"))
    expect(page.locator("#matrix tbody tr")).to_have_count(3)


def test_broken_validator_is_refused_and_revert_restores_the_previous_kit(browser, world) -> None:
    from playwright.sync_api import expect

    page = browser("maint")
    kit_url = f"{page.base}/problems/{world['problem']}/kit/"
    page.goto(kit_url)
    expect(page.locator("table.compact").filter(has_text="Kit versions").or_(
        page.locator("section", has_text="Kit versions").locator("table").first)).to_be_visible()
    versions = page.locator("section", has_text="Kit versions").locator("table").first.locator("tbody tr")
    expect(versions).to_have_count(2)
    page.click("text=Edit the validator or judging function…")
    page.fill("textarea[name=validator_code]", "def validate_input(s)\n    return True\n")
    page.click("button:has-text('Save as a new version')")
    expect(page.locator("#kit-edit-errors")).to_contain_text("Validator: syntax error on line 1")
    expect(page.locator("textarea[name=validator_code]")).to_have_value("def validate_input(s)\n    return True\n")
    shot(page, "02-kit-refused")
    page.goto(kit_url)
    expect(versions).to_have_count(2)  # nothing was saved
    expect(page.locator(".kit-head h2")).to_contain_text(f"Kit v{world['v2']}")
    expect(page.locator("section", has_text="Input validator").first).to_contain_text("too loose")

    page.once("dialog", lambda dialog: dialog.accept())
    page.click(f"button:has-text('Revert to v{world['v1']}')")
    expect(page).to_have_url(re.compile(r"/runs/\d+/$"))
    page.goto(kit_url)
    expect(versions).to_have_count(3)
    expect(page.locator(".kit-head h2")).to_contain_text(f"Kit v{world['v2'] + 1}")
    validator_box = page.locator(".grid-2 section").first
    expect(validator_box).to_contain_text(V1_MARK)
    expect(validator_box).not_to_contain_text("too loose")
    shot(page, "03-kit-reverted")


def test_study_overlap_above_the_annotators_chosen_is_refused(browser, world) -> None:
    from playwright.sync_api import expect

    page = browser("maint")
    page.goto(f"{page.base}/studies/{world['draft']}/edit/")
    page.fill("input[name=overlap]", "3")
    page.get_by_label("alice").check()
    page.get_by_label("bob").check()
    page.click("button:has-text('Save')")
    expect(page.locator("form.study-form")).to_contain_text("Overlap 3 needs at least 3 annotators; 2 are chosen.")
    shot(page, "04-study-overlap-refused")
    page.fill("input[name=overlap]", "2")
    page.click("button:has-text('Save')")
    expect(page.locator(".messages")).to_contain_text("Study saved.")


def test_annotator_draft_survives_navigating_away(browser, world) -> None:
    from playwright.sync_api import expect

    page = browser("alice")
    page.goto(f"{page.base}/studies/queue/")
    expect(page.locator("table.my-queue")).to_contain_text("0 of 1 labelled")
    page.click("button:has-text('Label the next item')")
    expect(page.locator("#item-title")).to_have_text("Sum Of Two")
    # The title shows while the page still parses; the keys work once its deferred script has run.
    page.wait_for_load_state("load")
    item_url = page.url
    page.keyboard.press("2")  # validator incorrect
    expect(page.locator("input[name=validator_label][value=incorrect]")).to_be_checked()
    page.keyboard.press("w")  # reason: wrong bound
    expect(page.locator("input[name=validator_reason][value=wrong_bound]")).to_be_checked()
    page.fill("#id_comment", "the lower bound is missing")
    expect(page.locator("#draft-status")).to_contain_text("Draft saved", timeout=WAIT_MS)
    # "Incorrect" opens the reason and counterexample, yet the suite question and Submit stay in view.
    expect(page.locator("#submit-next")).to_be_in_viewport()
    expect(page.locator("#suite-labels legend")).to_be_in_viewport()
    expect(page.locator("#my-progress")).to_contain_text("0 of 1")
    shot(page, "05-annotate-draft")
    page.goto(f"{page.base}/")
    page.goto(item_url)
    expect(page.locator("#id_comment")).to_have_value("the lower bound is missing")
    expect(page.locator("input[name=validator_label][value=incorrect]")).to_be_checked()
    expect(page.locator("input[name=validator_reason][value=wrong_bound]")).to_be_checked()

    # Try-it: a refused request replaces the previous result with the reason.
    page.click("#try-run")
    expect(page.locator("#trial-result")).to_contain_text("Type an input first.")
    page.fill("#try-input", "1 " * (1_500_000))  # 3 MB: over the request size limit
    page.click("#try-run")
    expect(page.locator("#trial-result")).to_contain_text("Refused (400)")
    expect(page.locator("#trial-result")).not_to_contain_text("Type an input first.")


def test_first_run_banner_appears_while_demo_suites_build_and_goes_away(browser, world) -> None:
    from django.core.cache import cache
    from playwright.sync_api import expect

    def queue_demo_runs() -> None:
        from generation.models import GenerationRun
        from problems.demo import demo_load
        from problems.models import Problem

        demo_load()
        for problem in Problem.objects.filter(source="demo"):
            GenerationRun.objects.create(problem=problem, mode=GenerationRun.Mode.FROM_KIT)
        cache.clear()  # the status is cached for a few seconds

    def finish_demo_runs() -> None:
        from generation.models import GenerationRun

        GenerationRun.objects.filter(problem__source="demo").update(status=GenerationRun.Status.SUCCEEDED)
        cache.clear()

    page = browser("maint")
    expect(page.locator("#demo-banner")).to_have_count(0)
    in_thread(queue_demo_runs)
    page.goto(f"{page.base}/problems/")
    banner = page.locator("#demo-banner")
    expect(banner).to_contain_text("First run: the demo suites are being built.", timeout=WAIT_MS)
    expect(banner).to_contain_text(re.compile(r"0 of \d+ demo problems have a suite"))
    shot(page, "06-first-run-banner")
    in_thread(finish_demo_runs)
    # The banner polls every 3 s; the status is cached for 3 s.
    expect(banner).to_have_count(0, timeout=WAIT_MS)
    page.reload()
    expect(page.locator("#demo-banner")).to_have_count(0)
