"""Comparators, call_python, the compile cache, the CLI and the missing-backend error."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import sandbox.bwrap
from sandbox import (
    Limits,
    Sandbox,
    SandboxUnavailable,
    Verdict,
    call_python,
    compare_default,
    compare_exact,
    compare_float,
)
from sandbox.cli import main as cli_main

from .conftest import REPO


def test_default_comparator_compares_whitespace_separated_tokens() -> None:
    assert compare_default("1 2\n3\n", "1 2   \n3\n\n\n")
    assert compare_default(b"a\r\nb", "a\nb\n")
    assert compare_default("1 2\n3\n", "1  2\n3\n") and compare_default("1\n\n2\n", "1 2")
    assert not compare_default("1\n", "") and not compare_default("12\n", "1 2\n")
    assert not compare_default("1 2\n", "2 1\n") and not compare_default("yes\n", "YES\n")


def test_exact_comparison_keeps_spacing_but_not_the_final_newline() -> None:
    assert compare_exact("1 2\n3\n", "1 2\n3") and compare_exact(b"a\r\nb\n", "a\nb\n\n")
    assert not compare_exact("1 2\n", "1  2\n") and not compare_exact("1\n2\n", "1 2\n")


def test_float_comparator_uses_tolerance_for_numbers_only() -> None:
    assert compare_float("0.3333333 2", "0.33333334 2.0000001")
    assert compare_float("1e9", "1000000000.5", rel_tol=1e-6)
    assert not compare_float("0.5", "0.51")
    assert not compare_float("yes 1.0", "no 1.0")
    assert not compare_float("1 2", "1")
    assert not compare_float("nan", "1.0") and not compare_float("1.0", "nan")
    assert compare_float("inf", "inf") and not compare_float("inf", "-inf")


CODE = """
import time
def validate_input(s):
    print('{"ok": true, "value": "forged"}')   # cannot forge the result
    return s.startswith('1')
def echo_length(s):
    return {'n': len(s), 'head': s[:3]}
def explode(x):
    raise ValueError('bad input ' + str(x))
def spin():
    while True:
        pass
def not_json():
    return {1, 2}
"""


def test_call_python_returns_json_values_and_cannot_be_forged(sb: Sandbox) -> None:
    [good, bad] = call_python(sb, CODE, "validate_input", [("123",), ("999",)], Limits())
    assert (good.ok, good.value, good.verdict) == (True, True, Verdict.OK)
    assert (bad.ok, bad.value) == (True, False)


def test_call_python_large_arguments_and_results(sb: Sandbox) -> None:
    big = "1" * 100_000
    [result] = call_python(sb, CODE, "echo_length", [(big,)], Limits())
    assert result.ok and result.value == {"n": 100_000, "head": "111"}


def test_call_python_exception_missing_function_loop_and_bad_value(sb: Sandbox) -> None:
    [raised] = call_python(sb, CODE, "explode", [(7,)], Limits())
    assert not raised.ok and raised.error == "ValueError: bad input 7"
    [missing] = call_python(sb, CODE, "no_such_function", [()], Limits())
    assert not missing.ok and "no_such_function" in (missing.error or "")
    [looped] = call_python(sb, CODE, "spin", [()], Limits(time_s=0.3, wall_s=60))
    assert not looped.ok and looped.verdict == Verdict.TLE and "time limit" in (looped.error or "")
    [weird] = call_python(sb, CODE, "not_json", [()], Limits())
    assert not weird.ok and "JSON" in (weird.error or "")
    [broken] = call_python(sb, "def f(:\n", "f", [()], Limits())
    assert not broken.ok and "SyntaxError" in (broken.error or "")


def test_call_python_code_is_sandboxed(sb: Sandbox) -> None:
    code = f"def peek():\n    return open({str(REPO / 'pyproject.toml')!r}).read()\n"
    [result] = call_python(sb, code, "peek", [()], Limits())
    assert not result.ok and "FileNotFoundError" in (result.error or "")


COMPILE_IN_CHILD = """
import json, sys
from sandbox import get_sandbox
prog = get_sandbox("bwrap").compile("cpp", sys.stdin.read())
print(json.dumps({"ok": prog.ok, "path": prog.path, "cached": prog.cached}))
"""


def test_concurrent_compiles_of_one_source_share_one_cache_entry(sb: Sandbox) -> None:
    source = f"#include <bits/stdc++.h>\n// {uuid.uuid4()}\nint main(){{std::cout<<42;}}\n"
    children = [
        subprocess.Popen([sys.executable, "-c", COMPILE_IN_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         cwd=REPO, text=True)
        for _ in range(2)
    ]
    outputs = [json.loads(child.communicate(source, timeout=120)[0]) for child in children]
    assert all(o["ok"] for o in outputs)
    assert outputs[0]["path"] == outputs[1]["path"]
    assert sorted(o["cached"] for o in outputs) == [False, True]  # compiled once, the other waited and reused
    entry = Path(outputs[0]["path"])
    assert sorted(p.name for p in entry.iterdir()) == ["main", "main.cpp", "meta.json"]
    again = sb.compile("cpp", source)
    assert again.cached and again.path == outputs[0]["path"]
    assert sb.run(again, [""], Limits())[0].stdout == b"42"


def test_cli_prints_one_json_object_per_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "a.py"
    source.write_text("print(sum(map(int, input().split())))\n")
    inputs = []
    for i, text in enumerate(["1 2\n", "5 5\n"]):
        (tmp_path / f"{i}.in").write_text(text)
        inputs += ["--input", str(tmp_path / f"{i}.in")]
    assert cli_main(["--language", "python3", "--time-limit", "1", "--memory-limit", "128", str(source), *inputs]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(d["verdict"], d["stdout"]) for d in lines] == [("OK", "3\n"), ("OK", "10\n")]
    assert set(lines[0]) == {"verdict", "exit_code", "signal", "time_ms", "wall_ms", "memory_kb", "stdout", "stderr"}


def test_cli_compile_error_and_empty_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.cpp"
    bad.write_text("int main( {}\n")
    assert cli_main(["--language", "cpp", "--time-limit", "1", "--memory-limit", "64", str(bad)]) == 0
    [line] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert line["verdict"] == "CE" and "error" in line["stderr"]
    good = tmp_path / "good.py"
    good.write_text("import sys\nprint(repr(sys.stdin.read()))\n")
    assert cli_main(["--language", "python3", "--time-limit", "1", "--memory-limit", "64", str(good)]) == 0
    [line] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert (line["verdict"], line["stdout"]) == ("OK", "''\n")


def test_missing_bubblewrap_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox.bwrap.shutil, "which", lambda name: None)
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        sandbox.bwrap.BwrapSandbox()


def test_unknown_backend_is_refused() -> None:
    from sandbox import get_sandbox

    with pytest.raises(SandboxUnavailable, match="unknown sandbox backend"):
        get_sandbox("chroot")


def test_a_rerun_waits_for_the_test_asked_for_ahead(sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Test 1 is asked for before test 0 is judged; test 0 is borderline, and its re-run starts
    only once test 1 has answered (so the re-run has the machine to itself), whose answer is
    then used as it came."""
    # test 0 burns just over the limit: a TLE within 10% over it, the one kind of run re-run
    source = ("import time\nn = int(input())\nt = time.process_time()\n"
              "while n == 0 and time.process_time() - t < 0.256:\n    pass\nprint(n)\n")
    prog = sb.compile("python3", source)
    events: list[str] = []
    open_batch = type(sb).open_batch

    def logged_open(self, spec):
        batch = open_batch(self, spec)
        events.append("open")
        receive = batch.receive

        def logged_receive():
            result = receive()
            events.append("answer")
            return result

        batch.receive = logged_receive
        return batch

    monkeypatch.setattr(type(sb), "open_batch", logged_open)
    results = sb.run(prog, ["0", "1", "2"], Limits(time_s=0.25, wall_s=60))
    assert results[0].stdout == b"0\n" or results[0].verdict == Verdict.TLE
    assert [r.stdout for r in results[1:]] == [b"1\n", b"2\n"]
    # the batch, tests 0 and 1 answered, then the re-run's own sandbox; then test 2
    assert events == ["open", "answer", "answer", "open", "answer", "answer"], events


def test_borderline_time_is_rerun_and_the_faster_kept(sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    # just over 0.25 s of CPU against a 0.25 s limit: a TLE within 10% over it, so it runs a
    # second time, in a sandbox of its own (a re-run inside the first one could inherit what the
    # first left); an OK run, however near the limit, is final
    # (tests/problems/test_rerun_budget.py)
    source = ("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.256:\n    pass\n"
              "print('done')\n")
    prog = sb.compile("python3", source)
    opened: list[object] = []
    original = type(sb).open_batch
    monkeypatch.setattr(type(sb), "open_batch", lambda self, spec: opened.append(spec) or original(self, spec))
    [result] = sb.run(prog, [""], Limits(time_s=0.25, wall_s=60))
    assert len(opened) == 2
    assert result.stdout == b"done\n" or result.verdict == Verdict.TLE
    # CPU time: the program burns 240 ms itself, and a loaded machine does not shrink CPU time
    assert result.time_ms >= 200
