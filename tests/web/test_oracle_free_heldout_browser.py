"""In a real browser (headless Debian Chromium through Playwright): a problem imported through the
native format with no solutions says what it is missing and offers the oracle-free mode; the
button opens the regenerate form with that mode chosen, the form starts an oracle-free run, and
once the run has made its suite (scripted LLM replies, real sandbox) the page marks it.

Screenshots go to screenshots/flow-oracle-free-*.png (gitignored)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.web.test_browser_workflows import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, in_thread

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SHOTS = REPO / "screenshots"


@pytest.fixture
def world(transactional_db: None, settings, tmp_path) -> Iterator[dict[str, Any]]:
    from problems.importers.runner import dataset_import
    from problems.models import Problem
    from tests.factories import maintainer
    from tests.generation.conftest import start_fake_llm
    from tests.oracle_free_heldout import PAIR

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.HARDTESTS_GENERATOR_TIME_S = settings.HARDTESTS_CHECKER_TIME_S = 5.0
    settings.HARDTESTS_BRUTE_FORCE_TIME_S = 5.0
    fake, server = start_fake_llm()
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = fake.url, "test-key"
    settings.HARDTESTS_LLM_MODEL = "fake-model"
    settings.HARDTESTS_CHECKER_REVIEW = False
    maintainer("maint")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"source": "heldout", "pid": "hd/pair-web", "title": PAIR.title,
                                "statement": PAIR.statement, "samples": PAIR.samples,
                                "time_limit_ms": PAIR.time_limit_ms, "memory_limit_mb": 256}) + "\n")
    dataset_import(format_name="native", paths=[str(rows)])
    problem = Problem.objects.get(pid="hd/pair-web")
    assert not problem.solutions.exists()
    try:
        yield {"problem": problem.pk, "fake": fake, "case": PAIR}
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def page(world: dict[str, Any], live_server) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    sync_api.expect.set_options(timeout=WAIT_MS)
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = chromium.new_context(viewport={"width": 1360, "height": 900}).new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", "maint")
        page.fill("input[name=password]", "pw")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        page.base = live_server.url
        yield page
        chromium.close()
    assert not errors, errors


def test_a_problem_without_solutions_offers_the_oracle_free_mode_and_the_suite_is_marked(page, world) -> None:
    from playwright.sync_api import expect

    page.goto(f"{page.base}/problems/{world['problem']}/")
    missing = page.locator("aside.missing-parts")
    expect(missing).to_contain_text("What this problem is missing")
    expect(missing).to_contain_text("no oracle (human solution) in a supported language")
    page.screenshot(path=str(SHOTS / "flow-oracle-free-missing.png"), full_page=True)
    missing.get_by_role("button", name="Make an oracle-free suite (HardTests A.7)…").click()
    page.wait_for_url(f"**/problems/{world['problem']}/regenerate/?mode=oracle_free")
    expect(page.locator("input[name=mode][value=oracle_free]")).to_be_checked()
    page.locator("input[name=confirm]").check()
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url("**/runs/**")

    case = world["case"]
    world["fake"].reply(case.a7_reply(), case.second_reply())

    def run_it() -> None:
        from generation.models import GenerationRun
        from generation.pipeline import generation_run_execute

        run = GenerationRun.objects.get(problem_id=world["problem"])
        assert run.mode == "oracle_free" and run.status == "queued"
        done = generation_run_execute(run_id=run.pk)
        assert done.status == "succeeded", done.error

    in_thread(run_it)
    page.goto(f"{page.base}/problems/{world['problem']}/")
    trust = page.locator("aside.oracle-free-trust").first
    expect(trust).to_contain_text("no human oracle checked these outputs")
    expect(page.locator("body")).to_contain_text("Oracle-free (model-made outputs)")
    page.screenshot(path=str(SHOTS / "flow-oracle-free-suite.png"), full_page=True)
