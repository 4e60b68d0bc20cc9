"""One place defines each setting: core/config_registry.py (name, type, default, doc).

Every setting the product reads (`settings.NAME`, `api_setting("NAME")`, an environment variable
read by name) is a registry entry, every entry is read somewhere, settings.py takes every value
and default from the registry, and docs/configuration.md and .env.example are what
scripts/config_docs.py writes from it."""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
from django.conf import global_settings, settings

from core import env
from core.config_registry import COMPUTED, ENTRIES, REGISTRY, SETTINGS_PY, setting

REPO = Path(__file__).resolve().parents[2]
# The product: every package the import contracts name, but the client users install (it reads
# its own HARDTESTS_URL and HARDTESTS_TOKEN on the user's machine, docs/rl-clients.md).
PRODUCT = ("core", "sandbox", "api", "problems", "generation", "review", "curation", "hardtests_web")
NAME = r"[\"']([A-Z][A-Z0-9_]+)[\"']"
READS = {
    "settings.NAME": re.compile(r"\b(?:settings|conf)\.([A-Z][A-Z0-9_]+)\b"),  # conf: an alias curation uses
    "getattr(settings, NAME)": re.compile(r"getattr\(\s*(?:settings|conf)\s*,\s*" + NAME),
    "api_setting(NAME)": re.compile(r"\bapi_setting\(\s*" + NAME),
    "os.environ.get(NAME)": re.compile(r"(?:environ\.get|getenv|\benv\.get)\(\s*" + NAME),
    "os.environ[NAME]": re.compile(r"environ\[\s*" + NAME + r"\s*\]"),
    "env_*(NAME)": re.compile(r"\benv_(?:str|int|float|bool|list)\(\s*" + NAME),
    "read_*(NAME)": re.compile(r"\bread_(?:str|int|float|bool|list)\(\s*" + NAME),
    # A variable's name kept in a constant (the sandbox: ZYGOTE_ENV = "HARDTESTS_SANDBOX_ZYGOTE").
    "'HARDTESTS_...'": re.compile(r"[\"'](HARDTESTS_[A-Z0-9_]+)[\"']"),
}
# Django reads these itself (the last two have no default in global_settings).
DJANGO_OWN = {name for name in dir(global_settings) if name.isupper()} | {"ROOT_URLCONF", "ASGI_APPLICATION"}


@functools.cache
def _product_files() -> tuple[tuple[str, str], ...]:
    files = [("manage.py", (REPO / "manage.py").read_text())]
    for package in PRODUCT:
        files += [(str(path.relative_to(REPO)), path.read_text()) for path in sorted((REPO / package).rglob("*.py"))]
    return tuple(files)


def product_files() -> dict[str, str]:
    """Path -> text of every product module (a fresh dict: a test may add a line to one)."""
    return dict(_product_files())


def reads(files: dict[str, str]) -> dict[str, set[str]]:
    """Setting name -> the files that read it."""
    found: dict[str, set[str]] = {}
    for path, text in files.items():
        for pattern in READS.values():
            for name in pattern.findall(text):
                found.setdefault(name, set()).add(path)
    return found


def unregistered(files: dict[str, str]) -> dict[str, list[str]]:
    return {name: sorted(paths) for name, paths in reads(files).items()
            if name not in REGISTRY and name not in COMPUTED and name not in DJANGO_OWN}


def config_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_docs", REPO / "scripts" / "config_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_setting_the_product_reads_is_in_the_registry() -> None:
    files = product_files()
    assert len(reads(files)) > 150  # the patterns still find the reads
    assert unregistered(files) == {}


@pytest.mark.parametrize("line", [
    "x = settings.HARDTESTS_NEW_KNOB",
    'x = getattr(settings, "HARDTESTS_NEW_KNOB", 3)',
    'x = api_setting("HARDTESTS_NEW_KNOB")',
    'x = os.environ.get("NEW_KNOB", "")',
    'x = env_int("NEW_KNOB", 3)',
    'KNOB_ENV = "HARDTESTS_NEW_KNOB"',
])
def test_a_setting_read_but_not_registered_is_found(line: str) -> None:
    files = product_files()
    files["api/conf.py"] += "\n" + line + "\n"
    assert list(unregistered(files)) in (["HARDTESTS_NEW_KNOB"], ["NEW_KNOB"])


def test_every_registry_entry_is_read_where_it_says() -> None:
    settings_py = (REPO / SETTINGS_PY).read_text()
    unread = []
    for entry in ENTRIES:
        if entry.read_by == SETTINGS_PY:
            if not re.search(r"\bread_" + entry.type.__name__ + r'\(\s*"' + entry.name + '"', settings_py):
                unread.append(entry.name)
            continue
        place = REPO / entry.read_by
        texts = [p.read_text() for p in place.rglob("*.py")] if place.is_dir() else [place.read_text()]
        if not any(re.search(r"[\"'{]" + entry.name + r"[\"':}-]", text) for text in texts):
            unread.append(entry.name)
    assert unread == []


def test_every_django_setting_of_the_registry_is_used() -> None:
    """A setting settings.py makes and nothing reads is dead weight (Django reads its own)."""
    files = product_files()
    used = {name for name, paths in reads(files).items() if paths - {SETTINGS_PY}}
    settings_py = (REPO / SETTINGS_PY).read_text()
    made = [e.name for e in ENTRIES if e.read_by == SETTINGS_PY and re.search(rf"^{e.name} = ", settings_py, re.M)]
    assert len(made) > 80
    # used in settings.py itself: DEBUG, HARDTESTS_DEMO, DATABASE_URL, HARDTESTS_LLM_MODEL (the models' default)
    assert [name for name in made if name not in used and name not in DJANGO_OWN
            and len(re.findall(rf"\b{name}\b", settings_py)) < 2] == []


def test_settings_py_makes_only_registered_computed_or_django_settings() -> None:
    tree = ast.parse((REPO / SETTINGS_PY).read_text())
    assigned = {target.id for node in tree.body if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name) and target.id.isupper()
                and not target.id.startswith("_")}
    assigned |= {node.target.id for node in ast.walk(tree)
                 if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
    assert assigned - set(REGISTRY) - set(COMPUTED) - DJANGO_OWN == set()
    assert set(COMPUTED) - assigned == set(), "COMPUTED names a setting settings.py no longer makes"


def test_defaults_live_only_in_the_registry() -> None:
    """No reader writes a default of its own: the environment is read through the registry
    (core.env's parsers only there), and a Django setting as plain `settings.NAME`."""
    own = {"core/env.py", "core/config_registry.py"}
    parse = re.compile(r"\benv_(?:str|int|float|bool|list)\(")
    with_default = re.compile(r"getattr\(\s*settings\s*,\s*" + NAME + r"\s*,")
    found = [f"{path}: {m.group(0)}" for path, text in product_files().items() if path not in own
             for pattern in (parse, with_default) for m in pattern.finditer(text)]
    assert found == []


def test_registry_defaults_have_their_types_and_computed_ones_say_what_they_are() -> None:
    for entry in ENTRIES:
        value = entry.default_value()
        if value is None or callable(entry.default):
            assert entry.shown, f"{entry.name}: a computed default needs `shown`"
        if value is not None:
            assert type(value) is entry.type, entry.name  # exact: a bool is no int here
        if entry.type is list:
            assert all(isinstance(item, str) for item in value or []), entry.name
        assert entry.doc.strip() and "\n" not in entry.doc, entry.name
    assert len({e.name for e in ENTRIES}) == len(ENTRIES), "a name declared twice"


def test_the_django_settings_have_the_registry_types() -> None:
    checked = 0
    for entry in ENTRIES:
        if entry.read_by == SETTINGS_PY and hasattr(settings, entry.name):
            assert type(getattr(settings, entry.name)) is entry.type, entry.name
            checked += 1
    assert checked > 80


def test_the_sandbox_defaults_are_the_registry_defaults() -> None:
    """The sandbox reads its variables itself (it imports nothing of the project): its defaults
    are held equal here."""
    from sandbox import base, bwrap, cache

    assert setting("HARDTESTS_COMPILE_CACHE_MAX_MB").default == cache.DEFAULT_MAX_MB
    assert setting("HARDTESTS_COMPILE_MAX_ARTIFACT_MB").default == cache.DEFAULT_MAX_ARTIFACT_MB
    for name in (cache.MAX_MB_ENV, cache.MAX_ARTIFACT_MB_ENV, cache.WORK_DIR_ENV, base.ZYGOTE_ENV,
                 base.ALLOW_RUSAGE_ENV, bwrap.WARM_ENV, bwrap.SPARE_NICE_ENV):
        assert setting(name).read_by == "sandbox"


def test_api_setting_reads_the_registry() -> None:
    from api.conf import api_setting

    assert api_setting("HARDTESTS_API_RATE_LIMIT") == settings.HARDTESTS_API_RATE_LIMIT
    with pytest.raises(KeyError):
        api_setting("HARDTESTS_API_NO_SUCH_SETTING")
    with pytest.raises(TypeError):
        api_setting("HARDTESTS_SANDBOXFUSION_PREFIX")


def test_the_docs_and_env_example_are_written_from_the_registry() -> None:
    module = config_docs()
    for path, text in module.outputs().items():
        assert path.read_text() == text, f"{path.name} is stale: run .venv/bin/python scripts/config_docs.py"


def test_env_example_names_every_entry_and_copying_it_changes_no_default() -> None:
    """Parsed on its own: each entry has a line, and a line that is not commented out, read as the
    settings read it, gives the registry's default."""
    lines = (REPO / ".env.example").read_text().splitlines()
    named = {m[1]: m[0].startswith("#") for line in lines if (m := re.match(r"^(?:# )?([A-Z][A-Z0-9_]+)=(.*)$", line))}
    assert set(named) == set(REGISTRY)
    parsers = {str: env.env_str, int: env.env_int, float: env.env_float, bool: env.env_bool, list: env.env_list}
    mp = pytest.MonkeyPatch()
    try:
        for line in lines:
            if re.match(r"^[A-Z][A-Z0-9_]+=", line):
                name, value = line.split("=", 1)
                entry = setting(name)
                mp.setenv(name, value)
                assert parsers[entry.type](name, None) == entry.default_value(), name  # type: ignore[operator]
    finally:
        mp.undo()


def test_the_docs_table_names_every_entry_with_its_default() -> None:
    rows = [line.split(" | ") for line in (REPO / "docs" / "configuration.md").read_text().splitlines()
            if line.startswith("| `")]
    documented = {row[0].strip("| `"): row[2] for row in rows}
    assert set(documented) == set(REGISTRY)
    for entry in ENTRIES:
        value = entry.default_value()
        if not entry.shown and value not in ("", [], None):
            assert documented[entry.name] == f"`{config_docs().env_text(value)}`", entry.name
