"""`judge_package PID... [--json] [--submission-filter REGEX]`: each labelled submission of an
imported problem package judged as problemtools' verifyproblem would, beside its folder's verdict.

Prints a table (per submission: the folder, the verdict we give at the time limit and at its
high end, OK or MISMATCH; per test of a mismatch: group, name, verdict, time and the
checker's message), or the report as JSON with --json. Exits 1 when a submission does not
get its folder's verdict.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from problems.models import Problem
from problems.package_fidelity import package_fidelity


def _problem(pid: str) -> Problem:
    source, _, rest = pid.partition(":")
    rows = list(Problem.objects.filter(source=source, pid=rest)[:1]) if rest else []
    rows = rows or list(Problem.objects.filter(pid=pid, extra__has_key="package")[:2])
    if not rows:
        raise CommandError(f"unknown problem {pid!r} (write icpc:NAME or the package's short name)")
    if len(rows) > 1:
        raise CommandError(f"problem id {pid!r} exists in several sources; write SOURCE:PID")
    return rows[0]


def _regex(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid regex: {exc}") from None


class Command(BaseCommand):
    help = ("Judge an imported package's labelled submissions (submissions/<verdict>/) as verifyproblem would "
            "and print, per submission, our verdict beside its folder's, per test on a mismatch.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("pids", nargs="+", metavar="PID", help="icpc:NAME (or the package's short name)")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("-s", "--submission-filter", type=_regex, metavar="REGEX",
                            help="judge only the submissions whose name (folder and file, e.g. accepted/hello.c) "
                                 "this regex finds, as verifyproblem's -s; a time limit computed from them is "
                                 "reported, not kept")

    def handle(self, *args: Any, **options: Any) -> None:
        reports = [package_fidelity(problem=_problem(pid), submission_filter=options["submission_filter"])
                   for pid in options["pids"]]
        if options["json"]:
            self.stdout.write(json.dumps(reports, ensure_ascii=False))
        else:
            for report in reports:
                self.stdout.write(_table(report))
        if any(report.get("mismatches") for report in reports):
            raise CommandError("some submissions did not get their folder's verdict", returncode=1)


def _table(report: dict[str, Any]) -> str:
    lines = [f"{report['problem']}: time limit {report.get('time_limit_s', '?')} s "
             f"(high {report.get('time_limit_high_s', '?')} s)"]
    if report.get("time_limit_computed"):
        lines.append(f"  time limit computed as verifyproblem does: {report['time_limit_computed']}")
    if report.get("not_judged"):
        lines.append(f"  not judged: {report['not_judged']}")
    if report.get("filtered_out"):
        lines.append(f"  {report['filtered_out']} submissions left out by the filter")
    for sub in report["submissions"]:
        status = "OK" if sub["ok"] else ("-" if not sub["result"] else "MISMATCH")
        lines.append(f"  {status:8} {sub['folder']:22} {sub['name']:44} expected {sub['expected'] or '-':4} "
                     f"got {sub['result'] or '-':4} (high: {sub['result_high'] or '-'})"
                     + (f"  {sub['note']}" if sub["note"] else ""))
        for test in sub.get("tests", []):
            message = " ".join(test["message"].split())[:200]
            lines.append(f"           {test['group']}/{test['name']}: {test['verdict']} {test['time_ms']} ms"
                         + (f"  {message}" if message else ""))
    lines.append(f"  {report.get('judged', 0)} judged, {report.get('mismatches', 0)} mismatches")
    return "\n".join(lines) + "\n"
