"""Every parse of Python source in the project goes through core.pysource, one at a time in a
process (CPython gh-106905: threads parsing at once could raise SystemError, an HTTP 500)."""

from __future__ import annotations

import ast
import re
import threading
from pathlib import Path

import pytest

from core import pysource
from hardtests_client import extract

pytestmark = [pytest.mark.fast]

REPO = Path(__file__).resolve().parents[2]
# the client cannot import the project: it keeps a lock of its own
OWN_LOCK = {"core/pysource.py", "hardtests_client/extract.py"}
PARSE = re.compile(r"\bast\.(parse|literal_eval)\(")


def test_no_module_parses_python_but_through_core_pysource() -> None:
    found = []
    for path in REPO.rglob("*.py"):
        relative = path.relative_to(REPO).as_posix()
        if relative.split("/")[0] in {".venv", "tests", "bench", "var", "node_modules"} or relative in OWN_LOCK:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if PARSE.search(code) and not code.lstrip().startswith(("`", '"', "'")):
                found.append(f"{relative}:{number}: {line.strip()}")
    assert not found, "parse through core.pysource (one parse at a time):\n" + "\n".join(found)


def test_a_parse_waits_for_another_to_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    inside = threading.Event()
    release = threading.Event()
    real = ast.parse

    class SlowAst:
        """pysource's view of the ast module, whose parse of "first" waits to be released."""

        @staticmethod
        def parse(source: str) -> ast.Module:
            if source == "first":
                inside.set()
                release.wait(10)
            return real("x = 1")

    monkeypatch.setattr(pysource, "ast", SlowAst)
    first = threading.Thread(target=pysource.parse, args=("first",))
    first.start()
    assert inside.wait(10)
    second_done = threading.Event()
    second = threading.Thread(target=lambda: (pysource.parse("second"), second_done.set()))
    second.start()
    # the second parse cannot start while the first holds the lock
    assert not second_done.wait(0.3)
    release.set()
    first.join(10)
    second.join(10)
    assert second_done.is_set()
    monkeypatch.undo()
    assert isinstance(pysource.parse("a = 1"), ast.Module)
    assert pysource.literal_eval("[1, 'two']") == [1, "two"]
    # one lock for the project's parses and the client library's language guess, which the
    # server runs too
    assert pysource._PARSE_LOCK is extract._PARSE_LOCK
