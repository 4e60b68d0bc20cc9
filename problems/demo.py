"""The bundled demo problems (problems/demo_data/), loaded through the native importer.

Each folder holds problem.json, statement.md, solutions/ and kit/; problem.json names the
files, so the folder reads naturally and the importer sees an ordinary native row.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Count, Q

from core.permissions import ANNOTATORS, MAINTAINERS
from problems.importers.native import native_row_parse
from problems.importers.writer import native_row_write
from problems.models import JudgingTask, Problem, TestCase

DEMO_DIR = Path(__file__).resolve().parent / "demo_data"
DEMO_SOURCE = "demo"

DEMO_USERS = (
    # (username, password, group); printed by `make run` so a visitor can log in.
    ("maintainer", "maintainer-demo", MAINTAINERS),
    ("annotator1", "annotator-demo", ANNOTATORS),
    ("annotator2", "annotator-demo", ANNOTATORS),
    # Staff (a superuser) for /admin/ and /rq/, which the maintainer role does not open.
    ("admin", "admin-demo", MAINTAINERS),
)
DEMO_STAFF = {"admin"}
DEMO_ROLES = {"maintainer": "maintainer", "annotator1": "annotator", "annotator2": "annotator",
              "admin": "staff: /admin/ and /rq/"}
DEMO_STATUS_CACHE_S = 3


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


@functools.cache
def _demo_password_hash(password: str, hashers: tuple[str, ...]) -> str:
    """A demo password hashed by the first of `hashers` (the settings' list in force): once a
    process for each password, not once a user. The demo's passwords are printed for every
    visitor, so the salt the users of one password share hides nothing, and each PBKDF2 hash is
    0.37 s of CPU (every `load_demo` on a fresh database, and many tests)."""
    return make_password(password)


def demo_users_ensure() -> list[tuple[str, str, str]]:
    """Create the demo maintainer and annotators if missing; returns (username, password, role)."""
    User = get_user_model()
    for username, password, group_name in DEMO_USERS:
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.password = _demo_password_hash(password, tuple(settings.PASSWORD_HASHERS))
            if username in DEMO_STAFF:
                user.is_staff = user.is_superuser = True
            user.save()
        # get_or_create: the roles migration made them, but a flushed database has none.
        user.groups.add(Group.objects.get_or_create(name=group_name)[0])
    return [(u, p, DEMO_ROLES.get(u, g)) for u, p, g in DEMO_USERS]


def demo_problems() -> list[Problem]:
    return list(Problem.objects.filter(source=DEMO_SOURCE))


@dataclass
class DemoBuild:
    """How far the first run's demo suites are (the banner shown while they are being built)."""

    problems: int
    ready: int
    running: int
    queued: int
    failed: int

    @property
    def building(self) -> bool:
        return self.running + self.queued > 0

    @property
    def percent(self) -> int:
        return round(100 * self.ready / self.problems) if self.problems else 100


def demo_build_status(*, cached: bool = True) -> DemoBuild | None:
    """None when there is no demo or nothing is being built for it; a few indexed counts,
    cached for a few seconds because every page asks."""
    from django.core.cache import cache

    key = "problems:demo-build"
    status = cache.get(key) if cached else None
    if status is None:
        # Runs belong to generation, above problems; reach them through the relation.
        # Only the first build: runs on demo problems that have no active generated suite yet.
        # A later regeneration of a built problem is an ordinary run, not "the first run".
        built = Problem.objects.filter(source=DEMO_SOURCE, suites__origin="generated", suites__status="active")
        runs = (Problem._meta.get_field("generation_runs").related_model._default_manager
                .filter(problem__source=DEMO_SOURCE).exclude(problem__in=built))
        busy = runs.aggregate(running=Count("pk", filter=Q(status="running")),
                              queued=Count("pk", filter=Q(status="queued")))
        status = DemoBuild(problems=0, ready=0, running=busy["running"], queued=busy["queued"], failed=0)
        if status.building:  # the other counts only matter while the banner shows
            demo = Problem.objects.filter(source=DEMO_SOURCE)
            status.problems = demo.count()
            status.ready = demo.filter(suites__origin="generated", suites__status="active").distinct().count()
            status.failed = runs.filter(status="failed").values("problem_id").distinct().count()
        cache.set(key, status, DEMO_STATUS_CACHE_S)
    return status if status.problems and status.building else None


def demo_logins() -> list[tuple[str, str, str]]:
    """(username, password, role) of the demo accounts that exist, in demo mode only: the
    summary block and the login page show them; production (HARDTESTS_DEMO=0) shows none."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    if not settings.HARDTESTS_DEMO:
        return []
    present = set(get_user_model().objects.filter(username__in=[u for u, _, _ in DEMO_USERS])
                  .values_list("username", flat=True))
    return [(u, p, DEMO_ROLES.get(u, g)) for u, p, g in DEMO_USERS if u in present]


def first_run_summary(url: str, *, building: DemoBuild | None = None) -> str:
    """The block `make run` ends with: where the site is, who can log in, and what is being built."""
    width = 66
    lines = ["", "=" * width, f"  HardTests is running at {url}"]

    logins = demo_logins()
    if logins:
        lines += ["", "  Demo logins (username / password):"]
        for username, password, role in logins:
            lines.append(f"    {username:<12} {password:<18} {role}")
        lines.append(f"  Admin: {url.rstrip('/')}/admin/   Queues: {url.rstrip('/')}/rq/  (log in as admin)")
    status = building if building is not None else demo_build_status(cached=False)
    if status is not None:
        lines += ["", f"  Building the demo suites in the background: {status.ready} of {status.problems} "
                      f"problems ready, {status.running} running, {status.queued} queued.",
                  "  Pages show a banner with the progress until they are done (a few minutes)."]
    else:
        judging = JudgingTask.objects.filter(solution__problem__source=DEMO_SOURCE).exclude(
            status__in=[JudgingTask.Status.DONE, JudgingTask.Status.FAILED]).count()
        lines += ["", "  The demo suites are built."
                  + (f" {judging} candidate judging task{'s' if judging != 1 else ''} still to finish: the"
                     " Verdicts tabs fill in as they do." if judging else " Nothing is running in the background.")]
    lines += ["  Ctrl-C stops everything.", "=" * width, ""]
    return "\n".join(lines)
