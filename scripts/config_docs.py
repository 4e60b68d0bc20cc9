"""Write docs/configuration.md and .env.example from the settings registry (core/config_registry.py).

    .venv/bin/python scripts/config_docs.py           # rewrite both files
    .venv/bin/python scripts/config_docs.py --check   # exit 1 when either differs from the registry

tests/hardtests_web/test_configuration_docs.py runs the check, so a setting changed in the
registry and not here fails the tests until this script is run.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a file, from anywhere
    sys.path.insert(0, str(REPO))

from core.config_registry import ENTRIES, FROM_FILE, SECTIONS, Setting, Value  # noqa: E402

DOCS = REPO / "docs" / "configuration.md"
ENV_EXAMPLE = REPO / ".env.example"
GENERATED = "scripts/config_docs.py writes it from core/config_registry.py: edit the registry, then run the script"

SECTION_NOTES = {
    "Sandbox": "Read from the environment by the sandbox itself, which imports nothing of the project (and `CC` by "
               "the evaluation's near-duplicate kernels).",
    "compose.yaml only": "`docker compose` substitutes these into `compose.yaml` from `.env`; the passwords of its "
                         "services are files under `secrets/` (see the head of `compose.yaml`).",
}
TYPE_NAMES = {str: "text", int: "integer", float: "number", bool: "boolean", list: "list"}


def env_text(value: Value) -> str:
    """A value as the environment spells it."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list):
        return ",".join(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def default_markdown(entry: Setting) -> str:
    if entry.shown:
        return entry.shown
    value = entry.default_value()
    assert value is not None, f"{entry.name}: a computed default needs `shown`"
    text = env_text(value)
    return f"`{text}`" if text else "empty"


def plain(markdown: str) -> str:
    """Markdown as a comment line shows it: links as their text, no backticks."""
    return re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", markdown).replace("`", "")


def configuration_md() -> str:
    lines = [
        "# Configuration",
        "",
        f"<!-- {GENERATED}. -->",
        "",
        "Nothing is required for `make run`. Every environment variable the project reads, with its type and "
        "default, is declared once in `core/config_registry.py`; this page and `.env.example` are written from it "
        "(`scripts/config_docs.py`), and a test holds the code, the registry and both files equal. A boolean is "
        "`1`/`0` (also `true`/`false`, `yes`/`no`, `on`/`off`); a list is comma-separated.",
        "",
        f"Given as files: {', '.join(f'`{name}`' for name in FROM_FILE)} may each come from a file instead, "
        "`NAME_FILE` naming it (compose secrets, systemd credentials); the file is read when `NAME` itself is unset.",
    ]
    for section in SECTIONS:
        lines += ["", f"## {section}", ""]
        if section in SECTION_NOTES:
            lines += [SECTION_NOTES[section], ""]
        lines += ["| variable | type | default | meaning |", "|---|---|---|---|"]
        for entry in ENTRIES:
            if entry.section == section:
                doc = entry.doc.replace("|", "\\|")
                lines.append(f"| `{entry.name}` | {TYPE_NAMES[entry.type]} | {default_markdown(entry)} | {doc} |")
    return "\n".join(lines) + "\n"


def env_example() -> str:
    lines = [
        "# Every variable the project reads, with its default: scripts/config_docs.py writes this file from",
        "# core/config_registry.py (edit the registry, then run the script); docs/configuration.md is the same",
        "# list as a table. None is needed for `make run`; production sets HARDTESTS_DEMO=0, SECRET_KEY (or",
        "# SECRET_KEY_FILE), DATABASE_URL and REDIS_URL.",
        "# A commented-out variable has a default computed at start (or is set by the project itself): leave it",
        "# out unless you mean to change it, since an empty value is not always the same as no value.",
        *textwrap.wrap(f"{', '.join(FROM_FILE)}: each may be given as NAME_FILE, a file holding the value "
                       "(compose secrets), read when NAME itself is unset.", 108,
                       initial_indent="# ", subsequent_indent="# "),
    ]
    for section in SECTIONS:
        lines += ["", f"## {section}"]
        if section in SECTION_NOTES:
            lines += textwrap.wrap(plain(SECTION_NOTES[section]), 108, initial_indent="# ", subsequent_indent="# ")
        for entry in ENTRIES:
            if entry.section != section:
                continue
            comment = plain(entry.doc)
            value = entry.default_value()
            if entry.shown:
                comment += f" (default: {plain(entry.shown)})"
            lines += textwrap.wrap(comment, 108, initial_indent="# ", subsequent_indent="#   ")
            if entry.leave_unset or value is None:
                lines.append(f"# {entry.name}=" + (env_text(value) if entry.internal and value is not None else ""))
            else:
                lines.append(f"{entry.name}={env_text(value)}")
    return "\n".join(lines) + "\n"


def outputs() -> dict[Path, str]:
    return {DOCS: configuration_md(), ENV_EXAMPLE: env_example()}


def main(argv: list[str]) -> int:
    stale = [path for path, text in outputs().items() if not path.exists() or path.read_text() != text]
    if "--check" in argv:
        for path in stale:
            print(f"{path.relative_to(REPO)} differs from the registry: run .venv/bin/python scripts/config_docs.py")
        return 1 if stale else 0
    for path, text in outputs().items():
        path.write_text(text)
    print("wrote", ", ".join(str(path.relative_to(REPO)) for path in outputs()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
