"""Judging an imported package's labelled submissions as problemtools' `verifyproblem` does.

For each candidate filed under a folder of the package (Solution.package_verdict), the
program is judged on every test of the package's official suite, in the package's order
(data/sample first, then data/secret, groups and tests by name), under the time limit's
high end (time limit x time_limit_to_tle). Its result is the first test that is not AC
(or AC); its result at the time limit itself reads a test over the limit as TLE. Like
verifyproblem, a submission gets its folder's verdict when either result is the folder's
(accepted: AC on all tests). Kattis has no MLE verdict: a memory limit is a run-time error.
slow_accepted, which verifyproblem does not check, must be AC or TLE (DOMjudge's reading);
partially_accepted and other folders are listed, not judged. An interactive problem's
submissions run against its interactor (problems/packages/interactive.py).

When the package fixes no time limit, it is computed as verifyproblem does: the accepted
submissions run under a generous limit and the limit is max(1 s, ceil(slowest x
ac_to_time_limit)); the problem keeps that limit.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field
from typing import Any

from problems.judging import JudgeResult, judge_code
from problems.models import Problem, Solution, TestCase, TestSuite
from problems.packages.interactive import refusal as interactive_refusal
from problems.packages.interactive import suite_interactor
from problems.verify_types import Mode
from sandbox import Sandbox

REQUIRED = {"accepted": "AC", "wrong_answer": "WA", "time_limit_exceeded": "TLE", "run_time_error": "RE",
            "memory_limit_exceeded": "RE", "slow_accepted": "AC or TLE"}
# Polygon's solution tags (a package whose format is "polygon"); rejected/failed: anything but AC
POLYGON_REQUIRED = {"main": "AC", "accepted": "AC", "wrong-answer": "WA", "presentation-error": "WA",
                    "time-limit-exceeded": "TLE", "memory-limit-exceeded": "MLE", "rejected": "not AC",
                    "failed": "not AC"}
# our verdicts as Kattis names them (no MLE: a run-time error there)
AS_KATTIS = {"AC": "AC", "WA": "WA", "TLE": "TLE", "RE": "RE", "MLE": "RE", "OLE": "RE", "CE": "CE", "SE": "SE"}
# where the limit is unknown, AC submissions run under this (problemtools uses 300 s)
PROBE_LIMIT_S = 10.0


@dataclass
class TestRow:
    ordinal: int
    group: str
    name: str
    verdict: str
    time_ms: int
    message: str = ""


@dataclass
class SubmissionRow:
    name: str
    folder: str
    language: str
    expected: str
    result: str = ""  # at the time limit
    result_high: str = ""  # at the time limit x time_limit_to_tle
    ok: bool = False
    note: str = ""
    tests: list[TestRow] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in ("name", "folder", "language", "expected", "result", "result_high",
                                               "ok", "note")}
        if not self.ok:
            data["tests"] = [vars(t) for t in self.tests]
        return data


def _with_limit(problem: Problem, seconds: float) -> Problem:
    clone = copy.copy(problem)
    clone.time_limit_ms = max(1, round(seconds * 1000))
    return clone


def _run(problem: Problem, suite: TestSuite, sol: Solution, seconds: float, sb: Sandbox | None) -> JudgeResult:
    # an interactive suite stops at its first failure (the verdict verifyproblem reads is the
    # first in judging order either way); judge_code routes it to the interactor
    interactive = suite_interactor(suite) is not None
    return judge_code(problem=_with_limit(problem, seconds), suite=suite, language=sol.language, code=sol.code,
                      mode=Mode.FAIL_FAST if interactive else Mode.ALL, sandbox=sb)


def _rows(result: JudgeResult, names: dict[int, tuple[str, str]], *, keep_mle: bool = False) -> list[TestRow]:
    rows = [TestRow(t.ordinal, *names.get(t.ordinal, ("", "")),
                    t.verdict if keep_mle else AS_KATTIS.get(t.verdict, t.verdict), t.time_ms,
                    (result.failures.get(t.ordinal, (b"", ""))[1] or "")[-1000:])
            for t in result.tests]
    return sorted(rows, key=lambda r: r.ordinal)


def _first_failure(rows: list[TestRow], limit_ms: int | None) -> str:
    for row in rows:
        if row.verdict != "AC":
            return row.verdict
        if limit_ms is not None and row.time_ms > limit_ms:
            return "TLE"
    return "AC"


def package_fidelity(*, problem: Problem, sandbox: Sandbox | None = None,
                     submission_filter: re.Pattern[str] | None = None) -> dict[str, Any]:
    """The verifyproblem table of `problem`'s labelled submissions (problem must come from a package).

    `submission_filter`, as verifyproblem's `-s`: only the submissions whose name (folder and
    file, `accepted/hello.c`) it finds judged, and only the accepted ones among them lower-bound a
    computed time limit, which is then reported but not kept (a subset's limit is not the
    package's); with none of them accepted, the problem's stored limit is used, and the report says so."""
    package = (problem.extra or {}).get("package") or {}
    suite = problem.suites.filter(status=TestSuite.Status.ACTIVE, origin=TestSuite.Origin.OFFICIAL).first()
    report: dict[str, Any] = {"problem": f"{problem.source}:{problem.pid}", "submissions": []}
    if not package or suite is None:
        report["not_judged"] = "not an imported problem package (no package metadata or no official suite)"
        return report
    if package.get("not_judgeable"):
        report["not_judged"] = package["not_judgeable"]
        interactor = suite_interactor(suite) if package.get("interactive") and not package.get("scoring") else None
        if interactor is not None:
            # imported before interactive judging existed, or judged now that it does
            refused = interactive_refusal(interactor)
            report.pop("not_judged")
            if refused:
                report["not_judged"] = f"interactive problem: its interactor cannot run: {refused}"
    names = {o: (g, n) for o, g, n in TestCase.objects.filter(suite=suite).values_list("ordinal", "group", "generator")}
    candidates = list(problem.solutions.filter(role=Solution.Role.CANDIDATE).exclude(package_verdict="")
                      .order_by("package_verdict", "name"))
    if submission_filter is not None:
        kept = [sol for sol in candidates if submission_filter.search(sol.name)]
        report["filtered_out"] = len(candidates) - len(kept)
        candidates = kept
    polygon = package.get("format") == "polygon"
    required = POLYGON_REQUIRED if polygon else REQUIRED
    tle_factor = float(package.get("time_limit_to_tle") or 2.0)
    limit_s = problem.time_limit_ms / 1000
    if not package.get("time_limit_fixed") and not report.get("not_judged"):
        slowest = 0
        accepted = [sol for sol in candidates if sol.package_verdict == "accepted"]
        for sol in accepted:
            probe = _run(problem, suite, sol, PROBE_LIMIT_S, sandbox)
            slowest = max([slowest] + [t.time_ms for t in probe.tests])
        ac_factor = float(package.get("ac_to_time_limit") or 2.0)
        if accepted:
            limit_s = float(max(1, math.ceil(slowest / 1000 * ac_factor)))
            report["time_limit_computed"] = {"slowest_accepted_ms": slowest, "ac_to_time_limit": ac_factor,
                                             "time_limit_s": limit_s}
        else:
            why = "passed the filter" if submission_filter is not None else "in the package"
            report["time_limit_computed"] = {"note": f"no accepted submission {why}: the stored time "
                                                     f"limit, {limit_s:g} s, is used"}
        if submission_filter is None and problem.time_limit_ms != round(limit_s * 1000):
            problem.time_limit_ms = round(limit_s * 1000)
            problem.save(update_fields=["time_limit_ms"])
    report["time_limit_s"] = limit_s
    report["time_limit_high_s"] = limit_s * tle_factor
    mismatches = 0
    for sol in candidates:
        row = SubmissionRow(name=sol.name, folder=sol.package_verdict, language=sol.language,
                            expected=required.get(sol.package_verdict, ""))
        report["submissions"].append(row)
        if report.get("not_judged"):
            row.note = f"not judged: {report['not_judged']}"
            continue
        if not row.expected:
            row.note = f"not judged: the folder {sol.package_verdict!r} names no pass/fail verdict"
            continue
        result = _run(problem, suite, sol, limit_s * tle_factor, sandbox)
        if result.verdict in ("CE", "SE") and not result.tests:
            row.result = row.result_high = result.verdict
            row.note = result.message[-1000:]
        else:
            row.tests = _rows(result, names, keep_mle=polygon)
            row.result_high = _first_failure(row.tests, None)
            row.result = _first_failure(row.tests, round(limit_s * 1000))
        if "SE" in (row.result, row.result_high):
            row.note = row.note or next((t.message for t in row.tests if t.verdict == "SE"), "")
            row.note = f"judging error: {row.note}" if not row.note.startswith("judging error") else row.note
        elif sol.package_verdict == "slow_accepted":
            # verifyproblem does not check this folder; DOMjudge and BAPCtools read it as "right
            # but may be too slow": AC or TLE, never a wrong answer or a crash
            row.ok = row.result_high in ("AC", "TLE") and row.result in ("AC", "TLE")
            if row.ok and row.result == "AC":
                row.note = "accepted within the time limit itself (not slow)"
        elif row.expected == "not AC":
            row.ok = row.result != "AC" and row.result_high != "AC"
        else:
            row.ok = row.expected in (row.result, row.result_high)
        mismatches += not row.ok
    report["judged"] = sum(1 for r in report["submissions"] if r.result)
    report["mismatches"] = mismatches
    report["submissions"] = [r.to_dict() for r in report["submissions"]]
    return report
