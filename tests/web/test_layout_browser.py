"""Layout in a real browser (headless Debian Chromium through Playwright) at a phone's width
(390 px) and a laptop's (1366 px): no page scrolls sideways, the menu's items are reachable, a
tapped verdict opens in view, the label form is on the first screen of a phone, and the staff
dashboard runs without a CSP violation.

Screenshots go to screenshots/layout-<width>-<page>.png (gitignored).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]
SHOTS = REPO / "screenshots"
SMALL_PHONE, PHONE, LAPTOP = 360, 390, 1366


@pytest.fixture
def world(transactional_db: None, settings) -> dict[str, Any]:
    """Made before Playwright starts: its sync API runs an event loop in this thread, where
    Django refuses ORM calls."""
    from problems.judging import solution_judge
    from problems.models import Solution
    from problems.services import solution_upsert
    from tests.factories import annotator, maintainer
    from tests.review.test_studies_support import ensure_roles, make_problem, make_study

    ensure_roles()
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    m = maintainer("maint")
    m.is_staff = True
    m.save()
    alice, bob = annotator("alice"), annotator("bob")
    problem = make_problem(title="A problem whose title is long enough to wrap on a phone screen")
    wrong, _ = solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3",
                               code="print(42)\n", name="always-forty-two-candidate.py")
    solution_judge(solution=wrong, suite=problem.suites.get(status="active"), mode="all")
    study = make_study(problems=[problem], annotators=[alice, bob], overlap=2, name="Layout study")
    return {"problem": problem.pk, "wrong": wrong.pk, "study": study.pk}


@pytest.fixture
def open_page(world: dict, live_server) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        def login(username: str, width: int) -> Any:
            context = chromium.new_context(viewport={"width": width, "height": 844 if width <= PHONE else 900})
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(f"{username}@{width}: {exc}"))
            page.on("console", lambda m: errors.append(f"{username}@{width}: {m.text}") if m.type == "error" else None)
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


def horizontal_overflow(page: Any) -> int:
    """How far the page itself scrolls sideways (0 when it does not)."""
    return int(page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth"))


def in_viewport(page: Any, target: Any) -> bool:
    """The element (a selector or a locator) is on screen: its top-left corner and at least a
    thumb's worth of it (up to 40 px each way) lie inside the viewport."""
    locator = page.locator(target) if isinstance(target, str) else target
    box = locator.first.bounding_box()
    viewport = page.viewport_size
    return bool(box and box["width"] > 0 and box["y"] >= 0 and box["x"] >= 0
                and box["y"] + min(box["height"], 40) <= viewport["height"]
                and box["x"] + min(box["width"], 40) <= viewport["width"])


@pytest.mark.parametrize("width", [SMALL_PHONE, PHONE, LAPTOP])
def test_no_main_page_scrolls_sideways(open_page, world, width: int) -> None:
    page = open_page("maint", width)
    pid = world["problem"]
    pages = {
        "home": "/", "problems": "/problems/", "suite": f"/problems/{pid}/", "kit": f"/problems/{pid}/kit/",
        "solutions": f"/problems/{pid}/solutions/", "verdicts": f"/problems/{pid}/verdicts/",
        "runs": f"/problems/{pid}/runs/", "studies": "/studies/", "study": f"/studies/{world['study']}/",
        "queue": "/studies/queue/", "evaluation": "/evaluation/", "tokens": "/account/tokens/",
        "curation": "/curation/",
    }
    wide = {}
    for name, path in pages.items():
        page.goto(page.base + path)
        page.screenshot(path=str(SHOTS / f"layout-{width}-{name}.png"), full_page=True)
        if (overflow := horizontal_overflow(page)) > 0:
            wide[name] = overflow
    assert wide == {}


def test_phone_menu_folds_and_every_item_is_reachable(open_page, world) -> None:
    page = open_page("maint", PHONE)
    names = ["Problems", "Studies", "My queue", "Evaluation", "API tokens", "Admin", "Queues", "Log out"]
    assert not page.locator("#site-menu").is_visible()  # folded behind "Menu"
    page.click("label.nav-toggle-label")
    for name in names:
        item = page.locator("#site-menu").get_by_text(name, exact=True)
        assert item.is_visible() and in_viewport(page, item), (name, item.bounding_box(), page.viewport_size)
    page.screenshot(path=str(SHOTS / "layout-390-menu-open.png"))
    page.locator("#site-menu").get_by_text("Studies", exact=True).click()
    page.wait_for_url(f"{page.base}/studies/")
    wide = open_page("maint", LAPTOP)
    for name in names:  # one row, no toggle
        assert wide.locator("#site-menu").get_by_text(name, exact=True).is_visible(), name
    assert not wide.locator("label.nav-toggle-label").is_visible()


def test_a_tapped_verdict_opens_in_view_on_a_phone(open_page, world) -> None:
    from playwright.sync_api import expect

    page = open_page("maint", PHONE)
    page.goto(f"{page.base}/problems/{world['problem']}/verdicts/")
    assert not page.locator("#cell-detail").is_visible()  # no empty panel below the matrix
    cells = page.locator(f"td.cell a[href*='/{world['wrong']}/']")
    cells.last.scroll_into_view_if_needed()
    cells.last.click()
    panel = page.locator("#cell-detail .cell-detail")
    expect(panel).to_be_visible()
    assert in_viewport(page, "#cell-detail")
    page.screenshot(path=str(SHOTS / "layout-390-verdict-panel.png"))
    page.click("#cell-detail [data-close-panel]")
    expect(page.locator("#cell-detail")).to_be_hidden()


def test_the_label_form_is_on_the_first_screen_of_a_phone(open_page, world) -> None:
    page = open_page("alice", PHONE)
    page.goto(f"{page.base}/studies/queue/")
    page.locator("form[action$='/next/'] button, a[href*='/items/']").first.click()
    page.wait_for_selector("#label-form")
    page.wait_for_load_state("load")  # measured once the whole page is parsed and styled
    box = page.locator("#label-form").bounding_box()
    assert box is not None and box["y"] < page.viewport_size["height"], box
    assert horizontal_overflow(page) <= 0
    page.screenshot(path=str(SHOTS / "layout-390-annotate.png"))


def test_the_queue_dashboard_runs_its_script_under_our_csp(open_page, world) -> None:
    """django-rq's job lists call a jQuery plugin Django 5 no longer has (a page error on every
    load); our override's script must select every row from the header box, with no page error
    and no CSP violation (the fixture fails on either)."""
    from django_rq.queues import get_queue_by_index

    queue = get_queue_by_index(0)
    jobs = [queue.enqueue_call("builtins.len", args=("x",), at_front=False) for _ in range(2)]
    try:
        page = open_page("maint", LAPTOP)
        response = page.goto(f"{page.base}/rq/queues/0/")
        assert response.status == 200
        page.wait_for_load_state("load")
        rows = page.locator("tr input.action-select")
        assert rows.count() >= 2
        page.click("#action-toggle")
        assert all(rows.nth(i).is_checked() for i in range(rows.count()))
        assert page.locator("tr.selected").count() == rows.count()
        rows.first.click()
        assert not page.locator("#action-toggle").is_checked()
        page.wait_for_timeout(300)  # a late page error (after load) still reaches the fixture
    finally:
        for job in jobs:
            job.delete()
