"""How each language is compiled and started inside the sandbox.

Paths here are the paths *inside* the sandbox: the program's directory is
bound at PROG_DIR, a compile's writable build directory at BUILD_DIR and the
precompiled-header directory at PCH_DIR.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

PROG_DIR = "/.hts-prog"
BUILD_DIR = "/build"
PCH_DIR = "/.hts-pch"

PYTHON = "/usr/bin/python3"
GXX = "/usr/bin/g++"
GCC = "/usr/bin/gcc"
JAVA_HOME = "/usr/lib/jvm/java-17-openjdk-amd64"
JAVA = f"{JAVA_HOME}/bin/java"
JAVAC = f"{JAVA_HOME}/bin/javac"
STDCXX_HEADER_GLOB = "/usr/include/x86_64-linux-gnu/c++/*/bits/stdc++.h"

LANGUAGES = ("python3", "c", "cpp", "java")
CPP_STDS = ("c++11", "c++14", "c++17", "c++20", "gnu++17", "gnu++20")
# C as Kattis/problemtools compiles it (`gcc -g -O2 -std=gnu17 -static -o {binary} {files} -lm`),
# less -static and -g: linked like our C++ (dynamically, against the host's libc bound read-only
# into the sandbox), so a C binary starts and is measured as a C++ one is, and the cache keeps
# no static copy of libc per program (an a+b: 16 KB linked dynamically, 870 KB with -static).
# -lm after the source, so that math.h's functions link.
C_FLAGS = ("-O2", "-std=gnu17", "-pipe", "-DONLINE_JUDGE")
C_LIBS = ("-lm",)

# The JVM reserves far more address space than it uses, so Java gets no
# RLIMIT_AS.  The whole JVM (heap, direct buffers, metaspace, code, stacks) is
# held to the problem's memory limit by the cgroup like any other program;
# -Xmx is only a hint that makes the collector work before the cgroup kills,
# leaving this much of the limit to what lives outside the heap.
JAVA_NON_HEAP_MB = 64


def java_heap_mb(memory_mb: int) -> int:
    return max(memory_mb // 2, memory_mb - JAVA_NON_HEAP_MB)


@dataclass(frozen=True)
class CompileStep:
    source_name: str
    argv: list[str]
    flags_key: str
    tool: str
    main_class: str = ""
    needs_pch: bool = False
    extra: dict[str, str] = field(default_factory=dict)


# A judge's own tools (checkers, validators, generators, interactors) are one translation unit
# with testlib.h, hundreds of functions of which a tool calls a few. -fwhole-program makes every
# function but main the unit's own, so GCC drops those never called before it optimises them:
# a testlib checker's -O2 compile takes 1.9 s of CPU instead of 4.5, and what runs is the same
# -O2 code. Contestants' programs keep the judges' usual flags.
WHOLE_PROGRAM = "-fwhole-program"


def cpp_flags(cpp_std: str, *, whole_program: bool = False) -> list[str]:
    if cpp_std not in CPP_STDS:
        raise ValueError(f"unsupported C++ standard {cpp_std!r}; choose one of {', '.join(CPP_STDS)}")
    return ["-O2", f"-std={cpp_std}", "-pipe", "-DONLINE_JUDGE", *([WHOLE_PROGRAM] if whole_program else [])]


# ---- Java: the file's name and the class to run, from the program's tokens -----------------
# javac wants a public top-level class in a file named after it; `java` runs the class named
# on its command line, which must have `public static void main(String[])`.  Both names come
# from the program's tokens, never from its comments, strings or text blocks: "This public
# class solves..." in a comment named the file solves.java (CE for a right program), and a
# program whose only class was `class Solution` (not public, as Kattis and DOMjudge accept)
# was run as Main (RE).

_JAVA_TYPE_KEYWORDS = frozenset({"class", "interface", "enum", "record"})
_JAVA_NAME_START = re.compile(r"[^\W\d]|[$]")
_JAVA_UNICODE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u+([0-9A-Fa-f]{4})")
# a file name holds 255 bytes; a longer class name gets Main.java, and javac's own refusal (CE)
_JAVA_MAX_FILE_STEM = 200
# the tokens of main's modifiers, or of its parameter, looked at (`public static void main(
# final @Annotation(...) String... args)`)
_JAVA_MAIN_SPAN = 32


@dataclass(frozen=True)
class JavaNames:
    file_stem: str  # the source file's name without .java
    main_class: str  # what `java` runs, package included


def _java_unescape(source: str) -> str:
    """Java's first step: \\uXXXX escapes are the characters they name, anywhere (a
    backslash escaped by another one starts none)."""
    if "\\u" not in source:
        return source
    return _JAVA_UNICODE_ESCAPE.sub(lambda m: m.group(1) + chr(int(m.group(2), 16)), source)


# one token of Java source (after its unicode escapes), each alternative starting with
# characters no other one starts with, so that nothing backtracks: time linear in the
# source (tens of ms for the API's 64 KB; this runs in the worker, outside any sandbox)
_JAVA_TOKEN = re.compile(
    r'(?P<skip>\s+|//[^\r\n]*|/\*.*?(?:\*/|\Z))'
    r'|(?P<literal>"{3}(?:[^"\\]|\\.|"(?!""))*(?:"{3}|\Z)|"(?:[^"\\\r\n]|\\.)*"?|'
    r"'(?:[^'\\\r\n]|\\.)*'?)"
    r'|(?P<word>[\w$]+)|(?P<other>.)',
    re.DOTALL,
)


def _java_tokens(source: str) -> list[str]:
    """The program's tokens that matter here: names, keywords and punctuation (one character
    each); comments, string, character and text-block literals dropped (a literal leaves a
    placeholder, so that the tokens around it do not join), numbers kept as words."""
    tokens = []
    for match in _JAVA_TOKEN.finditer(source):
        kind = match.lastgroup
        if kind == "literal":
            tokens.append('"')
        elif kind != "skip":
            tokens.append(match.group())
    return tokens


def _java_main_params(params: list[str]) -> bool:
    """Whether a parameter list is main's: one String[] (String... , String a[]), perhaps
    final, annotated or spelt java.lang.String."""
    kept: list[str] = []
    skip = 0
    for k, token in enumerate(params):
        if skip:
            skip -= 1
            continue
        if token == "@":
            # an annotation: @Name, @a.b.Name, perhaps (arguments)
            j = k + 2
            while j + 1 < len(params) and params[j] == ".":
                j += 2
            if j < len(params) and params[j] == "(":
                depth = 0
                for m in range(j, len(params)):
                    depth += {"(": 1, ")": -1}.get(params[m], 0)
                    if depth == 0:
                        j = m + 1
                        break
            skip = j - k - 1
            continue
        if token != "final":
            kept.append(token)
    text = " ".join(kept).replace("java . lang . String", "String")
    return bool(re.fullmatch(r"String (\[ \]|\. \. \.) [\w$]+|String [\w$]+ \[ \]", text))


def java_names(source: str) -> JavaNames:
    """The source file's name (after its public top-level type, else Main) and the class to
    run: the top-level type that declares `public static void main(String[])` (the public
    one if it does, else the first in the file), else the public type, else the first, else
    Main, with the package's name before it."""
    tokens = _java_tokens(_java_unescape(source))
    package = ""
    types: list[tuple[str, bool, bool]] = []  # name, public, declares main
    depth = 0
    since = 0  # where the current top-level declaration's modifiers start
    i, n = 0, len(tokens)
    while i < n:
        token = tokens[i]
        if depth == 0 and token == "package" and not package:
            j = i + 1
            while j < n and tokens[j] != ";":
                j += 1
            package = "".join(tokens[i + 1:j])
            i = since = j + 1
            continue
        if depth == 0 and token in (";", "}"):
            since = i + 1
        elif (depth == 0 and token in _JAVA_TYPE_KEYWORDS and i + 1 < n and _JAVA_NAME_START.match(tokens[i + 1])
              and (token != "record" or (i + 2 < n and tokens[i + 2] in ("(", "<")))):
            name = tokens[i + 1]
            is_public = "public" in _outside_parentheses(tokens[since:i])
            interface = token == "interface" or (i > 0 and tokens[i - 1] == "@")
            start = i + 2
            while start < n and tokens[start] != "{":
                start += 1
            end, has_main = _java_body(tokens, start, interface=interface)
            types.append((name, is_public, has_main))
            i = since = end + 1
            continue
        depth += {"{": 1, "}": -1}.get(token, 0)
        i += 1
    public = [name for name, is_public, _main in types if is_public]
    with_main = [name for name, _public, has_main in types if has_main]
    if public and public[0] in with_main:
        main = public[0]
    elif with_main:
        main = with_main[0]
    elif public:
        main = public[0]
    else:
        main = types[0][0] if types else "Main"
    stem = public[0] if public and len(public[0].encode("utf-8", "replace")) <= _JAVA_MAX_FILE_STEM else "Main"
    return JavaNames(file_stem=stem, main_class=f"{package}.{main}" if package else main)


def _outside_parentheses(tokens: list[str]) -> list[str]:
    """The tokens not inside parentheses (an annotation's arguments hold no modifiers)."""
    kept, depth = [], 0
    for token in tokens:
        depth += {"(": 1, ")": -1}.get(token, 0)
        if depth == 0 and token not in "()":
            kept.append(token)
    return kept


def _java_body(tokens: list[str], start: int, *, interface: bool) -> tuple[int, bool]:
    """Where the type body opened at `start` closes, and whether it declares main (its
    methods are public in an interface)."""
    depth, since, has_main = 0, start + 1, False
    i, n = start, len(tokens)
    while i < n:
        token = tokens[i]
        if token == "{":
            depth += 1
            if depth == 2:
                # a member's body (or an initializer) begins: the member's head ends here
                since = i + 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                return i, has_main
            if depth == 1:
                since = i + 1
        elif depth == 1 and token == ";":
            since = i + 1
        elif (depth == 1 and token == "main" and i + 1 < n and tokens[i + 1] == "(" and i > 0
              and tokens[i - 1] == "void"):
            # main's head and parameters are a few tokens: looked at within a bound, so that
            # no run of `void main(` makes this slow
            params = tokens[i + 2:i + 2 + _JAVA_MAIN_SPAN]
            head = _outside_parentheses(tokens[max(since, i - _JAVA_MAIN_SPAN):i])
            if (")" in params and "static" in head and ("public" in head or interface)
                    and _java_main_params(params[:params.index(")")])):
                has_main = True
        i += 1
    return n, has_main


# What `python3 -I main.py` does before it runs main.py: compile it, at recursion depth 0.  The
# compiler's depth limit is the recursion limit less the depth compile() is called at (each
# level three AST levels), so a check at the -c module's depth refused deeply nested
# expressions a fresh interpreter compiles: the limit is raised by that depth for the call,
# which the interpreter names when refused a limit under it.  The Python zygote compiles
# the same way (zygote._compile_program), so what passes here compiles there.
PYTHON_CHECK = """import sys
source = open(sys.argv[1], 'rb').read()
depth = 2  # this module's frame and the call, where the interpreter does not say it
try:
    sys.setrecursionlimit(1)
except RecursionError as exc:
    said = str(exc).partition(' at the recursion depth ')[2].partition(':')[0]
    depth = int(said) if said.isdigit() else depth
sys.setrecursionlimit(sys.getrecursionlimit() + depth)
compile(source, 'main.py', 'exec', dont_inherit=True)
"""


def compile_step(language: str, source: str, *, cpp_std: str = "c++17", whole_program: bool = False) -> CompileStep:
    if language == "python3":
        # a syntax check only, so that a broken program is CE and not RE on every test
        return CompileStep("main.py", [PYTHON, "-I", "-c", PYTHON_CHECK, f"{BUILD_DIR}/main.py"], "py-I-depth0",
                           PYTHON)
    if language == "cpp":
        flags = cpp_flags(cpp_std, whole_program=whole_program)
        argv = [GXX, *flags, "-I", PCH_DIR, "-o", f"{BUILD_DIR}/main", f"{BUILD_DIR}/main.cpp"]
        return CompileStep("main.cpp", argv, " ".join(flags), GXX, needs_pch=True)
    if language == "c":
        # gcc, never g++: a C program is not a C++ one (`int *p = malloc(4);`, a variable named
        # `class`), and C++'s precompiled header means nothing to it
        argv = [GCC, *C_FLAGS, "-o", f"{BUILD_DIR}/main", f"{BUILD_DIR}/main.c", *C_LIBS]
        return CompileStep("main.c", argv, " ".join((*C_FLAGS, *C_LIBS)), GCC)
    if language == "java":
        names = java_names(source)
        # javac's own JVM compiles with C1 only: a compile is too short for C2 to pay back (1.03 ->
        # 0.68 s of CPU for a small program); the class files are byte for byte the same, so the
        # cache's entries stand
        argv = [JAVAC, "-J-Xmx512m", "-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1", "-encoding", "UTF-8",
                "-nowarn", "-d", f"{BUILD_DIR}/classes", f"{BUILD_DIR}/{names.file_stem}.java"]
        # the key names the rule that found the names: entries found by another are not this one's
        return CompileStep(f"{names.file_stem}.java", argv, "javac-17 names-from-tokens", JAVAC,
                           main_class=names.main_class)
    raise ValueError(f"unsupported language {language!r}; choose one of {', '.join(LANGUAGES)}")


def compiler_of(language: str) -> str | None:
    """The host path of the compiler a language needs (bound into the sandbox with /usr), None
    for one that needs none beyond the interpreter."""
    return {"c": GCC, "cpp": GXX, "java": JAVAC}.get(language)


def compiler_missing(language: str) -> str:
    """Why programs in `language` cannot be built here ("" when they can): what an importer
    says when it refuses a program per program instead of judging it in another language."""
    tool = compiler_of(language)
    if tool is None or os.access(tool, os.X_OK):
        return ""
    return f"{tool} is not installed on this machine, so {language} programs cannot be compiled here"


def pch_step(header: str, cpp_std: str) -> list[str]:
    flags = cpp_flags(cpp_std)
    return [GXX, *flags, "-x", "c++-header", header, "-o", f"{BUILD_DIR}/bits/stdc++.h.gch"]


def run_argv(language: str, *, main_class: str = "", memory_mb: int = 256) -> list[str]:
    if language == "python3":
        return [PYTHON, "-I", f"{PROG_DIR}/main.py"]
    if language in ("c", "cpp"):
        return [f"{PROG_DIR}/main"]
    if language == "java":
        return [JAVA, f"-Xmx{java_heap_mb(memory_mb)}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-XX:ActiveProcessorCount=1", "-Xshare:auto", "-cp", f"{PROG_DIR}/classes", main_class]
    raise ValueError(f"unsupported language {language!r}")
