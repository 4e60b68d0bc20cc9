"""C++ kit parts on testlib (`generate_tests --kit-language cpp`): generators and a checker.

A C++ kit keeps its testlib programs in `kit.extra["testlib"]` and each part's language in
`kit.extra["languages"]` (the Python validator is unchanged: it filters every input as before):

    {"generator": "<C++>", "commands": ["10 1", ...], "hacking_commands": ["200000 max", ...],
     "checker": "<C++>" | null}

Generators and checkers run through problems/packages/external.py's shim, compiled in the
sandbox (compile cache, limits, seccomp) with testlib.h from the HARDTESTS_TESTLIB_H setting: a
generator gets one command's arguments (testlib seeds `rnd` from them, so a command always gives
the same test) and writes one test on stdout; the checker is `checker input output answer` with
testlib's exit codes. The project never ships testlib.h: a C++ kit without one is refused
before anything runs (`testlib_missing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generation.materialise.types import (
    Candidate,
    MaterialiseError,
    Progress,
    SandboxClock,
    Tally,
    generator_limits,
)
from generation.models import FailureReason
from generation.parsing import command_argv
from problems.models import TestCase, TestKit
from problems.packages.external import (
    TESTLIB_H_HELP,
    Case,
    ExternalJudge,
    Kind,
    judge_compile,
    judge_limits,
    parse_reply,
    read_outcome,
    request,
    shim_source,
    testlib_header,
)
from sandbox import CompiledProgram, Limits, Sandbox, Verdict

GENERATOR_FILE = "generator.cpp"
CHECKER_FILE = "checker.cpp"
TESTLIB_KEY = "testlib"
LANGUAGES_KEY = "languages"


@dataclass
class TestlibParts:
    """The testlib programs of a C++ kit (empty for a Python kit)."""

    generator: str = ""
    commands: list[str] = field(default_factory=list)
    hacking_commands: list[str] = field(default_factory=list)
    checker: str = ""

    @property
    def present(self) -> bool:
        return bool(self.generator or self.checker)

    def files(self) -> dict[str, str]:
        """The programs a SEARCH/REPLACE edit may name."""
        return {name: code for name, code in ((GENERATOR_FILE, self.generator), (CHECKER_FILE, self.checker)) if code}

    def as_extra(self) -> dict[str, Any]:
        return {"generator": self.generator, "commands": list(self.commands),
                "hacking_commands": list(self.hacking_commands), "checker": self.checker or None}


def testlib_parts(kit: TestKit | None) -> TestlibParts:
    data = (kit.extra or {}).get(TESTLIB_KEY) if kit is not None else None
    if not isinstance(data, dict):
        return TestlibParts()
    return TestlibParts(generator=str(data.get("generator") or ""),
                        commands=[str(c) for c in data.get("commands") or []],
                        hacking_commands=[str(c) for c in data.get("hacking_commands") or []],
                        checker=str(data.get("checker") or ""))


def languages(parts: TestlibParts, *, validator: bool, python_judge: bool) -> dict[str, str | None]:
    """Each part's language, as the kit stores it."""
    return {"input_validator": "python3" if validator else None,
            "generator": "cpp" if parts.generator else None,
            "checker": "cpp" if parts.checker else ("python3" if python_judge else None)}


def testlib_missing() -> str | None:
    """Why a C++ kit cannot be built here (no testlib.h), or None."""
    if testlib_header() is None:
        return f"a C++ kit needs testlib.h and none is configured: {TESTLIB_H_HELP}"
    return None


def generator_judge(code: str) -> ExternalJudge:
    return ExternalJudge(kind=Kind.TESTLIB_GENERATOR, language="cpp", entry=GENERATOR_FILE,
                         files=((GENERATOR_FILE, code),))


def checker_judge(code: str) -> ExternalJudge:
    return ExternalJudge(kind=Kind.TESTLIB_CHECKER, language="cpp", entry=CHECKER_FILE, files=((CHECKER_FILE, code),))


def compile_error(sb: Sandbox, judge: ExternalJudge) -> str | None:
    """The compiler's message when the program does not compile (None when it does). A sandbox
    failure is the machine's: MaterialiseError(sandbox_error), never the model's mistake."""
    prog = _compiled(sb, judge, judge.entry)
    if prog.ok:
        return None
    return prog.message.strip()[-3000:] or "the compiler gave no message"


@dataclass
class Generated:
    text: str | None
    error: str = ""


def _compiled(sb: Sandbox, judge: ExternalJudge, what: str) -> CompiledProgram:
    """A kit program with its shim, compiled; a compile error comes back as the program's (CE), a
    sandbox failure is raised (the machine's, never the kit's)."""
    language, source = shim_source(judge)
    prog = judge_compile(sb, language, source)
    if not prog.ok and prog.verdict != Verdict.CE:
        raise MaterialiseError(FailureReason.SANDBOX_ERROR, f"sandbox error compiling the {what}: "
                                                            f"{prog.message.strip()[-500:]}")
    return prog


def run_commands(sb: Sandbox, code: str, commands: Sequence[str], clock: SandboxClock,
                 limits: Limits | None = None) -> list[Generated]:
    """One test per command (`gen args > $`); a command that fails gives no test, with the reason.
    A sandbox failure (SE) is raised, never read as the generator's failure."""
    if not commands:
        return []
    prog = _compiled(sb, generator_judge(code), "generator")
    if not prog.ok:
        return [Generated(None, f"the generator does not compile: {prog.message.strip()[-1000:]}") for _ in commands]
    limits = limits or generator_limits()
    runs = sb.run(prog, [request(Case("\0".join(command_argv(c)).encode())) for c in commands], limits)
    clock.add(list(runs))
    out: list[Generated] = []
    for run in runs:
        if run.verdict == Verdict.SE:
            raise MaterialiseError(FailureReason.SANDBOX_ERROR, f"sandbox error running the generator: "
                                                                f"{run.stderr.strip()[-500:]}")
        reply = parse_reply(run.stdout) if run.verdict == Verdict.OK else None
        if reply is None:
            what = {Verdict.TLE: f"exceeds the time limit ({limits.time_s:g} s of CPU, HARDTESTS_GENERATOR_TIME_S)",
                    Verdict.MLE: f"exceeds the memory limit ({limits.memory_mb} MB, HARDTESTS_GENERATOR_MEMORY_MB)",
                    Verdict.OLE: "exceeds the output limit"}.get(run.verdict, f"ends {run.verdict}")
            out.append(Generated(None, what))
            continue
        how, number, parts = reply
        if how != "exit" or number != 0:
            message = parts.get("stderr", b"").decode("utf-8", "replace").strip()[-500:]
            out.append(Generated(None, f"the generator ended with {how} {number}" + (f": {message}" if message else "")))
            continue
        text = parts.get("generated", b"").decode("utf-8", "replace")
        out.append(Generated(text) if text.strip() else Generated(None, "writes an empty test"))
    return out


def testlib_candidates(*, sb: Sandbox, kit: TestKit, tally: Tally, progress: Progress, clock: SandboxClock,
                       check_calls: int, unreproducible: list[str]) -> list[Candidate]:
    """The inputs of a C++ kit's generator commands, in kit order (commands, then hacking commands).
    The first `check_calls` commands are run twice, in separate processes: testlib seeds `rnd` from
    the arguments, so a generator whose test differs (seeded from the clock, `random_device`) is
    named and all its tests dropped."""
    parts = testlib_parts(kit)
    if not parts.generator:
        return []
    jobs = [(c, TestCase.Kind.REGULAR) for c in parts.commands] + \
           [(c, TestCase.Kind.HACKING) for c in parts.hacking_commands]
    commands = [c for c, _ in jobs]
    again = commands[:check_calls]
    results = run_commands(sb, parts.generator, commands + again, clock)
    first, second = results[:len(commands)], results[len(commands):]
    for number, (one, two) in enumerate(zip(first, second, strict=False), 1):
        if one.text is not None and one.text != two.text:
            unreproducible.append("generator")
            for _, kind in jobs:
                tally.add(kind, "generated")
                tally.add(kind, "failed")
            progress.log(f"the generator is not reproducible: command {number} ({commands[number - 1]!r}) gave a "
                         "different test when run again (seed rnd only from the arguments: registerGen(argc, argv, 1)); "
                         f"all its {len(commands)} tests count as failed")
            return []
    out: list[Candidate] = []
    failures: list[str] = []
    for number, ((command, kind), result) in enumerate(zip(jobs, first, strict=True), 1):
        tally.add(kind, "generated")
        if result.text is None:
            tally.add(kind, "failed")
            failures.append(f"{command!r}: {result.error}")
            continue
        out.append(Candidate(result.text, kind, f"generator {command}"[:200], number))
    note = f"; first failure: {failures[0][:300]}" if failures else ""
    progress.log(f"testlib generator: {len(out)}/{len(jobs)} commands gave a test{note}")
    return out


def testlib_checker_accepts(sb: Sandbox, code: str, triples: Sequence[tuple[str, bytes, bytes]],
                            clock: SandboxClock) -> list[tuple[bool, str]]:
    """(accepted, why not) for each (input, candidate output, reference answer), judged by the testlib
    checker as `checker input output answer`: exit 0 accepts; WA, PE, FAIL, a crash or a compile error
    reject with the checker's message. A sandbox failure is raised (the machine's, not the checker's)."""
    if not triples:
        return []
    judge = checker_judge(code)
    prog = _compiled(sb, judge, "checker")
    if not prog.ok:
        return [(False, f"failed: the checker does not compile: {prog.message.strip()[-500:]}") for _ in triples]
    runs = sb.run(prog, [request(Case(text.encode(), cand, ref)) for text, cand, ref in triples],
                  judge_limits())
    clock.add(list(runs))
    verdicts: list[tuple[bool, str]] = []
    for run in runs:
        if run.verdict == Verdict.SE:
            raise MaterialiseError(FailureReason.SANDBOX_ERROR, f"sandbox error running the checker: "
                                                                f"{run.stderr.strip()[-500:]}")
        outcome = read_outcome(judge, run)
        if outcome.accepted:
            verdicts.append((True, ""))
        elif outcome.failed:
            verdicts.append((False, f"failed: {outcome.message[:300]}"))
        else:
            verdicts.append((False, f"{outcome.verdict}: {outcome.message[:300]}"))
    return verdicts
