"""The import-linter contracts (pyproject.toml, [tool.importlinter]) hold, and cover every package.

.ci/run runs `lint-imports` itself; these tests keep the contracts honest: a new top-level
package cannot escape them, and the checker really sees the imports it judges.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
LINT = [str(Path(sys.executable).parent / "lint-imports"), "--no-logo"]
NOT_PROJECT_CODE = {"tests", "bench"}


def lint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LINT, "--no-cache", *args], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_every_top_level_package_is_under_the_contracts() -> None:
    packages = {p.parent.name for p in REPO.glob("*/__init__.py")} - NOT_PROJECT_CODE
    assert packages - set(CONFIG["root_packages"]) == set()
    named: set[str] = set()
    for contract in CONFIG["contracts"]:
        for key in ("layers", "source_modules", "ancestors"):
            named.update(m.strip("()") for m in contract.get(key, []))
    # the site wiring sits on top of the layers and may import everything: it is still named there
    assert set(CONFIG["root_packages"]) - named == set()


def test_the_contracts_hold() -> None:
    result = lint()
    assert result.returncode == 0, result.stdout[-4000:]
    assert f"Contracts: {len(CONFIG['contracts'])} kept, 0 broken." in result.stdout


def test_a_contract_against_a_real_import_is_reported_broken(tmp_path: Path) -> None:
    # problems imports Django everywhere: a contract forbidding it must break, or the checker sees nothing.
    config = tmp_path / "importlinter.ini"
    roots = "\n    ".join(CONFIG["root_packages"])
    config.write_text(
        f"[importlinter]\nroot_packages =\n    {roots}\ninclude_external_packages = True\n\n"
        "[importlinter:contract:probe]\nname = probe\ntype = forbidden\n"
        "source_modules =\n    problems\nforbidden_modules =\n    django\n"
    )
    result = lint("--config", str(config))
    assert result.returncode == 1 and "probe BROKEN" in result.stdout, result.stdout[-2000:]
