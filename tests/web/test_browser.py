"""The pages in a real browser: headless Debian Chromium driven by Playwright, against
pytest-django's live server, with real RQ workers for regeneration and judging.

Screenshots of every page go to screenshots/ at the repository root (gitignored).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, process_group_stop, worker_env

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
SHOTS = REPO / "screenshots"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]


@pytest.fixture
def workers() -> Iterator[None]:
    """One generation worker and one sandbox worker, each in its own session so teardown
    stops it together with its work horse."""
    env = dict(worker_env(), HARDTESTS_REGULAR_CALLS="4", HARDTESTS_STRATIFIED_CALLS="3",
               HARDTESTS_HACKING_CALLS="3")
    manage = [sys.executable, str(REPO / "manage.py"), "rqworker"]
    procs = [
        subprocess.Popen([*manage, "--worker-class", "generation.worker.GenerationWorker", "generation"],
                         env=env, cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL),
        subprocess.Popen([*manage, "sandbox", "default"], env=env, cwd=REPO, start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    yield
    for proc in procs:
        process_group_stop(proc)


@pytest.fixture
def seeded(transactional_db: None) -> None:
    """Demo problems and a maintainer; created before Playwright starts, because its sync API
    runs an event loop in this thread and Django refuses ORM calls from there."""
    from problems.demo import demo_load
    from tests.factories import maintainer

    demo_load()
    maintainer("maint")


@pytest.fixture
def page(seeded: None, live_server) -> Iterator:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    SHOTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1360, "height": 900})
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        tab.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        tab.base = live_server.url
        yield tab
        browser.close()
    # A CSP violation or a script error shows up as a console error.
    assert not errors, errors


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def login(page, username: str, password: str) -> None:
    page.goto(f"{page.base}/accounts/login/")
    shot(page, "01-login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{page.base}/")


@pytest.mark.heavy(seconds=21)
def test_browse_filter_regenerate_and_judge(page, workers) -> None:
    from playwright.sync_api import expect

    login(page, "maint", "pw")
    expect(page.locator(".totals")).to_contain_text("problems")
    shot(page, "02-home")

    # The list: search, then a filter; htmx swaps the table and the URL keeps the state.
    page.click("nav >> text=Problems")
    expect(page.locator("#problem-table tbody tr")).to_have_count(12)
    # The rows show while the page still parses; the search box works once htmx (deferred) has run.
    page.wait_for_load_state("load")
    shot(page, "03-problems")
    page.fill("input[name=q]", "gift")
    expect(page).to_have_url(re.compile(r"q=gift"))
    expect(page.locator("#problem-table tbody tr")).to_have_count(1)
    page.fill("input[name=q]", "")
    page.select_option("select[name=tag]", "graphs")
    expect(page).to_have_url(re.compile(r"tag=graphs"))
    expect(page.locator("#problem-table")).to_contain_text("Courier Routes")
    expect(page.locator("#problem-table")).not_to_contain_text("Nobody Gets Their Own Gift")
    shot(page, "04-problems-filtered")
    page.select_option("select[name=tag]", "")
    page.fill("input[name=q]", "gift")
    expect(page.locator("#problem-table tbody tr")).to_have_count(1)

    # The problem page: the statement's math is typeset by KaTeX.
    page.click("#problem-table >> text=Nobody Gets Their Own Gift")
    expect(page.locator("h1")).to_have_text("Nobody Gets Their Own Gift")
    expect(page.locator(".statement .katex").first).to_be_visible()
    problem_url = page.url.rstrip("/")
    shot(page, "05-problem-suite")

    # Every tab: an htmx swap that also pushes the tab's own URL.
    for label, path, marker, name in [
        ("Kit", "/kit/", "Input validator", "06-problem-kit"),
        ("Solutions", "/solutions/", "Oracles", "07-problem-solutions"),
        ("Verdict matrix", "/verdicts/", "Judge all solutions", "08-problem-matrix"),
        ("Runs", "/runs/", "No generation runs", "09-problem-runs"),
        ("Suite", "/suite/", "Versions", "05-problem-suite"),
    ]:
        page.click(f"nav.tabs >> text={label}")
        expect(page).to_have_url(re.compile(re.escape(path) + "$"))
        expect(page.locator("#problem-tabs")).to_contain_text(marker)
        shot(page, name)
    page.click("nav.tabs >> text=Kit")
    page.click("#problem-tabs .code-box >> nth=0 >> [data-wrap-toggle]")
    expect(page.locator("#problem-tabs .code-box").first).to_have_class(re.compile("wrap-on"))
    page.click("nav.tabs >> text=Solutions")
    page.click("#problem-tabs >> text=View code >> nth=0")
    expect(page.locator("#problem-tabs .highlight").first).to_be_visible()
    shot(page, "07-problem-solutions")

    # Regenerate from the kit: a confirmation, then the run page polls until the run ends.
    page.goto(f"{problem_url}/")
    page.click("text=Regenerate from kit…")
    expect(page.locator("h1")).to_contain_text("Regenerate")
    shot(page, "10-regenerate-confirm")
    page.check("input[name=mode][value=from_kit]")
    page.check("input[name=confirm]")
    page.click("button:has-text('Start the run')")
    expect(page).to_have_url(re.compile(r"/runs/\d+/$"))
    shot(page, "11-run-live")
    expect(page.locator("#run-progress .badge").first).to_have_text(re.compile("Succeeded|Failed"), timeout=240_000)
    expect(page.locator("#run-progress .badge").first).to_have_text("Succeeded")
    expect(page.locator("#run-progress")).not_to_have_attribute("hx-trigger", re.compile("every"))
    expect(page.locator("button:has-text('Cancel run')")).to_have_count(0)
    shot(page, "12-run-finished")

    # The new suite version is active.
    page.click("#run-progress >> text=/suite v\\d+/")
    expect(page.locator("#problem-tabs h2")).to_contain_text("Active")
    expect(page.locator("#problem-tabs h2")).to_contain_text("Generated")
    expect(page.locator("table.versions tbody tr")).to_have_count(2)
    shot(page, "13-new-suite")

    # Judge every solution against it; the matrix fills in live and stops polling.
    page.click("nav.tabs >> text=Verdict matrix")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button:has-text('Judge all solutions')")
    expect(page.locator("#matrix")).to_contain_text("queued or running", timeout=30_000)
    expect(page.locator("#matrix .pending")).to_have_count(0, timeout=240_000)
    expect(page.locator("#matrix td.cell.v-ac").first).to_be_visible()
    shot(page, "14-matrix-judged")

    page.click("nav.tabs >> text=Runs")
    expect(page.locator("#problem-tabs")).to_contain_text("Succeeded")
    shot(page, "09-problem-runs")
    page.goto(f"{page.base}/")
    shot(page, "02-home")
