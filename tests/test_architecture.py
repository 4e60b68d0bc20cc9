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
import functools  # noqa: E402


@functools.cache
def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once a process: the checks below walk every module of the
    project, six of them (parsing them all each time was 8 s of CPU a run). Walked, never changed."""
    return ast.parse(_source(path))

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
    for node in ast.walk(_tree(path)):
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
        tree = _tree(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called == function:
                    callers.add(name)
    return callers


def test_dead_jobs_are_swept_by_the_janitor_alone() -> None:
    # Not by a page's GET (it wrote), not by every worker at start, not by the LLM-stage worker:
    # each kind's sweep runs through core.joblife.sweep, which the janitor alone calls.
    assert _calls_of("sweep") == {"hardtests_web.ops.janitor"}
    assert _calls_of("sweep_dead") <= {"core.joblife", "problems.jobs"}
    assert _calls_of("stale_runs_sweep") == _calls_of("curation_jobs_sweep") == set()  # named by their JobKind


# Where a long job kind's status may be written besides core.joblife: its own lifecycle module,
# for the moves only it has (a campaign run's two queues, a curation job's resume).
STATUS_WRITERS = {"generation_run": {"generation.services"}, "curation_job": {"curation.lifecycle"}}


def test_a_long_job_changes_status_only_in_the_lifecycle_modules() -> None:
    """Every `.update(status=...)` / `.create(status=...)` of a long job kind's rows (core.joblife's
    kinds: generation runs, curation jobs, evaluation reports, judging tasks, validator trials,
    suite additions) is in core/joblife.py or in the kind's own lifecycle module: one place says
    how each kind moves."""
    from core import joblife

    kinds = joblife.kinds()
    assert {kind.name for kind in kinds} >= set(STATUS_WRITERS)
    receivers: dict[str, set[str]] = {}
    for kind in kinds:
        related = {f.remote_field.related_name for f in kind.model._meta.fields
                   if f.remote_field is not None and f.remote_field.related_name not in (None, "+")}
        receivers[kind.name] = {kind.model.__name__, *related}  # type: ignore[arg-type]
    offenders = []
    for name, path in _modules().items():
        if name == "core.joblife":
            continue
        source = _source(path)
        for node in ast.walk(_tree(path)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in {"update", "create", "get_or_create", "update_or_create", "bulk_update"}
                    and any(k.arg == "status" for k in node.keywords)):
                receiver = ast.get_source_segment(source, node.func.value) or ""
                for kind_name, names in receivers.items():
                    if any(n in receiver for n in names) and name not in STATUS_WRITERS.get(kind_name, set()):
                        offenders.append(f"{name}:{node.lineno} ({kind_name})")
    assert offenders == []


# -- the maps: docs/architecture.md's layer table is generated from the contracts -------------

ARCHITECTURE_DOC = REPO / "docs" / "architecture.md"
MAP_START = "<!-- layers: generated from pyproject.toml by `python tests/test_architecture.py`; edit the contracts, not this -->"
MAP_END = "<!-- /layers -->"
# Code that is not under the contracts: it may import any layer, and no project module imports it.
OUTSIDE = {"tests": "the test suite", "bench": "benchmark scripts that print numbers",
           "scripts": "bootstrap, CI steps, the smoke test"}


def _names(modules: list[str]) -> str:
    return ", ".join(f"`{m}`" for m in modules)


def _cell(text: str) -> str:
    # import-linter writes independent layers as `a | b`; a bare | would end a table cell
    return text.replace("|", "\\|")


def layer_map(config: dict[str, object] = CONFIG) -> str:
    """The layer table and the contract table, from [tool.importlinter] alone."""
    contracts: list[dict[str, object]] = config["contracts"]  # type: ignore[assignment]
    layers = next(c for c in contracts if c["type"] == "layers")
    forbidden = {m: c for c in contracts if c["type"] == "forbidden" for m in c["source_modules"]}  # type: ignore[attr-defined]
    rows = ["| layer, top first | packages | may import |", "|---|---|---|"]
    order: list[str] = layers["layers"]  # type: ignore[assignment]
    for position, layer in enumerate(order, 1):
        members = [m.strip() for m in layer.replace(":", "|").split("|")]
        below = "every layer below" if position < len(order) else "no layer"
        if len(members) > 1 and "|" in layer:
            below += " (these are independent: neither imports the other)"
        if members[0] in forbidden:
            below += f"; never {_names(forbidden[members[0]]['forbidden_modules'])}"  # type: ignore[arg-type]
        rows.append(f"| {position} | {_names(members)} | {_cell(below)} |")
    in_layers = {m.strip() for layer in order for m in layer.replace(":", "|").split("|")}
    for package in config["root_packages"]:  # type: ignore[attr-defined]
        if package not in in_layers:
            banned = forbidden[package]["forbidden_modules"] if package in forbidden else []
            project = [m for m in banned if m in config["root_packages"]]  # type: ignore[operator]
            others = [m for m in banned if m not in config["root_packages"]]  # type: ignore[operator]
            if set(project) == set(config["root_packages"]) - {package}:  # type: ignore[operator]
                allowed = "nothing of the project"
            else:
                allowed = f"anything but {_names(project)}" if project else "anything"
            allowed += f", and not {_names(others)}" if others else ""
            rows.append(f"| beside the layers (any layer may import it) | `{package}` | {allowed} |")
    for folder, what in OUTSIDE.items():
        rows.append(f"| outside the contracts ({what}) | `{folder}/` | any layer; no project package imports it |")
    table = ["| contract | what it forbids |", "|---|---|"]
    for contract in contracts:
        kind = contract["type"]
        if kind == "layers":
            what = "an import upwards: " + " > ".join(
                _names([m.strip() for m in layer.replace(":", "|").split("|")]) for layer in order)
        elif kind == "forbidden":
            what = f"{_names(contract['source_modules'])} importing {_names(contract['forbidden_modules'])}"  # type: ignore[arg-type]
        elif kind == "acyclic_siblings":
            what = f"a cycle among the modules of one package, at every depth: {_names(contract['ancestors'])}"  # type: ignore[arg-type]
        else:
            what = f"({kind})"
        table.append(f"| {_cell(str(contract['name']))} | {_cell(what)} |")
    return "\n".join([MAP_START, "", *rows, "", *table, "", MAP_END])


def test_the_layer_table_in_the_docs_is_the_contracts() -> None:
    doc = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    start, end = doc.index(MAP_START), doc.index(MAP_END) + len(MAP_END)
    assert doc[start:end] == layer_map(), "run `python tests/test_architecture.py` to write the table again"


def test_the_layer_table_names_every_package_and_follows_a_changed_contract() -> None:
    text = layer_map()
    for package in [*CONFIG["root_packages"], *OUTSIDE]:
        assert f"`{package}" in text
    assert "| 3 | `review`, `curation` | every layer below (these are independent" in text
    # a probe: a contract moved in pyproject.toml moves in the table
    changed = {**CONFIG, "contracts": [dict(c) for c in CONFIG["contracts"]]}
    layers = next(c for c in changed["contracts"] if c["type"] == "layers")
    layers["layers"] = [m for m in layers["layers"] if m != "generation"]
    assert "| 4 | `generation` |" in text
    assert "| 4 | `problems` |" in layer_map(changed)
    assert "| beside the layers (any layer may import it) | `generation` | anything |" in layer_map(changed)


def test_no_project_module_imports_tests_bench_or_scripts() -> None:
    offenders = []
    for name, path in _modules().items():
        for node in ast.walk(_tree(path)):
            targets = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            offenders += [f"{name} -> {t}" for t in targets if t.split(".")[0] in OUTSIDE]
    assert offenders == []


# -- no module imports a migration ---------------------------------------------------------------

def _migration_imports(tree: ast.AST) -> list[str]:
    """The project migrations `tree` imports: by an import statement, or by import_module /
    __import__ with a literal name (how problems.selectors.search once reached migration 0004)."""
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [f"{node.module or ''}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in {"import_module", "__import__"} and node.args and isinstance(node.args[0], ast.Constant):
                names = [str(node.args[0].value)]
        found += [n for n in names if n.split(".")[0] in CONFIG["root_packages"] and "migrations" in n.split(".")[1:-1]]
    return found


def test_no_module_imports_a_migration() -> None:
    """Code a migration and the app share lives in a normal module both import
    (problems.search_index): a migration is history, and importing one ties the running code to
    a file Django may squash."""
    offenders = {}
    for folder in [*CONFIG["root_packages"], "bench", "scripts", "tests"]:
        for path in (REPO / folder).rglob("*.py"):
            found = _migration_imports(_tree(path))
            if found:
                offenders[str(path.relative_to(REPO))] = found
    assert offenders == {}


def test_the_migration_finder_sees_each_way_of_importing_one() -> None:
    probe = ast.parse(
        "from importlib import import_module\n"
        "def f():\n    m = import_module('problems.migrations.0004_problem_search_index')\n"
        "x = __import__('review.migrations.0001_initial')\n"
        "import curation.migrations.squashed\n"
        "from generation.migrations import initial\n"
        "from django.db import migrations\n"
        "import problems.search_index\n"
    )
    assert sorted(_migration_imports(probe)) == [
        "curation.migrations.squashed", "generation.migrations.initial",
        "problems.migrations.0004_problem_search_index", "review.migrations.0001_initial",
    ]


def test_migration_0004_installs_the_index_the_search_repair_installs() -> None:
    # Read the migration as Django does, not by importing it.
    from django.db.migrations.loader import MigrationLoader
    from django.db.migrations.operations import RunPython
    from django.test import override_settings

    from problems import search_index

    # (the fast tier's --nomigrations hides migrations through MIGRATION_MODULES)
    with override_settings(MIGRATION_MODULES={}):
        loader = MigrationLoader(None)
    operation = loader.get_migration("problems", "0004_problem_search_index").operations[0]
    assert isinstance(operation, RunPython) and operation.reverse_code is not None
    calls: list[str] = []

    class Editor:
        class connection:  # noqa: N801 - the shape of a schema editor's attribute
            vendor = "sqlite"

        def execute(self, sql: str) -> None:
            calls.append(sql)

    operation.code(None, Editor())
    assert calls == list(search_index.SQLITE_INSTALL) and len(calls) == 5
    assert calls[0].startswith("CREATE VIRTUAL TABLE IF NOT EXISTS problems_problem_fts USING fts5(")
    Editor.connection.vendor = "postgresql"
    calls.clear()
    operation.reverse_code(None, Editor())
    assert calls == ["DROP INDEX IF EXISTS problems_problem_search_gin"]


# -- imports inside functions: their number only goes down ---------------------------------------

# Project imports (of a root package, or relative) inside a function body, outside migrations,
# counted as statements (77 at the start of round 4, 72 now). Most hide no cycle and can move to the top;
# this bound lets them only go down. Lower it when you move some.
LATE_IMPORTS_AT_MOST = 72


def _late_imports_in(name: str, tree: ast.Module) -> list[str]:
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                if isinstance(child, ast.ImportFrom):
                    targets = ["."] if child.level else [child.module or ""]
                else:
                    targets = [a.name for a in child.names]
                if any(t == "." or t.split(".")[0] in CONFIG["root_packages"] for t in targets):
                    found.append(f"{name}:{child.lineno}")
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(tree, False)
    return found


def _late_imports() -> list[str]:
    return [hit for name, path in _modules().items() for hit in _late_imports_in(name, _tree(path))]


def test_imports_inside_functions_only_go_down() -> None:
    late = _late_imports()
    assert len(late) <= LATE_IMPORTS_AT_MOST, f"{len(late)} project imports inside functions: {late}"


def test_the_late_import_counter_counts_project_imports_in_functions_only() -> None:
    source = (
        "from problems.models import Problem\n"          # top: not counted
        "def f():\n"
        "    from problems.models import Suite\n"        # counted
        "    import json\n"                              # not the project's
        "    class C:\n"
        "        def g(self):\n"
        "            from . import services\n"           # relative, nested: counted
        "            import core.queues, os\n"           # counted once
    )
    assert _late_imports_in("m", ast.parse(source)) == ["m:3", "m:7", "m:8"]


if __name__ == "__main__":
    # Write the layer table of docs/architecture.md again from the contracts.
    doc = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    start, end = doc.index(MAP_START), doc.index(MAP_END) + len(MAP_END)
    ARCHITECTURE_DOC.write_text(doc[:start] + layer_map() + doc[end:], encoding="utf-8")
    print(f"wrote {ARCHITECTURE_DOC.relative_to(REPO)}")
