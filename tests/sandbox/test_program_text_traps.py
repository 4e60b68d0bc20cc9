"""Program text that reaches harness code: whatever a program's text is, its verdict is the one
a contest judge gives it, never a sandbox error, and never a verdict of our own making.

Python: a program is judged as `python3 -I main.py` judges it (CE where that fails to compile
it, RE or OK as it runs), with the zygote on and off: a deeply nested expression the
interpreter compiles, a compilation over the memory limit, the recursion limit's edges,
encodings, tokenizer and compiler limits.  Java: the file's name and the class to run come
from the program's tokens, never its comments, strings or text blocks, and the class run is
the one with main, public or not (as Kattis and DOMjudge run it).
"""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import Limits, Sandbox, Verdict
from sandbox.base import ZYGOTE_ENV

from .conftest import REPO
from .test_spares import spares  # noqa: F401 - the fixture, for a batch that takes a spare

PYTHON = "/usr/bin/python3"  # the interpreter bound into the bubblewrap sandbox
LIMITS = Limits(time_s=5, memory_mb=256)
AB = "a, b = map(int, input().split())\nprint(a + b)\n"


@pytest.fixture()
def zygote(monkeypatch: pytest.MonkeyPatch) -> Iterator[callable]:
    def switch(on: bool) -> None:
        monkeypatch.setenv(ZYGOTE_ENV, "1" if on else "0")

    yield switch


@pytest.fixture(params=["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request: pytest.FixtureRequest) -> Sandbox:
    return request.getfixturevalue("sb" if request.param == "bwrap" else "docker_sb")


def plain_python(source: str, stdin: bytes, tmp_path: Path) -> tuple[Verdict, bytes]:
    """What `python3 -I main.py` does with the program: CE where it cannot compile it (its
    error, printed with no traceback), else OK or RE as it exits, and its output."""
    path = tmp_path / "main.py"
    path.write_text(source, encoding="utf-8")
    done = subprocess.run([PYTHON, "-I", str(path)], input=stdin, capture_output=True, timeout=120)
    last = (done.stderr.decode(errors="replace").strip().splitlines() or [""])[-1]
    compile_error = ("Traceback (most recent call last)" not in done.stderr.decode(errors="replace")
                     and last.startswith(("SyntaxError", "IndentationError", "TabError",
                                          "RecursionError: maximum recursion depth exceeded during compilation")))
    if done.returncode != 0 and compile_error:
        return Verdict.CE, b""
    return (Verdict.OK if done.returncode == 0 else Verdict.RE), done.stdout


def judged(sb: Sandbox, zygote, source: str, stdin: bytes, *, on: bool) -> tuple[Verdict, bytes]:
    return judged_with_stderr(sb, zygote, source, stdin, on=on)[:2]


def judged_with_stderr(sb: Sandbox, zygote, source: str, stdin: bytes, *, on: bool) -> tuple[Verdict, bytes, str]:
    prog = sb.compile("python3", source)
    if not prog.ok:
        return prog.verdict, b"", ""
    zygote(on)
    [result] = sb.run(prog, [stdin], LIMITS)
    return result.verdict, result.stdout, result.stderr


def binop_chain(terms: int) -> str:
    return AB + "import sys\nprint('ctypes' in sys.modules)\n_unused = " + "+".join(["1"] * terms) + "\n"


# ---- Python: the zygote ---------------------------------------------------------------------

def test_a_deep_expression_python_compiles_runs_in_the_zygote(sb: Sandbox, zygote) -> None:
    # The red team's case: a right a+b with `_unused = 1+1+...+1` (2,990 terms) passed the
    # syntax check, then the zygote compiled it a few levels deeper: RecursionError uncaught,
    # SE on every test.  It runs, and in the zygote (whose modules it finds loaded).
    prog = sb.compile("python3", binop_chain(2990))
    assert prog.ok, prog.message
    zygote(True)
    results = sb.run(prog, [b"1 2\n", b"3 4\n"], LIMITS)
    assert [(r.verdict, r.stdout) for r in results] == [(Verdict.OK, b"3\nTrue\n"), (Verdict.OK, b"7\nTrue\n")], results


@pytest.mark.parametrize("where", ["exec", "zygote", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_syntax_check_compiles_as_deep_as_python(request: pytest.FixtureRequest, zygote, where: str,
                                                     tmp_path: Path) -> None:
    # The compiler's depth limit counts the levels compile() is called under: the check, at a
    # -c module's depth, refused chains a fresh interpreter compiles (CE for a right program).
    # The longest chain `python3 -I main.py` compiles is OK here, one term more is CE.
    sb: Sandbox = request.getfixturevalue("docker_sb" if where == "docker" else "sb")
    on = where == "zygote"
    longest = _longest_chain_python_compiles(tmp_path)
    assert plain_python(binop_chain(longest), b"1 2\n", tmp_path)[0] == Verdict.OK
    assert judged(sb, zygote, binop_chain(longest), b"1 2\n", on=on) == (Verdict.OK, b"3\n" + (b"True\n" if on else b"False\n"))
    assert plain_python(binop_chain(longest + 1), b"1 2\n", tmp_path)[0] == Verdict.CE
    assert judged(sb, zygote, binop_chain(longest + 1), b"1 2\n", on=on)[0] == Verdict.CE


def _longest_chain_python_compiles(tmp_path: Path) -> int:
    low, high = 2000, 4000  # compiled, not compiled by `python3 -I main.py` (2,999 at a limit of 1,000)
    assert plain_python(binop_chain(low), b"1 2\n", tmp_path)[0] == Verdict.OK
    assert plain_python(binop_chain(high), b"1 2\n", tmp_path)[0] == Verdict.CE
    while high - low > 1:
        middle = (low + high) // 2
        fits = plain_python(binop_chain(middle), b"1 2\n", tmp_path)[0] == Verdict.OK
        low, high = (middle, high) if fits else (low, middle)
    return low


@pytest.mark.parametrize("spare", [False, True], ids=["fresh", "spare"])
def test_a_program_whose_compilation_is_over_the_memory_limit_is_mle_not_se(sb: Sandbox, zygote, spare: bool,
                                                                           request: pytest.FixtureRequest) -> None:
    # Compiling 1.5 M list items takes most of a GB: a fresh interpreter is killed by the
    # memory limit on every test (MLE), and so was the zygote, once, before any test: SE on
    # every test.  The batch runs its tests exec'd when its zygote does not start.
    taken = request.getfixturevalue("spares") if spare else None
    source = "data = [" + "7," * 1_500_000 + "]\nprint(len(data))\n"
    prog = sb.compile("python3", source)
    assert prog.ok, prog.message
    limits = Limits(time_s=5, memory_mb=256)
    for on in (False, True):
        zygote(on)
        if taken is not None:
            # the first batch of its kind starts its own sandbox, and leaves a spare for the next
            sb.run(sb.compile("python3", "print(1)\n"), [b""], limits)
            sb.settle_warm()
        results = sb.run(prog, [b"", b""], limits)
        assert [r.verdict for r in results] == [Verdict.MLE, Verdict.MLE], (on, results)
    if taken is not None:
        assert taken["taken"] == 2, taken  # each batch's sandbox, and its zygote, was a spare's


def test_anything_compiling_raises_is_the_program_s_error_in_each_test() -> None:
    # The zygote's compile step returns whatever compiling raised (any BaseException, not a
    # list of types) for each test to raise as the program's own error; it never propagates.
    zygote_source = (REPO / "sandbox" / "zygote.py").read_text()
    tree = ast.parse(zygote_source)
    wanted = {"_compile_program", "_depth_of_a_call_here"}
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in wanted]
    assert {f.name for f in functions} == wanted
    for raised in (RecursionError("deep"), MemoryError(), SystemExit(3), KeyboardInterrupt(), ValueError("nul"),
                   SyntaxError("bad")):
        def failing_compile(*args: object, error: BaseException = raised, **kwargs: object) -> None:
            raise error

        namespace: dict[str, object] = {"sys": __import__("sys"), "compile": failing_compile}
        exec(compile(ast.Module(body=functions, type_ignores=[]), "zygote.py", "exec"), namespace)
        got = namespace["_compile_program"](b"print(1)\n", "/.hts-prog/main.py")  # type: ignore[operator]
        assert got is raised and got.__traceback__ is None, raised


# What `python3 -I main.py` does at the interpreter's edges; each is judged so, with the zygote
# on and off (and the zygote prints what the interpreter prints).  Where the zygote once
# differed: the recursion limit's edges (a limit past INT_MAX - 2, under 1, within a level or
# two of the current depth, by keyword; the functions themselves), the end of a program (an
# int subclass as SystemExit's code, a failing or missing excepthook, a code that cannot be
# read, sys.stdout replaced with output still buffered in the original); the others guard
# parity (they were right before).
PARITY = {
    "exit_code_an_int_subclass": "class E(int):\n    def __and__(self, o):\n        raise ValueError\n"
                                 "    def __ge__(self, o):\n        raise ValueError\n"
                                 "import atexit\natexit.register(print, 'atexit')\nraise SystemExit(E(256))\n",
    "exit_code_that_cannot_be_read": "class X(SystemExit):\n    @property\n    def code(self):\n"
                                     "        raise ValueError('no code')\nraise X(4)\n",
    "excepthook_that_fails": "import sys\nprint('x')\nsys.excepthook = lambda *a: 1/0\nraise ValueError('orig')\n",
    "excepthook_missing": "import sys\ndel sys.excepthook\nraise ValueError('o')\n",
    "excepthook_that_exits": "import sys\ndef hook(*a):\n    raise SystemExit(0)\nsys.excepthook = hook\nraise ValueError\n",
    "stdout_replaced_by_none": "import sys\nprint('x')\nsys.stdout = None\n",
    "threading_shutdown_replaced": "import threading\nthreading._shutdown = None\nprint('x')\n",
    "setrecursionlimit_int_max": "import sys\nsys.setrecursionlimit(2**31 - 1)\nprint(sys.getrecursionlimit())\n",
    "setrecursionlimit_zero": "import sys\ntry:\n    sys.setrecursionlimit(0)\nexcept ValueError:\n    print('ValueError')\n",
    "setrecursionlimit_3": "import sys\nsys.setrecursionlimit(3)\nprint('ok')\n",
    "setrecursionlimit_3_atexit": "import sys, atexit\natexit.register(print, 'bye')\nsys.setrecursionlimit(3)\n",
    "setrecursionlimit_3_raise": "import sys\nsys.setrecursionlimit(3)\nraise ValueError('x')\n",
    "setrecursionlimit_keyword": "import sys\ntry:\n    sys.setrecursionlimit(limit=5000)\nexcept TypeError:\n"
                                 "    print('TypeError')\n",
    "recursion_functions_are_builtins": "import sys\nprint(type(sys.setrecursionlimit).__name__, "
                                        "type(sys.getrecursionlimit).__name__)\n",
    "recursion_depth": "import sys\ntry:\n    sys.setrecursionlimit(1)\nexcept RecursionError as e:\n    print(e)\n"
                       "def f(n):\n    try:\n        return f(n + 1)\n    except RecursionError:\n        return n\n"
                       "print(f(0))\nimport atexit\natexit.register(lambda: print(f(0)))\n",
    "coding_latin1": "# -*- coding: latin-1 -*-\n" + AB + "s = 'é'\nprint(len(s))\n",
    "coding_unknown": "# coding: nosuchcodec\n" + AB,
    "coding_ascii_with_utf8": "# coding: ascii\n" + AB + "s = 'é'\n",
    "bom": "\ufeff" + AB,
    "bom_and_latin1": "\ufeff# coding: latin-1\n" + AB,
    "crlf": AB.replace("\n", "\r\n"),
    "cr_only": AB.replace("\n", "\r"),
    "form_feed": "\f" + AB,
    "parentheses_200_deep": AB + "x = " + "(" * 200 + "1" + ")" * 200 + "\n",
    "indentation_100_deep": AB + "".join(" " * i + "if True:\n" for i in range(100)) + " " * 100 + "pass\n",
    "int_of_5000_digits": AB + "x = " + "9" * 5000 + "\n",
    "not_5000_times": AB + "x = " + "not " * 5000 + "1\n",
    "subscripts_5000": AB + "x = [0]" + "[0]" * 5000 + "\n",
    "comparisons_2990": AB + "x = " + "<".join(["1"] * 2990) + "\n",
    "or_5000": AB + "x = " + " or ".join(["a"] * 5000) + "\n",
    "system_exit_3": AB + "raise SystemExit(3)\n",
    "system_exit_message": AB + "raise SystemExit('bye')\n",
    "keyboard_interrupt": AB + "raise KeyboardInterrupt\n",
    "tabs_and_spaces": AB + "if 1:\n\tx = 1\n        y = 2\n",
    "future_braces": "from __future__ import braces\n",
    "return_outside_a_function": AB + "return 1\n",
    "zero_width_space": AB + "x\u200b = 1\n",
    "unterminated_triple_quote": AB + "x = '''\n",
}


@pytest.mark.parametrize("name", sorted(PARITY))
def test_python_judges_the_program_as_python_runs_it(sb: Sandbox, zygote, name: str, tmp_path: Path) -> None:
    source = PARITY[name]
    expected = plain_python(source, b"1 2\n", tmp_path)
    fresh, forked = (judged_with_stderr(sb, zygote, source, b"1 2\n", on=on) for on in (False, True))
    assert fresh[:2] == expected, name
    assert masked(forked) == masked(fresh), name


@pytest.mark.docker
@pytest.mark.parametrize("name", sorted(PARITY))
def test_python_on_docker_judges_the_program_as_python_runs_it(docker_sb: Sandbox, zygote, name: str,
                                                                tmp_path: Path) -> None:
    # the container binds the host's /usr: the same interpreter, run exec'd
    source = PARITY[name]
    assert judged(docker_sb, zygote, source, b"1 2\n", on=False) == plain_python(source, b"1 2\n", tmp_path), name


def masked(judged: tuple[Verdict, bytes, str]) -> tuple[Verdict, bytes, str]:
    """What the interpreter prints of an object it cannot print otherwise (its address and
    reference count) differs from one run to the next: left out of the comparison."""
    lines = [line for line in judged[2].splitlines() if not line.startswith(("object address", "object refcount"))]
    return judged[0], judged[1], "\n".join(lines)


def test_a_source_that_is_not_unicode_is_ce_not_an_exception(sb: Sandbox) -> None:
    # JSON carries lone surrogates; no compiler can read one: the program's CE, not a crash
    for language in ("python3", "cpp", "java"):
        prog = sb.compile(language, "print('\udc80')\n")
        assert prog.verdict == Verdict.CE and "not valid Unicode" in prog.message, (language, prog)


# ---- Java: the names come from the program's tokens ----------------------------------------

MAIN_BODY = "{ public static void main(String[] args) { java.util.Scanner in = new java.util.Scanner(System.in); " \
            "System.out.println(in.nextInt() + in.nextInt()); } }"
JAVA = {
    # the red team's two: a comment named the file solves.java (javac then refused public class
    # Main: CE); a class that is not public was run as Main (RE)
    "public_class_in_a_comment": "// This public class solves the a+b problem\npublic class Main " + MAIN_BODY,
    "only_class_not_public": "class TestHello " + MAIN_BODY,
    "block_comment": "/* public class Foo { } */\nimport java.util.*;\npublic class Sol " + MAIN_BODY,
    "several_classes": "class Helper { static int twice(int x) { return 2 * x; } }\nclass Reader { }\n"
                       "class Solution " + MAIN_BODY + "\nclass After { }\n",
    "class_name_in_a_string": "class Helper { static final String S = \"public class Fake {\"; }\npublic class Main "
                              + MAIN_BODY,
    "class_name_in_a_text_block": "class Helper { static final String S = \"\"\"\n    public class Fake { \\\"\"\"\n"
                                  "    \"\"\"; }\npublic class Main " + MAIN_BODY,
    "class_name_in_a_char_and_string_escapes": "class Helper { char q = '\"'; String s = \"\\\" public class Fake\"; }\n"
                                               "public class Main " + MAIN_BODY,
    "generic_public_class_without_main": "public class Pair<A extends Comparable<A>, B> { A a; B b; }\n"
                                         "class Main " + MAIN_BODY,
    "nested_classes_and_annotations": "@SuppressWarnings(\"unchecked\")\nfinal class Sol {\n"
                                      "  static class Inner { public static void main(String[] a) { System.out.println(-1); } }\n"
                                      "  @Deprecated public static void main(final String... args) { "
                                      "java.util.Scanner in = new java.util.Scanner(System.in); "
                                      "System.out.println(in.nextInt() + in.nextInt()); } }\n",
    "main_in_an_interface": "interface Runner " + MAIN_BODY.replace("public static", "static"),
    "main_in_an_enum": "enum Solver { INSTANCE; " + MAIN_BODY[1:],
    "package": "package contest.ab;\nimport java.io.*;\npublic class Sol " + MAIN_BODY,
    "unicode_escapes": "public \\u0063lass Uni " + MAIN_BODY,
    "unicode_escaped_newline_ends_a_comment": "class Real " + MAIN_BODY + " // \\u000a public class Other { }\n",
}


@pytest.mark.parametrize("name", sorted(JAVA))
def test_java_runs_the_class_with_main_named_by_the_program_s_tokens(backend: Sandbox, name: str) -> None:
    prog = backend.compile("java", JAVA[name])
    assert prog.ok, prog.message
    [result] = backend.run(prog, [b"1 2\n"], Limits(time_s=5, memory_mb=256))
    assert (result.verdict, result.stdout) == (Verdict.OK, b"3\n"), (prog.main_class, result)


def test_a_java_class_name_too_long_for_a_file_is_ce_not_se(sb: Sandbox) -> None:
    # a public class's file is named after it; a name past a file name's 255 bytes could not
    # be written (a sandbox error): javac refuses it from Main.java instead
    prog = sb.compile("java", "public class " + "A" * 300 + " " + MAIN_BODY)
    assert prog.verdict == Verdict.CE and "should be declared in a file named" in prog.message, prog
