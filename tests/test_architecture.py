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


# -- file level: what import-linter's package contracts cannot see ---------------------------

import ast  # noqa: E402 - grouped with the checks that use it

PROJECT_PACKAGES = sorted(CONFIG["root_packages"])


def _modules() -> dict[str, Path]:
    found = {}
    for package in PROJECT_PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            name = ".".join(path.relative_to(REPO).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every project module `name` imports, at the top or inside a function (a late import
    closes a cycle just as well)."""
    out: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    out.add(f"{base}.{alias.name}")
                elif base in modules:
                    out.add(base)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in modules)
    out.discard(name)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_of_the_project_imports_itself_back_through_others() -> None:
    """No file-level import cycle anywhere (generation/, importers, the review apps included),
    counting imports inside functions."""
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    # A package's __init__ that only re-exports its own modules is a face, not a participant.
    graph = {n: {m for m in deps if not (n.startswith(m + ".") and modules[m].name == "__init__.py")}
             for n, deps in graph.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_sees_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _calls_of(function: str) -> set[str]:
    callers = set()
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called == function:
                    callers.add(name)
    return callers


def test_dead_runs_are_swept_by_the_janitor_alone() -> None:
    # Not by a page's GET (it wrote), not by every worker at start, not by the LLM-stage worker.
    assert _calls_of("stale_runs_sweep") == {"hardtests_web.ops.janitor"}


def test_a_generation_run_changes_status_only_in_its_lifecycle_module() -> None:
    """Every `.update(status=...)` of a GenerationRun (or `.create(status=...)`) is in
    generation/services.py: one place says how a run moves."""
    offenders = []
    for name, path in _modules().items():
        if name == "generation.services":
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in {"update", "create", "get_or_create", "update_or_create"}
                    and any(k.arg == "status" for k in node.keywords)):
                receiver = ast.get_source_segment(source, node.func.value) or ""
                if "GenerationRun" in receiver or "generation_runs" in receiver or receiver.endswith("runs"):
                    offenders.append(f"{name}:{node.lineno}")
    assert offenders == []
