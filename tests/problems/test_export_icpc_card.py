"""The ICPC export's card gives a problemtools command that works with the JDK present:
problemtools compiles Java with `javac -source 21`, which JDK 17 refuses, so on such a JDK the
export writes a languages.yaml for its release and the card points problemtools at it. Checked
with problemtools' own config loader and the real javac."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from problems.exporters.icpc import PROBLEMTOOLS_CONFIG, icpc_export, javac_release
from problems.models import Problem

pytestmark = pytest.mark.django_db

MAIN = "public class Main { public static void main(String[] a) { System.out.println(42); } }\n"


def _compile(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    argv = command.replace("{path}", str(folder)).replace("{files}", str(folder / "Main.java")).split()
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def _problemtools_java(config_home: Path | None, monkeypatch: pytest.MonkeyPatch) -> str:
    config = pytest.importorskip("problemtools.config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home or Path("/nonexistent-config")))
    return str(config.load_config("languages.yaml")["java"]["compile"])


def test_the_cards_command_compiles_java_with_the_jdk_present(tmp_path, monkeypatch):
    release = javac_release()
    if release is None:
        pytest.skip("no javac on this machine (apt-get install openjdk-17-jdk-headless)")
    icpc_export(problems=Problem.objects.none(), out=tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text()
    source = tmp_path / "src"
    source.mkdir()
    (source / "Main.java").write_text(MAIN)
    if release >= 21:
        assert not (tmp_path / "out" / PROBLEMTOOLS_CONFIG).exists()
        assert "verifyproblem FOLDER -p config data validators submissions" in card
        assert _compile(_problemtools_java(None, monkeypatch), source).returncode == 0
        return
    # problemtools' own command fails on this JDK: the reason for the card's recipe
    default = _compile(_problemtools_java(None, monkeypatch), source)
    assert default.returncode != 0 and "21" in default.stderr
    found = re.search(r'XDG_CONFIG_HOME="\$PWD/([\w-]+)" verifyproblem FOLDER -p config data validators submissions',
                      card)
    assert found is not None, card
    assert f"javac {release}" in card
    command = _problemtools_java(tmp_path / "out" / found[1], monkeypatch)
    assert f"-source {release} " in command
    done = _compile(command, source)
    assert done.returncode == 0, done.stderr
    assert (source / "Main.class").exists()


def test_the_card_names_the_override_when_no_config_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr("problems.exporters.icpc.javac_release", lambda: 21)
    icpc_export(problems=Problem.objects.none(), out=tmp_path)
    card = (tmp_path / "README.md").read_text()
    assert "javac -source 21" in card and "languages.yaml" in card and "javac -source N" in card
    monkeypatch.setattr("problems.exporters.icpc.javac_release", lambda: 17)
    icpc_export(problems=Problem.objects.none(), out=tmp_path / "old")
    text = (tmp_path / "old" / PROBLEMTOOLS_CONFIG / "problemtools" / "languages.yaml").read_text()
    assert "javac -source 17 -encoding UTF-8 -sourcepath {path} -d {path} {files}" in text
