"""One list of configuration: what settings.py (and the sandbox, which reads its own environment)
reads is in .env.example, and .env.example and docs/configuration.md name the same variables."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SERVER_PACKAGES = ("core", "sandbox", "api", "problems", "generation", "review", "hardtests_web")


def settings_names() -> set[str]:
    text = (REPO / "hardtests_web" / "settings.py").read_text()
    return set(re.findall(r'env_\w+\(\s*"([A-Z][A-Z0-9_]+)"', text))


def code_names() -> set[str]:
    """HARDTESTS_* names read outside settings (the sandbox has no Django), as whole string literals."""
    found: set[str] = set()
    for package in SERVER_PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            found.update(re.findall(r"""["'](HARDTESTS_[A-Z0-9_]+)["']""", path.read_text()))
    return found


def example_names() -> set[str]:
    return set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", (REPO / ".env.example").read_text(), re.MULTILINE))


def docs_names() -> set[str]:
    names: set[str] = set()
    for line in (REPO / "docs" / "configuration.md").read_text().splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([A-Z][A-Z0-9_]+)`", line.split("|")[1]))
    return names


def test_every_variable_the_code_reads_is_in_env_example() -> None:
    assert len(settings_names()) > 50  # the pattern still finds the typed helpers' calls
    assert (settings_names() | code_names()) - example_names() == set()


def test_the_docs_list_exactly_the_variables_of_env_example() -> None:
    assert docs_names() - example_names() == set(), "documented but not in .env.example"
    assert example_names() - docs_names() == set(), "in .env.example but not in docs/configuration.md"
