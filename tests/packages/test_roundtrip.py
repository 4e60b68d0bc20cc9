"""Export round trip: Kattis' `hello` and `different` imported (`import_dataset icpc`),
exported again (`export_dataset icpc`'s icpc_export), and problemtools' `verifyproblem`
passes on both, every exported submission getting its folder's verdict. The package's own
judges come back as themselves: `different`'s C++ output validator (validate.cc with its
validate.h) in output_validator/, the Python input validators as the package's files; no
Python wrapper. A package with groups gets data/secret/<group>/ back.

problemtools runs Python with PyPy; where PyPy is absent the test points problemtools'
per-user languages.yaml at CPython (the validators and submissions here are plain Python 3),
and compiles Java for the installed JDK. Skipped with the reason when problemtools or the
fixture is absent.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from problems.exporters.bundles import problems_select
from problems.exporters.icpc import icpc_export, javac_release

KATTIS = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "kattis-examples"
VERDICTS = {"accepted": "AC", "wrong_answer": "WA", "time_limit_exceeded": "TLE", "run_time_error": "RTE"}

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def _binary() -> str | None:
    return shutil.which("verifyproblem", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def _config(folder: Path) -> Path:
    lines = []
    release = javac_release()
    if release is not None and release < 21:
        lines += ["java:", f"    compile: 'javac -source {release} -encoding UTF-8 -sourcepath {{path}} -d {{path}} "
                  "{files}'"]
    if shutil.which("pypy3") is None:
        # problemtools' own python3 entry runs pypy3; the same program under CPython here
        lines += ["python3:", f"    compile: '{sys.executable} -m py_compile {{files}}'",
                  f"    run: '{sys.executable} \"{{mainfile}}\"'"]
    (folder / "problemtools").mkdir(parents=True)
    (folder / "problemtools" / "languages.yaml").write_text("\n".join(lines) + "\n")
    return folder


def _verifyproblem(package: Path, config: Path) -> str:
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    # its own session: problemtools signals a submission's process group when it overruns
    done = subprocess.run([_binary() or "verifyproblem", str(package), "-p", "config", "data", "validators",
                           "submissions"], capture_output=True, text=True, timeout=1200, env=env, check=False,
                          start_new_session=True)
    return done.stdout + done.stderr


def _import(*paths: Path) -> None:
    call_command("import_dataset", "icpc", *[str(p) for p in paths], stdout=io.StringIO())


def test_hello_and_different_round_trip_through_verifyproblem(tmp_path: Path) -> None:
    if not (KATTIS / "hello" / "problem.yaml").is_file():
        pytest.skip(f"the Kattis examples fixture is absent ({KATTIS}): the round trip needs real packages")
    if _binary() is None:
        pytest.skip("problemtools is not installed (pip install problemtools): verifyproblem checks the export")
    _import(KATTIS / "hello", KATTIS / "different")
    out = tmp_path / "icpc"
    summary = icpc_export(problems=problems_select(["source=icpc"])[0], out=out)
    assert summary["problems"] == 2
    assert summary["package_output_validators"] == 1  # different's; hello uses the default validator
    # each accepted submission once, though it is both a candidate and an oracle here
    assert sorted(p.suffix for p in (out / "hello" / "submissions" / "accepted").rglob("*.*")) == [
        ".c", ".cpp", ".java", ".py"]  # hello_alarm.c as C: verifyproblem compiles it with gcc

    different = out / "different"
    validator = different / "output_validator" / "different_validator"
    # the package's own C++ validator, as it came: no Python wrapper
    assert sorted(p.name for p in validator.iterdir()) == ["validate.cc", "validate.h"]
    assert (validator / "validate.cc").read_text() == (
        KATTIS / "different" / "output_validators" / "different_validator" / "validate.cc").read_text()
    assert not (different / "input_validators" / "validate.py").exists()  # not our wrapper
    own = sorted(p.relative_to(different / "input_validators").as_posix()
                 for p in (different / "input_validators").rglob("*") if p.is_file())
    assert own == ["validate/validate.py"]  # different.ctd (checktestdata) is not run here
    assert sorted(p.name for p in (different / "data" / "secret").iterdir()) == ["001.ans", "001.in", "002.ans",
                                                                                 "002.in"]

    config = _config(tmp_path / "config")
    for name in ("hello", "different"):
        package = out / name
        report = _verifyproblem(package, config)
        assert re.search(rf"{name} tested: 0 errors", report), report[-4000:]
        judged = 0
        for folder in sorted((package / "submissions").iterdir()):
            for submission in sorted(folder.iterdir()):
                entry = f"{folder.name}/{submission.name}"
                found = re.search(rf"^\s*{re.escape(entry)} \(.*?\) OK: (\w+)", report, re.M)
                assert found is not None, f"{name}: {entry} was not judged:\n{report[-4000:]}"
                assert found[1] == VERDICTS[folder.name], f"{name}: {entry}: {found[1]}"
                judged += 1
        assert judged >= 3, report[-4000:]


def test_groups_go_back_to_data_secret_group(tmp_path: Path) -> None:
    """A package with nested groups, written here (the Kattis examples with groups are scoring)."""
    root = tmp_path / "grouped"
    for folder, name, text in (("sample", "1", "1 2\n"), ("secret/small", "a", "3 4\n"), ("secret/large", "b", "5 6\n")):
        (root / "data" / folder).mkdir(parents=True, exist_ok=True)
        (root / "data" / folder / f"{name}.in").write_text(text)
        (root / "data" / folder / f"{name}.ans").write_text(f"{sum(map(int, text.split()))}\n")
    (root / "problem.yaml").write_text("name: Grouped\nvalidation: default\nvalidator_flags: case_sensitive\n")
    for folder, name, code in (
            ("input_validators", "validate.py",
             "import re, sys\nok = re.fullmatch(r'-?\\d+ -?\\d+\\n', sys.stdin.read())\nsys.exit(42 if ok else 43)\n"),
            ("submissions/accepted", "sum.py", "a, b = map(int, input().split())\nprint(a + b)\n"),
            ("submissions/wrong_answer", "off.py", "a, b = map(int, input().split())\nprint(a + b + 1)\n")):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / name).write_text(code)
    _import(root)
    out = tmp_path / "icpc"
    icpc_export(problems=problems_select(["source=icpc"])[0], out=out)
    data = out / "grouped" / "data"
    assert sorted(p.relative_to(data).as_posix() for p in data.rglob("*.in")) == [
        "sample/001.in", "secret/large/001.in", "secret/small/002.in"]
    assert (data / "secret" / "small" / "002.ans").read_text() == "7\n"
    # the default validator with the package's flags, in the 2023-07-draft place for them
    assert (data / "testdata.yaml").read_text() == 'output_validator_flags: "case_sensitive"\n'
    assert not (out / "grouped" / "output_validator").exists()
    if _binary() is not None:  # problemtools reads the flags and the groups as written
        report = _verifyproblem(out / "grouped", _config(tmp_path / "config"))
        assert re.search(r"grouped tested: 0 errors", report), report[-4000:]
        assert re.search(r"^\s*accepted/candidate-001\.py \(.*?\) OK: AC", report, re.M), report[-4000:]
        assert re.search(r"^\s*wrong_answer/candidate-001\.py \(.*?\) OK: WA", report, re.M), report[-4000:]
