"""A new user's walk, as a test: from each role's home, follow every internal link (a bounded
number of pages, at most two of each address shape) in real Chromium and fail on a 5xx, a raw ISO
timestamp, a "(s)" plural, a page that scrolls sideways at a phone's width, or a console error
(the `open_page` fixture fails on those). Links to downloads are fetched, not opened, and must
not be broken.

Screenshots go to screenshots/crawl-<role>-<n>.png (gitignored).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

from tests.web.test_layout_browser import PHONE, SHOTS, horizontal_overflow, open_page, world  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MAX_PAGES = 45
ISO = re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d")
PLURAL_S = re.compile(r"[A-Za-z]\(s\)")
# Followed by GET but not opened: they download a file (the crawl only checks they answer).
DOWNLOAD = re.compile(r"(\.zip|\.csv|\.jsonl|\.tex|/(input|output)/|/download)$")
NEVER = re.compile(r"^/(admin|rq|accounts/logout)/")

# What a person reads: the page's text outside code, test data and form fields; a run's log
# (<pre class="log">) is prose written by the workers and is read too.
PROSE = """() => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const out = [];
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!el || el.closest('code, .highlight, textarea, script, style, kbd, samp, select, .mono, pre:not(.log)')) continue;
    out.push(walker.currentNode.textContent);
  }
  return out.join(' ');
}"""


@pytest.fixture
def run_with_log(world: dict) -> int:  # noqa: F811
    """A finished run whose log is what workers really write: UTC clock stamps and "(s)" words."""
    from generation.models import GenerationRun
    from problems.models import Problem

    run = GenerationRun.objects.create(
        problem=Problem.objects.get(pk=world["problem"]), mode=GenerationRun.Mode.FROM_KIT,
        status=GenerationRun.Status.SUCCEEDED, stage=GenerationRun.Stage.DONE,
        log="06:42:29 oracle oracle 1 (rank 1): passes 2 sample/official test(s)\n"
            "06:42:42 queued judging of 1 candidate(s) against suite v1\n")
    return run.pk


def _shape(path: str) -> str:
    parts = urlparse(path)
    keys = sorted(k.split("=")[0] for k in parts.query.split("&") if k)
    return re.sub(r"\d+", "N", parts.path) + "?" + ",".join(keys)


def crawl(page: Any, *, limit: int = MAX_PAGES, check_width: bool = False) -> tuple[list[str], dict[str, Any]]:
    base = page.base
    queue, seen, shapes, downloads = ["/"], {"/"}, {}, set()
    visited: list[str] = []
    problems: dict[str, Any] = {}
    while queue and len(visited) < limit:
        path = queue.pop(0)
        response = page.goto(base + path)
        visited.append(path)
        status = response.status if response else 0
        if status >= 500:
            problems[path] = f"HTTP {status}"
            continue
        prose = page.evaluate(PROSE)
        if (iso := ISO.search(prose)) or (plural := PLURAL_S.search(prose)):
            found = iso or plural
            problems[path] = prose[max(0, found.start() - 40):found.end() + 20]
        if check_width and (overflow := horizontal_overflow(page)) > 0:
            problems[path] = f"scrolls sideways by {overflow} px"
        if len(visited) % 10 == 1:
            page.screenshot(path=str(SHOTS / f"crawl-{page.who}-{len(visited)}.png"))
        for href in page.eval_on_selector_all("a[href]", "els => els.map(a => a.getAttribute('href'))"):
            if not href or href.startswith(("#", "mailto:", "javascript:")):
                continue
            url = urlparse(urldefrag(urljoin(page.url, href))[0])
            if url.netloc != urlparse(base).netloc or NEVER.match(url.path):
                continue
            target = url.path + (f"?{url.query}" if url.query else "")
            if DOWNLOAD.search(url.path):
                downloads.add(target)
                continue
            if target in seen or shapes.get(_shape(target), 0) >= 2:
                continue
            shapes[_shape(target)] = shapes.get(_shape(target), 0) + 1
            seen.add(target)
            queue.append(target)
    for target in sorted(downloads)[:20]:
        if (answer := page.request.get(base + target)).status >= 400:
            problems[target] = f"download answers HTTP {answer.status}"
    return visited, problems


@pytest.mark.parametrize(("who", "width"), [("maint", 1366), ("alice", PHONE)])
def test_every_page_a_role_reaches_reads_right(run_with_log, open_page, world, who: str, width: int) -> None:  # noqa: F811
    page = open_page(who, width)
    page.who = f"{who}-{width}"
    visited, problems = crawl(page, check_width=width == PHONE)
    assert problems == {}
    # The walk reached the pages that matter for the role (not just home and a list).
    must = ["/problems/", f"/problems/{world['problem']}/"] + (
        [f"/runs/{run_with_log}/", "/evaluation/", "/account/tokens/"] if who == "maint" else ["/studies/queue/"])
    assert all(path in visited for path in must), (must, visited)
    assert len(visited) >= 15, visited
