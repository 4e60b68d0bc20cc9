"""How each language is compiled and started inside the sandbox.

Paths here are the paths *inside* the sandbox: the program's directory is
bound at PROG_DIR, a compile's writable build directory at BUILD_DIR and the
precompiled-header directory at PCH_DIR.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PROG_DIR = "/.hts-prog"
BUILD_DIR = "/build"
PCH_DIR = "/.hts-pch"

PYTHON = "/usr/bin/python3"
GXX = "/usr/bin/g++"
JAVA_HOME = "/usr/lib/jvm/java-17-openjdk-amd64"
JAVA = f"{JAVA_HOME}/bin/java"
JAVAC = f"{JAVA_HOME}/bin/javac"
STDCXX_HEADER_GLOB = "/usr/include/x86_64-linux-gnu/c++/*/bits/stdc++.h"

LANGUAGES = ("python3", "cpp", "java")
CPP_STDS = ("c++11", "c++14", "c++17", "c++20", "gnu++17", "gnu++20")

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


def cpp_flags(cpp_std: str) -> list[str]:
    if cpp_std not in CPP_STDS:
        raise ValueError(f"unsupported C++ standard {cpp_std!r}; choose one of {', '.join(CPP_STDS)}")
    return ["-O2", f"-std={cpp_std}", "-pipe", "-DONLINE_JUDGE"]


_PUBLIC_CLASS = re.compile(r"\bpublic\s+(?:(?:final|abstract|static|sealed)\s+)*class\s+([A-Za-z_$][\w$]*)")


def java_main_class(source: str) -> str:
    """The class javac requires the file to be named after; Main by default."""
    match = _PUBLIC_CLASS.search(source)
    return match.group(1) if match else "Main"


def compile_step(language: str, source: str, *, cpp_std: str = "c++17") -> CompileStep:
    if language == "python3":
        # a syntax check only, so that a broken program is CE and not RE on every test
        check = "import sys; compile(open(sys.argv[1], 'rb').read(), 'main.py', 'exec')"
        return CompileStep("main.py", [PYTHON, "-I", "-c", check, f"{BUILD_DIR}/main.py"], "py-I", PYTHON)
    if language == "cpp":
        flags = cpp_flags(cpp_std)
        argv = [GXX, *flags, "-I", PCH_DIR, "-o", f"{BUILD_DIR}/main", f"{BUILD_DIR}/main.cpp"]
        return CompileStep("main.cpp", argv, " ".join(flags), GXX, needs_pch=True)
    if language == "java":
        cls = java_main_class(source)
        argv = [JAVAC, "-J-Xmx512m", "-J-XX:+UseSerialGC", "-encoding", "UTF-8", "-nowarn",
                "-d", f"{BUILD_DIR}/classes", f"{BUILD_DIR}/{cls}.java"]
        return CompileStep(f"{cls}.java", argv, "javac-17", JAVAC, main_class=cls)
    raise ValueError(f"unsupported language {language!r}; choose one of {', '.join(LANGUAGES)}")


def pch_step(header: str, cpp_std: str) -> list[str]:
    flags = cpp_flags(cpp_std)
    return [GXX, *flags, "-x", "c++-header", header, "-o", f"{BUILD_DIR}/bits/stdc++.h.gch"]


def run_argv(language: str, *, main_class: str = "", memory_mb: int = 256) -> list[str]:
    if language == "python3":
        return [PYTHON, "-I", f"{PROG_DIR}/main.py"]
    if language == "cpp":
        return [f"{PROG_DIR}/main"]
    if language == "java":
        return [JAVA, f"-Xmx{java_heap_mb(memory_mb)}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-XX:ActiveProcessorCount=1", "-Xshare:auto", "-cp", f"{PROG_DIR}/classes", main_class]
    raise ValueError(f"unsupported language {language!r}")
