"""Kattis problemtools' `verifyproblem` accepts every ICPC package of the demo, and every
submission gets the verdict of the folder it was exported to, judged as Kattis judges:
Python with PyPy (problemtools' default; Python submissions that only time out under
CPython are not filed as time_limit_exceeded). Java is compiled for the installed JDK 17
(problemtools' default asks javac for release 21), through its own per-user config.
Every demo kit is materialised for real (sandbox, no LLM). The statement part is not
checked: rendering it needs pandoc and LaTeX.

Needs `pip install problemtools` (a dev dependency) and PyPy (`apt-get install pypy3`);
skipped with that reason otherwise.
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

from problems.exporters.bundles import problems_select
from problems.exporters.icpc import icpc_export

VERDICTS = {"accepted": "AC", "wrong_answer": "WA", "time_limit_exceeded": "TLE", "run_time_error": "RTE"}
LANGUAGES = """\
java:
    compile: 'javac -source 17 -encoding UTF-8 -sourcepath {path} -d {path} {files}'
"""

pytestmark = [
    pytest.mark.slow, pytest.mark.django_db,
    # Twelve packages with PyPy and every verdict folder take 10-40 minutes: over CI's budget. A mark,
    # not a skip inside the fixture, so that the demo it needs is not built for nothing.
    pytest.mark.skipif(os.environ.get("HARDTESTS_PROBLEMTOOLS") != "1",
                       reason="verifyproblem over the demo takes 10-40 min: set HARDTESTS_PROBLEMTOOLS=1 to run it"),
]


@pytest.fixture(scope="module")
def packages(demo_runs: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, django_db_blocker: Any
             ) -> Iterator[Path]:
    """Every demo problem, its kit materialised (demo_runs), exported as ICPC packages."""
    if _binary() is None:
        pytest.skip("problemtools is not installed (pip install problemtools)")
    if shutil.which("pypy3") is None:
        pytest.skip("PyPy is not installed (apt-get install pypy3): problemtools runs Python with it, as Kattis does")
    out = tmp_path_factory.mktemp("icpc")
    with django_db_blocker.unblock():
        summary = icpc_export(problems=problems_select(["source=demo"])[0], out=out)
    assert summary["problems"] == len(demo_runs)
    yield out


def _binary() -> str | None:
    # Installed beside the interpreter running the tests (the project's virtualenv).
    return shutil.which("verifyproblem", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def _verifyproblem(package: Path, config: Path) -> str:
    binary = _binary() or "verifyproblem"
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    # A session of its own: problemtools stops a submission that overruns by signalling its process
    # group, which without this is pytest's own (it took the whole test run down with it).
    done = subprocess.run([binary, str(package), "-p", "config", "data", "validators", "submissions"],
                          capture_output=True, text=True, timeout=1200, env=env, check=False,
                          start_new_session=True)
    return done.stdout + done.stderr


def test_verifyproblem_accepts_the_packages_and_every_verdict_folder(packages: Path, tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "problemtools").mkdir(parents=True)
    (config / "problemtools" / "languages.yaml").write_text(LANGUAGES)
    folders = sorted(p for p in packages.iterdir() if p.is_dir())
    assert {"demotreediameter", "demotwosumany"} <= {p.name for p in folders}
    assert "demotwosumany" in (packages / "README.md").read_text()  # the folder's card
    seen: set[str] = set()
    for package in folders:
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
