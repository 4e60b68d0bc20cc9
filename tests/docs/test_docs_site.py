"""The docs site and the app's pages as a reader gets them: every link of the built site resolves,
nothing is requested from another host (fonts, scripts, images), no page cites a file outside
the repository (a design note, a fixture folder beside the checkout), and the names the deploy
pages give (gunicorn's config, the systemd units) are the ones the repository ships."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.conftest import REPO

DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
# Tags whose URL attribute the browser fetches by itself (an <a> is only followed when clicked).
FETCHING = {"link": "href", "script": "src", "img": "src", "iframe": "src", "source": "src", "video": "src",
            "audio": "src", "embed": "src", "object": "data", "track": "src", "input": "src"}
OUTSIDE_FILE = re.compile(r"DESIGN\.md|\.\./shared|/work/|shared/fixtures|\.\./\.\./")


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.fetched: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if "id" in values:
            self.ids.add(values["id"])
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
        if tag in FETCHING and values.get(FETCHING[tag]):
            self.fetched.append(values[FETCHING[tag]])
        if tag == "link" and values.get("rel") in ("stylesheet", "preload", "icon", "preconnect", "dns-prefetch"):
            self.fetched.append(values.get("href", ""))


def _parse(path: Path) -> _Refs:
    refs = _Refs()
    refs.feed(path.read_text(errors="replace"))
    return refs


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=600, env={"NO_MKDOCS_2_WARNING": "1",
                                                                           "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    yield out


def _outside(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") or url.startswith("//")


def test_no_docs_page_cites_a_file_outside_the_repository() -> None:
    found = []
    for page in [*PAGES, REPO / "README.md"]:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            if OUTSIDE_FILE.search(line):
                found.append(f"{page.relative_to(REPO)}:{number}: {line.strip()[:120]}")
            for target in re.findall(r"\]\(([^)#\s]+)", line):
                if _outside(target) or target.startswith("mailto:"):
                    continue
                resolved = (page.parent / unquote(target)).resolve()
                if not resolved.is_relative_to(REPO) or not resolved.exists():
                    found.append(f"{page.relative_to(REPO)}:{number}: link to {target}")
    assert found == []


def test_every_link_of_the_built_docs_resolves(site: Path) -> None:
    # 404.html is served at whatever address was missing: its links are absolute to the site root.
    pages = {p: _parse(p) for p in site.rglob("*.html") if p.name != "404.html" or p.parent != site}
    broken = []
    for page, refs in pages.items():
        for href in [*refs.links, *refs.fetched]:
            if not href or _outside(href) or href.startswith(("mailto:", "javascript:", "data:")):
                continue
            parts = urlsplit(href)
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if target.is_dir() or parts.path.endswith("/"):
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)} -> {href}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)} -> {href} (no such anchor)")
    assert len(pages) > 20 and broken == []


def test_the_docs_site_requests_nothing_from_another_host(site: Path) -> None:
    fetched = []
    for page in site.rglob("*.html"):
        fetched += [f"{page.relative_to(site)}: {u}" for u in _parse(page).fetched if _outside(u)]
    for sheet in site.rglob("*.css"):
        fetched += [f"{sheet.relative_to(site)}: {u}" for u in
                    re.findall(r"(?:url\(\s*['\"]?|@import\s+['\"])((?:https?:)?//[^'\")\s]+)", sheet.read_text())]
    assert fetched == []  # Google Fonts, a CDN script: none (the site works offline)


def test_no_app_page_or_asset_names_an_outside_host() -> None:
    found = []
    fetch = re.compile(r"<(?:link|script|img|iframe|source|video|audio|embed)\b[^>]*\b(?:src|href)=\"((?:https?:)?//[^\"]+)",
                       re.IGNORECASE)
    for template in (REPO / "templates").rglob("*.html"):
        found += [f"{template.relative_to(REPO)}: {u}" for u in fetch.findall(template.read_text())]
    static = REPO / "static"
    for sheet in static.rglob("*.css"):
        found += [f"{sheet.relative_to(REPO)}: {u}" for u in
                  re.findall(r"(?:url\(\s*['\"]?|@import\s+['\"])((?:https?:)?//[^'\")\s]+)", sheet.read_text())]
    # Our own scripts fetch nothing from another host (vendored libraries mention their sites in comments).
    for script in (static / "js").rglob("*.js"):
        found += [f"{script.relative_to(REPO)}: {u}" for u in re.findall(r"https?://[^\s\"')]+", script.read_text())]
    assert found == []


def test_one_gunicorn_config_name_everywhere() -> None:
    """The web process is `gunicorn -c python:hardtests_web.ops.gunicorn` (it drains on SIGTERM);
    nothing a reader copies names the older module without the drain."""
    places = [*PAGES, REPO / "README.md", REPO / "Dockerfile", REPO / "compose.yaml", REPO / ".env.example",
              *(REPO / "deploy").rglob("*"), REPO / "Makefile"]
    named = [str(p.relative_to(REPO)) for p in places if p.is_file() and "hardtests_web.gunicorn_conf" in p.read_text()]
    assert named == []
    assert "hardtests_web.ops.gunicorn" in (DOCS / "deployment.md").read_text()


def test_the_deployment_page_names_every_systemd_unit_shipped() -> None:
    text = (DOCS / "deployment.md").read_text()
    units = sorted(p.name.removesuffix(".service") for p in (REPO / "deploy" / "systemd").glob("*.service"))
    assert units and [u for u in units if u.rstrip("@") not in text] == []


def test_the_curation_demo_button_counts_its_pretend_models() -> None:
    from curation.demo import DEMO_MODELS

    words = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
    text = (REPO / "templates" / "curation" / "list.html").read_text()
    assert f"{words[len(DEMO_MODELS)]} pretend models" in text
