"""Kattis problemtools' `verifyproblem` accepts the demo's ICPC packages, and every submission
gets the verdict of the folder it was exported to.

Two demo problems cover every folder and part: two-sum-any (an output validator; accepted,
wrong_answer, time_limit_exceeded) and tree-diameter (run_time_error, Java). Their kits are
materialised for real (sandbox, no LLM). problemtools runs Python with CPython (the
interpreter the project's judge uses; its default is PyPy) and compiles Java for the
installed JDK 17 (its default asks javac for release 21), through its own per-user config.
The statement part is not checked: rendering it needs pandoc and LaTeX.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test.utils import override_settings

from problems.exporters.bundles import problems_select
from problems.exporters.icpc import icpc_export
from tests.conftest import DEMO_COUNTS

PROBLEMS = ("demo/two-sum-any", "demo/tree-diameter")
VERDICTS = {"accepted": "AC", "wrong_answer": "WA", "time_limit_exceeded": "TLE", "run_time_error": "RTE"}
LANGUAGES = """\
python3:
    name: 'Python 3 (CPython)'
    compile: '/usr/bin/python3 -m py_compile {files}'
    run: '/usr/bin/python3 "{mainfile}"'
java:
    compile: 'javac -source 17 -encoding UTF-8 -sourcepath {path} -d {path} {files}'
"""

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture(scope="module")
def packages(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[Path]:
    """The two problems' kits materialised (rolled back at the end) and exported as ICPC packages."""
    if _binary() is None:
        pytest.skip("problemtools is not installed (pip install problemtools)")
    from django.db import transaction

    from generation.models import GenerationRun
    from generation.services import generation_run_execute, generation_run_start
    from problems.demo import demo_load
    from problems.models import Problem

    out = tmp_path_factory.mktemp("icpc")
    with django_db_blocker.unblock(), override_settings(**DEMO_COUNTS):
        outer = transaction.atomic()
        outer.__enter__()
        try:
            demo_load()
            for pid in PROBLEMS:
                run = generation_run_start(problem=Problem.objects.get(pid=pid), mode=GenerationRun.Mode.FROM_KIT,
                                           enqueue=False)
                assert generation_run_execute(run_id=run.pk).status == GenerationRun.Status.SUCCEEDED
            icpc_export(problems=problems_select([f"pid={pid}" for pid in PROBLEMS])[0], out=out)
            yield out
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def _binary() -> str | None:
    # Installed beside the interpreter running the tests (the project's virtualenv).
    return shutil.which("verifyproblem", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def _verifyproblem(package: Path, config: Path) -> str:
    binary = _binary() or "verifyproblem"
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    done = subprocess.run([binary, str(package), "-p", "config", "data", "validators", "submissions"],
                          capture_output=True, text=True, timeout=1200, env=env, check=False)
    return done.stdout + done.stderr


def test_verifyproblem_accepts_the_packages_and_every_verdict_folder(packages: Path, tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "problemtools").mkdir(parents=True)
    (config / "problemtools" / "languages.yaml").write_text(LANGUAGES)
    assert sorted(p.name for p in packages.iterdir()) == ["demotreediameter", "demotwosumany"]
    seen: set[str] = set()
    for package in sorted(packages.iterdir()):
        report = _verifyproblem(package, config)
        assert re.search(rf"{package.name} tested: 0 errors", report), report[-4000:]
        for folder in sorted((package / "submissions").iterdir()):
            for submission in sorted(folder.iterdir()):
                name = f"{folder.name}/{submission.name}"
                found = re.search(rf"^\s*{re.escape(name)} \(.*?\) OK: (\w+)", report, re.M)
                assert found is not None, f"{name} was not judged:\n{report[-4000:]}"
                assert found[1] == VERDICTS[folder.name], f"{name}: {found[1]}"
                seen.add(folder.name)
    assert seen == set(VERDICTS)  # every verdict folder was exercised
    assert (packages / "demotwosumany" / "output_validator" / "validate.py").exists()
