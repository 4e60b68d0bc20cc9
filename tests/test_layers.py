"""The import graph between the project's packages follows the layer order, with no cycles.

Every import counts, module-level or inside a function: a lazy import against the order is
still a dependency (the page or job that runs it needs the other package). The order, bottom
to top (README "Architecture"):

    hardtests_client  the Python client users install: imports nothing of the project (the API
                    shares its code extraction with it)
    sandbox         the execution engine, a plain library: imports nothing of the project
    core            env, htmx, permissions, queues, embedded services: imports no app
    problems        the catalogue
    generation      the LLM side
    review          studies and evaluation
    api             the HTTP API
    hardtests_web   the site wiring (settings, urls, serve): may import everything
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ORDER = ["hardtests_client", "sandbox", "core", "problems", "generation", "review", "api", "hardtests_web"]
# What each package may import besides the packages below it in ORDER.
EXCEPTIONS: dict[str, set[str]] = {
    "hardtests_client": set(),  # a library users install beside their training loop
    "sandbox": set(),  # not even core: the sandbox must run with no Django at all
}


def allowed(package: str) -> set[str]:
    if package in EXCEPTIONS:
        return EXCEPTIONS[package]
    return set(ORDER[: ORDER.index(package)])


def imports_of(path: Path) -> set[str]:
    """Top-level project packages a module imports (absolute imports only: relative ones stay inside)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & set(ORDER)


def package_graph() -> dict[str, dict[str, list[str]]]:
    """package -> imported package -> the files that import it."""
    graph: dict[str, dict[str, list[str]]] = {p: {} for p in ORDER}
    for package in ORDER:
        for path in sorted((REPO / package).rglob("*.py")):
            if "demo_data" in path.parts:  # programs run in the sandbox, not project code
                continue
            for target in imports_of(path) - {package}:
                graph[package].setdefault(target, []).append(str(path.relative_to(REPO)))
    return graph


def test_every_package_of_the_order_exists():
    assert [p for p in ORDER if not (REPO / p / "__init__.py").exists()] == []


@pytest.mark.parametrize("package", ORDER)
def test_imports_follow_the_layer_order(package):
    against = {t: files for t, files in package_graph()[package].items() if t not in allowed(package)}
    assert against == {}, f"{package} imports packages above it (or forbidden to it): {against}"


def test_no_cycles_between_packages():
    graph = {p: set(targets) for p, targets in package_graph().items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt):], nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for package in ORDER:
        if package not in state:
            visit(package, [package])
    assert cycles == []


def test_the_checker_sees_a_violation(tmp_path):
    """The graph reader is not blind: an upward import inside a function is found."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from review.models import Study\n    import generation.jobs\n")
    assert imports_of(module) == {"review", "generation"}
