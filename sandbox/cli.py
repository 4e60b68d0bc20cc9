"""`sandbox_run`: compile a source file and run it on inputs, one JSON object per input."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from . import BACKENDS, get_sandbox
from .languages import LANGUAGES
from .types import Limits, RunResult, SandboxUnavailable


def build_parser(prog: str = "sandbox_run") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Run a program in the sandbox.")
    parser.add_argument("source", help="source file of the program")
    parser.add_argument("--language", required=True, choices=LANGUAGES)
    parser.add_argument("--time-limit", type=float, default=2.0, metavar="SECONDS")
    parser.add_argument("--memory-limit", type=int, default=256, metavar="MB")
    parser.add_argument("--input", action="append", default=[], metavar="FILE",
                        help="input file (repeatable); without it the program reads an empty stdin")
    parser.add_argument("--backend", choices=BACKENDS, default=None)
    parser.add_argument("--cpp-std", default="c++17")
    return parser


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args = build_parser().parse_args(argv)
    if args.time_limit <= 0 or args.memory_limit <= 0:
        print("sandbox_run: limits must be positive", file=err)
        return 2
    try:
        source = Path(args.source).read_text()
        inputs = [Path(name).read_bytes() for name in args.input] or [b""]
    except OSError as exc:
        print(f"sandbox_run: {exc}", file=err)
        return 2
    try:
        sb = get_sandbox(args.backend)
        prog = sb.compile(args.language, source, cpp_std=args.cpp_std)
    except (SandboxUnavailable, ValueError) as exc:
        print(f"sandbox_run: {exc}", file=err)
        return 2
    if not prog.ok:
        results = [RunResult(verdict=prog.verdict, stderr=prog.message)]
    else:
        results = sb.run(prog, inputs, Limits(time_s=args.time_limit, memory_mb=args.memory_limit))
    for result in results:
        print(json.dumps(result.to_dict()), file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
