"""A two-annotator study end to end in headless Chromium, driven by keyboard shortcuts, with a
real RQ worker on the `sandbox` queue running the try-it box and the suite addition.

Screenshots go to screenshots/studies-*.png (gitignored).
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, checked_worker_argv, process_group_stop, worker_env

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]
SHOTS = REPO / "screenshots"
WAIT_MS = 60_000


@pytest.fixture
def sandbox_worker(tmp_path: Path) -> Iterator[None]:
    # Its own session, so teardown stops the worker together with its work horse.
    log = (tmp_path / "worker.log").open("w")
    proc = subprocess.Popen(checked_worker_argv("sandbox"), env=worker_env(),
                            cwd=REPO, start_new_session=True, stdout=log, stderr=subprocess.STDOUT)
    yield
    log.close()
    process_group_stop(proc)


@pytest.fixture
def queues_follow_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    # django_rq read RQ_QUEUES at import, before tests/conftest.py pointed them at the private Redis.
    import django_rq.settings
    from django.conf import settings

    for name, conf in settings.RQ_QUEUES.items():
        monkeypatch.setitem(django_rq.settings.QUEUES, name, conf)


@pytest.fixture
def people(transactional_db: None, queues_follow_settings: None, settings) -> dict:
    """Made before Playwright starts: its sync API runs an event loop in this thread, and Django
    refuses ORM calls from there."""
    from tests.factories import annotator, maintainer
    from tests.review.test_studies_support import LOOSE_VALIDATOR, ensure_roles, make_problem

    ensure_roles()
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    maintainer("maint")
    annotator("alice")
    annotator("bob")
    problems = [make_problem(validator=LOOSE_VALIDATOR, title=title) for title in ("Sum One", "Sum Two")]
    return {"pids": [p.pid for p in problems]}


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"studies-{name}.png"), full_page=True)


@pytest.mark.heavy(seconds=17)
def test_two_annotator_study_end_to_end(people, live_server, sandbox_worker) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    SHOTS.mkdir(exist_ok=True)
    base = live_server.url
    errors: list[str] = []

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        def login(username: str):
            context = browser.new_context(viewport={"width": 1400, "height": 950}, accept_downloads=True)
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(f"{username}: {exc}"))
            page.on("console", lambda m: errors.append(f"{username}: {m.text}") if m.type == "error" else None)
            page.on("response", lambda r: errors.append(f"{username}: {r.status} {r.url}") if r.status >= 400 else None)
            page.goto(f"{base}/accounts/login/?next=/studies/")
            page.fill("input[name=username]", username)
            page.fill("input[name=password]", "pw")
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/studies/")
            return page

        # --- a maintainer creates and opens the study in the UI ----------------------------
        maint = login("maint")
        maint.click("text=New study")
        maint.fill("input[name=name]", "Validator pilot")
        maint.fill("textarea[name=guidelines]", "A validator is **correct** when it accepts exactly the inputs "
                                                "the statement allows.")
        maint.check("input[name=selection][value=list]")
        maint.fill("textarea[name=problem_list]", "\n".join(people["pids"]))
        maint.fill("input[name=overlap]", "2")
        maint.fill("input[name=seed]", "3")
        maint.get_by_label("alice").check()
        maint.get_by_label("bob").check()
        shot(maint, "01-create")
        maint.click("button:has-text('Create draft')")
        expect(maint.locator(".status")).to_have_text("Draft")
        maint.click("#open-study")
        expect(maint.locator("hgroup .status")).to_have_text("Open")
        expect(maint.locator("hgroup")).to_contain_text("2 items")
        study_url = maint.url
        shot(maint, "02-opened")

        # --- alice labels with the keyboard; the try-it box runs in the sandbox ---------------
        alice = login("alice")
        alice.click("text=Validator pilot")
        alice.click("#start-labelling")
        expect(alice.locator("#label-form")).to_be_visible()
        expect(alice.locator("#validator .highlight")).to_contain_text("validate_input")
        expect(alice.locator(".statement .katex").first).to_be_visible()
        expect(alice.locator("#suite")).to_contain_text("Hacking (HackGen)")
        first_item = alice.url
        alice.keyboard.press("i")
        expect(alice.locator("#try-input")).to_be_focused()
        alice.keyboard.type("-5 3")
        alice.keyboard.press("Control+Enter")
        trial = alice.locator("#trial-result .trial[data-trial-status=done]")
        expect(trial).to_have_attribute("data-accepted", "true")
        expect(trial).to_contain_text("accepts")
        shot(alice, "03-try-it-accepts-counterexample")
        alice.keyboard.press("Escape")
        expect(alice.locator("[data-show-when='validator_label=incorrect']")).to_be_hidden()
        alice.keyboard.press("2")
        expect(alice.locator("input[name=validator_label][value=incorrect]")).to_be_checked()
        expect(alice.locator("[data-show-when='validator_label=incorrect']")).to_be_visible()
        alice.keyboard.press("w")
        expect(alice.locator("input[name=validator_reason][value=wrong_bound]")).to_be_checked()
        alice.keyboard.press("x")
        expect(alice.locator("#id_counterexample")).to_be_focused()
        alice.keyboard.type("-5 3")
        alice.keyboard.press("Escape")
        alice.keyboard.press("k")
        check = alice.locator("#counterexample-result .trial[data-trial-status=done]")
        expect(check).to_have_attribute("data-accepted", "true")
        alice.keyboard.press("5")
        expect(alice.locator("input[name=suite_label][value=incomplete]")).to_be_checked()
        alice.fill("#id_missing_cases", "no test has a negative number, which the statement forbids")
        alice.fill("#id_suggested_input", "40 2")
        alice.keyboard.press("Escape")
        alice.keyboard.press("c")
        alice.keyboard.type("alice-private-note")
        alice.keyboard.press("Escape")
        shot(alice, "04-labelled")
        alice.keyboard.press("n")
        alice.wait_for_url(lambda url: url != first_item and "/items/" in url)
        expect(alice.locator("input[name=validator_label][value=correct]")).not_to_be_checked()
        alice.keyboard.press("1")
        alice.keyboard.press("4")
        alice.keyboard.press("n")
        alice.wait_for_url(study_url)
        expect(alice.locator(".messages")).to_contain_text("Nothing left")
        expect(alice.locator("#results-link")).to_have_count(0)  # blind until closed
        shot(alice, "05-alice-done")

        # --- bob: blind to alice, skips one and comes back to it -----------------------------
        bob = login("bob")
        bob.goto(study_url)
        bob.click("#start-labelling")
        expect(bob.locator("#label-form")).to_be_visible()
        # The form shows while the page still parses; the keys work once its deferred script has run.
        bob.wait_for_load_state("load")
        assert bob.url == first_item  # the same item, labelled blind
        assert "alice-private-note" not in bob.content() and "negative number" not in bob.content()
        expect(bob.locator("input[name=validator_label]:checked")).to_have_count(0)
        bob.keyboard.press("1")
        expect(bob.locator("input[name=validator_label][value=correct]")).to_be_checked()
        bob.keyboard.press("4")
        expect(bob.locator("input[name=suite_label][value=complete]")).to_be_checked()
        bob.keyboard.press("n")
        bob.wait_for_url(lambda url: url != first_item and "/items/" in url)
        second_item = bob.url
        bob.keyboard.press("s")
        bob.wait_for_url(study_url)
        expect(bob.locator(".messages")).to_contain_text("Nothing left")
        bob.click("text=Label it now")
        bob.wait_for_url(second_item)
        bob.keyboard.press("1")
        bob.keyboard.press("4")
        bob.keyboard.press("n")
        bob.wait_for_url(study_url)
        shot(bob, "06-bob-done")

        # --- the maintainer reads the results and adjudicates ----------------------------------
        maint.goto(study_url)
        maint.click("#results-link")
        expect(maint.locator("#disagreements")).to_contain_text("Sum")
        expect(maint.locator("#question-1")).to_contain_text("Krippendorff")
        expect(maint.locator("#question-1")).to_contain_text("alice × bob")
        shot(maint, "07-results")
        maint.locator("#disagreements .review-link").first.click()
        expect(maint.locator("#item-labels")).to_contain_text("alice-private-note")
        expect(maint.locator("#item-labels")).to_contain_text("the validator accepts it")
        maint.select_option("select[name=validator_label]", "incorrect")
        maint.select_option("select[name=validator_reason]", "wrong_bound")
        maint.fill("#adjudication-form textarea[name=counterexample]", "-5 3")
        maint.select_option("select[name=suite_label]", "incomplete")
        maint.fill("#adjudication-form textarea[name=note]", "alice is right: a >= 1")
        maint.click("#adjudicate")
        expect(maint.locator(".messages")).to_contain_text("regression input")
        expect(maint.locator("#regression-inputs")).to_contain_text("-5 3")
        # closing the loop: alice's suggested input joins a new suite version
        maint.click("button:has-text(\"Add alice's input\")")
        addition = maint.locator("#additions .addition[data-addition-status=done]")
        expect(addition).to_contain_text("suite v2")
        shot(maint, "08-adjudicated")

        # --- export ------------------------------------------------------------------------------
        maint.goto(study_url.rstrip("/") + "/results/")
        with maint.expect_download() as download:
            maint.click("#export-csv")
        rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
        jsonl = maint.request.get(study_url.rstrip("/") + "/export.jsonl").text()
        maint.goto(study_url)
        maint.click("#close-study")
        expect(maint.locator("hgroup .status")).to_have_text("Closed")

        # once closed, alice may see the results
        alice.goto(study_url)
        alice.click("#results-link")
        expect(alice.locator("#disagreements")).to_contain_text("Sum")
        shot(alice, "09-results-after-close")
        browser.close()

    assert not errors, errors
    assert len(rows) == 4 and {r["annotator"] for r in rows} == {"alice", "bob"}
    adjudicated = [r for r in rows if r["final_validator_label"]]
    assert len(adjudicated) == 2 and {r["final_counterexample"] for r in adjudicated} == {"-5 3"}
    alice_first = next(r for r in rows if r["annotator"] == "alice" and r["validator_label"] == "incorrect")
    assert alice_first["counterexample_accepted"] == "True" and int(alice_first["time_spent_ms"]) > 0
    records = [json.loads(line) for line in jsonl.splitlines()]
    assert len(records) == 4 and sum(r["status"] == "submitted" for r in records) == 4

    from problems.models import InputValidator, TestSuite

    validator = InputValidator.objects.get(problem__pid=alice_first["problem_pid"])
    assert validator.regression_inputs == ["-5 3"]
    active = TestSuite.objects.get(problem__pid=alice_first["problem_pid"], status=TestSuite.Status.ACTIVE)
    assert active.version == 2 and active.test_count == 4
    assert re.search(r"/studies/\d+/$", study_url)
