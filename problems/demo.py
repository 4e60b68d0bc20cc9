"""The bundled demo problems (problems/demo_data/), loaded through the native importer.

Each folder holds problem.json, statement.md, solutions/ and kit/; problem.json names the
files, so the folder reads naturally and the importer sees an ordinary native row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from core.permissions import ANNOTATORS, MAINTAINERS
from problems.importers.native import native_row_parse, native_row_write
from problems.models import Problem, TestCase

DEMO_DIR = Path(__file__).resolve().parent / "demo_data"
DEMO_SOURCE = "demo"

DEMO_USERS = (
    # (username, password, group); printed by `make run` so a visitor can log in.
    ("maintainer", "maintainer-demo", MAINTAINERS),
    ("annotator1", "annotator-demo", ANNOTATORS),
    ("annotator2", "annotator-demo", ANNOTATORS),
)


def _read(folder: Path, name: str | None) -> str | None:
    if not name:
        return None
    return (folder / name).read_text()


def demo_row(folder: Path) -> dict[str, Any]:
    meta = json.loads((folder / "problem.json").read_text())
    row: dict[str, Any] = {k: v for k, v in meta.items() if k not in ("solutions", "kit")}
    row["source"] = DEMO_SOURCE
    row["statement"] = (folder / "statement.md").read_text()
    row["solutions"] = [
        {**{k: v for k, v in sol.items() if k != "file"}, "code": (folder / sol["file"]).read_text(),
         "name": sol.get("name") or Path(sol["file"]).name}
        for sol in meta.get("solutions", [])
    ]
    kit = meta.get("kit")
    if kit:
        direct = _read(folder, kit.get("LLMGen_input"))
        row["kit"] = {
            "input_validator": _read(folder, kit.get("input_validator")),
            "needs_custom_output_judging_function": bool(kit.get("needs_custom_output_judging_function")),
            "output_judging_function": _read(folder, kit.get("output_judging_function")),
            "LLMGen_input": json.loads(direct) if direct else [],
            "RPGen_SPGen_input_generator": _read(folder, kit.get("RPGen_SPGen_input_generator")),
            "HackGen_input_generator": _read(folder, kit.get("HackGen_input_generator")),
            "origin": "imported",
            "model": "demo-team",
        }
    row["suites"] = [
        {"origin": "public", "tests": [{**s, "kind": TestCase.Kind.PUBLIC} for s in meta.get("samples", [])]}
    ]
    return row


def demo_folders() -> list[Path]:
    return sorted(p for p in DEMO_DIR.iterdir() if (p / "problem.json").exists()) if DEMO_DIR.exists() else []


def demo_load() -> dict[str, int]:
    """Load (or refresh) every demo problem; idempotent."""
    created = updated = 0
    rows = [native_row_parse(demo_row(folder)) for folder in demo_folders()]
    with transaction.atomic():
        for parsed in rows:
            _, was_created = native_row_write(parsed)
            created += was_created
            updated += not was_created
    return {"created": created, "updated": updated}


def demo_users_ensure() -> list[tuple[str, str, str]]:
    """Create the demo maintainer and annotators if missing; returns (username, password, role)."""
    User = get_user_model()
    for username, password, group_name in DEMO_USERS:
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_password(password)
            user.save()
        # get_or_create: the roles migration made them, but a flushed database has none.
        user.groups.add(Group.objects.get_or_create(name=group_name)[0])
    return [(u, p, g) for u, p, g in DEMO_USERS]


def demo_problems() -> list[Problem]:
    return list(Problem.objects.filter(source=DEMO_SOURCE))
