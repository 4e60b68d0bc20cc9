"""What judging (problems/judging.py) asks of a suite judged by a package's own checker.

`suite_checker(suite)` names the checker (its digest is part of the judging's identity, so
every cache keyed on it changes with the checker); `checker_accepts` judges OK runs with it:
"AC", "WA" (a presentation error is a wrong answer, its message says PE), or "SE" when the
checker itself failed (FAIL, crash, timeout, compile error, no testlib.h) or cannot judge
this problem at all (an interactive problem without interactive judging).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from problems.models import PackageJudge, TestSuite
from problems.packages.default_validator import FlagError, Flags, parse_flags, validate
from problems.packages.external import Case, ExternalJudge, Kind, run_judge
from problems.packages.interactive import Interactor
from problems.packages.interactive import refusal as interactive_refusal
from sandbox import RunResult, Sandbox


@dataclass(frozen=True)
class SuiteChecker:
    judge_id: int
    kind: str
    digest: str
    external: ExternalJudge | None = None
    flags: Flags | None = None
    refused: str = ""
    # an interactive problem's interactor: judging runs the program against it, not a checker
    interactor: Interactor | None = None


def suite_checker(suite: TestSuite) -> SuiteChecker | None:
    """The package checker that judges `suite` (its own, one query), or None."""
    if not suite.checker_id:
        return None
    row = PackageJudge.objects.filter(pk=suite.checker_id).first()
    if row is None:
        return None
    refused = row.refused
    flags = None
    external = None
    interactor = None
    if row.kind == PackageJudge.Kind.KATTIS_DEFAULT:
        try:
            flags = parse_flags(list(row.flags or []))
        except FlagError as exc:
            refused = refused or f"the default output validator refuses its flags: {exc}"
    elif row.kind in PackageJudge.INTERACTOR_KINDS:
        interactor = Interactor(kind=row.kind, language=row.language, entry=row.entry,
                                files=tuple(sorted((row.files or {}).items())), flags=tuple(row.flags or []))
        refused = refused or (interactive_refusal(interactor) or "")
    else:
        external = ExternalJudge(kind=Kind(row.kind), language=row.language, entry=row.entry,
                                 files=tuple(sorted((row.files or {}).items())), flags=tuple(row.flags or []))
    return SuiteChecker(judge_id=row.pk, kind=row.kind, digest=row.digest, external=external, flags=flags,
                        refused=refused, interactor=interactor)


@dataclass(frozen=True)
class Judged:
    verdict: str  # "AC", "WA" or "SE"
    message: str


def refusal_message(checker: SuiteChecker) -> str:
    """Why this checker judges nothing (checker.refused set): judging refuses before anything runs."""
    if checker.refused.startswith("judging error"):
        return checker.refused
    return f"judging error: the package's checker cannot run: {checker.refused}"


def checker_accepts(sb: Sandbox, checker: SuiteChecker, inputs: Sequence[bytes], answers: Sequence[bytes],
                    runs: Sequence[RunResult]) -> list[tuple[str, str]]:
    """(verdict, message) for each OK run, judged by the package's checker."""
    if checker.refused:
        return [("SE", refusal_message(checker)) for _ in runs]
    if checker.flags is not None:
        out: list[tuple[str, str]] = []
        for answer, run in zip(answers, runs, strict=True):
            accepted, message = validate(answer, bytes(run.stdout), checker.flags)
            out.append(("AC" if accepted else "WA", message.strip()))
        return out
    assert checker.external is not None
    outcomes = run_judge(sb, checker.external,
                         [Case(i, bytes(r.stdout), a) for i, a, r in zip(inputs, answers, runs, strict=True)])
    judged: list[tuple[str, str]] = []
    for outcome in outcomes:
        if outcome.failed:
            judged.append(("SE", f"judging error: {outcome.message}"[:4000]))
        elif outcome.verdict == "PE":
            judged.append(("WA", f"presentation error: {outcome.message}"[:4000]))
        else:
            judged.append((outcome.verdict, outcome.message[:4000]))
    return judged
