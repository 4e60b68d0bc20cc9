"""No product code uses django.test's override_settings (or modify_settings).

They change settings for the whole process and send setting_changed signals: around a curation
chunk or a stand-in LLM they changed what every other thread of the worker saw. Product code
passes a parameter instead (judge_code(parallel=..., kill_order=...), an LLMConfig to the LLM
client). Tests may use them (pytest-django's `settings` fixture is the same thing).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# the tests, and what is not the project's source (installed packages, run-time files)
SKIPPED = {"tests", ".venv", "venv", "var", "node_modules", "site", "build", "dist"}
USE = re.compile(r"\b(override_settings|modify_settings)\b")


def product_sources(root: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):
        # pruned, not filtered: the virtualenv alone holds tens of thousands of files
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"
                   and not (Path(folder) == root and d in SKIPPED)]
        found += [Path(folder) / name for name in files if name.endswith(".py")]
    return sorted(found)


def uses(root: Path) -> list[str]:
    """Each line that names override_settings or modify_settings, as `path:line: text`."""
    return [f"{path.relative_to(root)}:{number}: {line.strip()}"
            for path in product_sources(root)
            for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if USE.search(line)]


def test_no_product_code_overrides_settings() -> None:
    sources = product_sources(REPO)
    # the walk reaches the apps, their migrations, the scripts and the benches
    names = {p.relative_to(REPO).as_posix() for p in sources}
    assert {"generation/llm.py", "curation/services.py", "bench/kill_order.py", "manage.py"} <= names
    assert any("/migrations/" in n for n in names) and not any(n.startswith("tests/") for n in names)
    found = uses(REPO)
    assert not found, ("override_settings/modify_settings in product code (pass a parameter instead):\n"
                       + "\n".join(found))


def test_the_check_names_the_file_and_line_of_a_use(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "services.py").write_text("import os\nfrom django.test import override_settings\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("from django.test import override_settings\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "lib.py").write_text("override_settings = None\n")
    assert uses(tmp_path) == ["app/services.py:2: from django.test import override_settings"]
