"""`judge PID --language L --file SOURCE [--all] [--origin O]`: judge a program, print JSON.

Uses the problem's active generated suite, or the best other active suite (official,
imported, public samples); --origin chooses one. Hacking tests run first, and judging
stops at the first failing test unless --all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from problems.judging import judge_code, suite_for_judging
from problems.models import SUPPORTED_LANGUAGES, Problem, TestSuite
from problems.verify_types import Mode

ALIASES = {"py": "python3", "python": "python3", "py3": "python3", "c++": "cpp", "cxx": "cpp", "c++17": "cpp"}


def _problem(pid: str) -> Problem:
    rows = list(Problem.objects.filter(pid=pid)[:2])
    if not rows and ":" in pid:
        source, _, rest = pid.partition(":")
        rows = list(Problem.objects.filter(source=source, pid=rest)[:2])
    if not rows:
        raise CommandError(f"unknown problem {pid!r}")
    if len(rows) > 1:
        raise CommandError(f"problem id {pid!r} exists in several sources; write SOURCE:PID")
    return rows[0]


class Command(BaseCommand):
    help = "Judge a program against a problem's test suite in the sandbox and print the verdict as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("pid", help="problem id (or SOURCE:PID)")
        parser.add_argument("--language", required=True, help="python3, cpp or java")
        parser.add_argument("--file", required=True, help="the program's source file")
        parser.add_argument("--all", action="store_true", help="run every test instead of stopping at the first failure")
        parser.add_argument("--origin", default=None, help="suite origin: " + ", ".join(TestSuite.Origin.values))

    def handle(self, *args: Any, **options: Any) -> None:
        language = ALIASES.get(options["language"].lower(), options["language"].lower())
        if language not in SUPPORTED_LANGUAGES:
            raise CommandError(f"unknown language {options['language']!r}; choose one of "
                               + ", ".join(sorted(SUPPORTED_LANGUAGES)))
        origin = options["origin"]
        if origin is not None and origin not in TestSuite.Origin.values:
            raise CommandError(f"unknown origin {origin!r}; choose one of {', '.join(TestSuite.Origin.values)}")
        path = Path(options["file"])
        try:
            code = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror if isinstance(exc, OSError) else exc}") from None
        problem = _problem(options["pid"])
        suite = suite_for_judging(problem, origin)
        if suite is None:
            what = f"no active {origin} suite" if origin else "no active test suite"
            raise CommandError(f"{what} for {problem.pid}")
        result = judge_code(problem=problem, suite=suite, language=language, code=code,
                            mode=Mode.ALL if options["all"] else Mode.FAIL_FAST)
        out = {
            "pid": problem.pid,
            "verdict": result.verdict,
            "passed": result.passed,
            "total": result.total,
            "suite_origin": result.suite_origin,
            "suite_version": result.suite_version,
            "complete": result.complete,
            "message": result.message,
            "tests": [
                {"index": t.index, "ordinal": t.ordinal, "kind": t.kind, "verdict": t.verdict,
                 "time_ms": t.time_ms, "memory_kb": t.memory_kb}
                for t in result.tests
            ],
        }
        self.stdout.write(json.dumps(out))
        # A wrong program is a verdict, not a failure; SE is the machine failing, so the judging
        # this command was asked for did not happen.
        if result.verdict == "SE":
            raise CommandError(f"sandbox error: {result.message or 'the sandbox failed'} (not the program's fault)")
