"""`serve` as `make run` starts it (no --dev): in real Chromium a missing page is the site's 404,
with no URL patterns and no traceback, and the API answers JSON. Django's test client cannot
show this: pytest-django forces DEBUG off whatever the settings say.

Screenshot: screenshots/serve-404.png (gitignored).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, worker_env
from tests.deploy.conftest import free_port, wait_http
from tests.web.test_layout_browser import CHROMIUM, CHROMIUM_ARGS, PHONE, SHOTS

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.mark.heavy(seconds=16)
def test_a_404_under_make_run_is_the_branded_page(tmp_path: Path, settings) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("walker", password="walker-pw")
    port = free_port()
    env = dict(worker_env(), HARDTESTS_SANDBOX_WORKERS="1", HARDTESTS_GENERATION_WORKERS="0",
               HARDTESTS_LLM_WORKERS="0")
    env.pop("DEBUG", None)  # as `make run`: DEBUG only with --dev
    log = tmp_path / "serve.log"
    serve = subprocess.Popen([sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)],
                             env=env, cwd=REPO, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                             start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{base}/healthz", alive=lambda: serve.poll() is None)
        SHOTS.mkdir(exist_ok=True)
        with sync_api.sync_playwright() as pw:
            chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = chromium.new_context(viewport={"width": PHONE, "height": 844}).new_page()
            page.goto(f"{base}/accounts/login/")
            page.fill("input[name=username]", "walker")
            page.fill("input[name=password]", "walker-pw")
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/")
            for path in ("/problems/99999/", "/no/such/page/"):
                response = page.goto(base + path)
                assert response is not None and response.status == 404, path
                html = page.content()
                assert "Nothing here" in page.locator("main h1").inner_text(), path
                assert "URLconf" not in html and "urlpatterns" not in html.lower() and "Traceback" not in html, path
                assert page.locator("header.site-header").is_visible(), path  # the site's own page
                assert page.evaluate("document.scrollingElement.scrollWidth - innerWidth") <= 0
            page.screenshot(path=str(SHOTS / "serve-404.png"))
            api = page.request.get(f"{base}/api/v1/no-such-endpoint")
            assert api.status == 404 and api.json()["code"] == "not_found"
            chromium.close()
    finally:
        if serve.poll() is None:
            serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=90)
    output = log.read_text()
    assert f"Listening at: {base}" in output  # gunicorn, as `make run`, not the development server
    assert "Traceback" not in output, output[-3000:]  # expected refusals log no traceback
