"""`import_dataset icpc PATH...`: ICPC/Kattis packages into problems, suites, judges and candidates.

Every package is read first (nothing written); then all of them are written in one
transaction, so an import that fails half way leaves nothing behind. A package refused
whole (multi-pass, no tests, unreadable problem.yaml) is skipped with its reason; a part
refused (a submission in a language the sandbox does not run, a symlink leaving the
package, a validator we cannot build) is listed under its package. Re-importing the same
package changes nothing; a changed one gets a new official suite version.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from django.db import transaction

from problems.blobs import blobs_put, preview
from problems.models import Comparison, PackageJudge, Problem, Solution, TestCase, TestSuite
from problems.packages.external import ExternalJudge, Kind, refusal
from problems.packages.icpc import JudgeSource, Package, PackageError, opened, package_dirs, package_read
from problems.packages.polygon import polygon_dirs, polygon_read
from problems.services import code_sha256, suite_activate, suite_create
from sandbox import Sandbox, get_sandbox


class PackageImportAborted(Exception):
    """Nothing was imported; the message says why (one line)."""


def judge_digest(source: JudgeSource) -> str:
    payload = json.dumps([source.kind, source.language, source.entry, source.flags, sorted(source.files.items())],
                         ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def as_external(judge: PackageJudge) -> ExternalJudge:
    """The runnable form of a stored judge (problems/packages/external.py)."""
    return ExternalJudge(kind=Kind(judge.kind), language=judge.language, entry=judge.entry,
                         files=tuple(sorted((judge.files or {}).items())), flags=tuple(judge.flags or []))


def _refusal_of(source: JudgeSource) -> str:
    if source.refused or source.kind == "kattis_default":
        return source.refused
    if source.kind in PackageJudge.INTERACTOR_KINDS:
        return ""
    reason = refusal(ExternalJudge(kind=Kind(source.kind), language=source.language, entry=source.entry,
                                   files=tuple(sorted(source.files.items())), flags=tuple(source.flags)))
    return reason or ""


def _tests_digest(pkg: Package, checker: str) -> str:
    digest = hashlib.sha256(checker.encode())
    for test in pkg.tests:
        for part in (test.group.encode(), test.name.encode(), test.input, test.answer):
            digest.update(len(part).to_bytes(8, "little") + part)
    return digest.hexdigest()


def _not_judgeable(pkg: Package, checker: JudgeSource | None, refused: str) -> str:
    if pkg.interactive:
        return "interactive problem: judging it needs interactive support (imported with its interactor)"
    if pkg.scoring:
        return "scoring problem: imported with its groups; pass/fail judging does not give its scores"
    if checker is None:
        return "no output validator"
    if refused:
        return f"its output validator cannot run: {refused}"
    return ""


def package_write(pkg: Package) -> dict[str, Any]:
    """Write one read package (inside the caller's transaction); its report."""
    samples = [{"input": t.input.decode("utf-8", "replace"), "output": t.answer.decode("utf-8", "replace")}
               for t in pkg.tests if t.sample][:10]
    problem, created = Problem.objects.get_or_create(source=pkg.source, pid=pkg.short_name,
                                                     defaults={"title": pkg.title[:500], "statement": pkg.statement})
    judges: list[tuple[JudgeSource, PackageJudge]] = []
    for source in pkg.judges:
        digest = judge_digest(source)
        refused = _refusal_of(source)
        row = PackageJudge.objects.filter(problem=problem, kind=source.kind, digest=digest).first()
        if row is None:
            row = PackageJudge.objects.create(problem=problem, kind=source.kind, name=source.name[:200],
                                              language=source.language[:20], entry=source.entry[:300],
                                              files=source.files, flags=source.flags, refused=refused[:500],
                                              digest=digest)
        elif row.refused != refused[:500]:
            row.refused = refused[:500]
            row.save(update_fields=["refused"])
        judges.append((source, row))
    output = [(s, r) for s, r in judges if s.kind in PackageJudge.OUTPUT_KINDS + PackageJudge.INTERACTOR_KINDS]
    checker_source, checker = output[0] if output else (None, None)
    not_judgeable = _not_judgeable(pkg, checker_source, checker.refused if checker else "")
    package_meta = {
        "format": pkg.source, "version": pkg.version, "short_name": pkg.short_name, "types": pkg.types,
        "validation": pkg.validation, "interactive": pkg.interactive, "scoring": pkg.scoring,
        "time_limit_fixed": pkg.time_limit_fixed, "time_limit_to_tle": pkg.time_limit_to_tle,
        "ac_to_time_limit": pkg.ac_to_time_limit,
        "statement_format": pkg.statement_format, "groups": pkg.groups, "metadata": pkg.metadata,
        "not_judgeable": not_judgeable, "refused": pkg.refused,
    }
    digest = _tests_digest(pkg, checker.digest if checker else "")
    active = problem.suites.filter(status=TestSuite.Status.ACTIVE, origin=TestSuite.Origin.OFFICIAL).first()
    unchanged = (not created and active is not None and (problem.extra or {}).get("package", {}).get("tests_digest")
                 == digest)
    problem.title = pkg.title[:500]
    problem.statement = pkg.statement
    problem.time_limit_ms = pkg.time_limit_ms
    problem.memory_limit_mb = pkg.memory_mb
    problem.comparison = Comparison.TOKENS
    problem.samples = samples
    problem.platform = "kattis" if str(pkg.metadata.get("source", "")).lower() == "kattis" else problem.platform
    problem.extra = {**(problem.extra or {}), "package": {**package_meta, "tests_digest": digest}}
    problem.save()
    if not unchanged:
        what = "Polygon package" if pkg.source == "polygon" else f"ICPC package ({pkg.version})"
        suite = suite_create(problem=problem, origin=TestSuite.Origin.OFFICIAL,
                             note=f"{pkg.short_name}: {what}, groups "
                                  f"{', '.join(sorted({t.group for t in pkg.tests}))}"[:500])
        suite.checker = checker
        suite.save(update_fields=["checker"])
        inputs = blobs_put(t.input for t in pkg.tests)
        answers = blobs_put(t.answer for t in pkg.tests)
        TestCase.objects.bulk_create([
            TestCase(suite=suite, ordinal=i, kind=TestCase.Kind.PUBLIC if t.sample else TestCase.Kind.IMPORTED,
                     generator=t.name[:200], group=t.group[:300], input_sha256=in_sha, input_size=in_size,
                     input_preview=preview(t.input, TestCase.PREVIEW_CHARS), output_sha256=out_sha,
                     output_size=out_size, output_preview=preview(t.answer, TestCase.PREVIEW_CHARS))
            for i, (t, (in_sha, in_size), (out_sha, out_size)) in enumerate(zip(pkg.tests, inputs, answers,
                                                                                 strict=True))
        ], batch_size=1000)
        suite.test_count = len(pkg.tests)
        suite.total_bytes = sum(len(t.input) + len(t.answer) for t in pkg.tests)
        counts: dict[str, int] = {}
        for t in pkg.tests:
            kind = TestCase.Kind.PUBLIC if t.sample else TestCase.Kind.IMPORTED
            counts[str(kind)] = counts.get(str(kind), 0) + 1
        suite.counts_by_kind = counts
        suite.save(update_fields=["test_count", "total_bytes", "counts_by_kind"])
        suite_activate(suite=suite)
    for sub in pkg.submissions:
        roles = [Solution.Role.CANDIDATE] + ([Solution.Role.ORACLE] if sub.gold == "AC" else [])
        for role in roles:
            Solution.objects.update_or_create(
                problem=problem, role=role, code_sha256=code_sha256(sub.code),
                defaults={"language": sub.language, "code": sub.code, "source": f"{pkg.source}_submission",
                          "reliability": 1 if role == Solution.Role.ORACLE else None,
                          "gold_verdict": sub.gold if role == Solution.Role.CANDIDATE else Solution.GoldVerdict.AC,
                          "name": sub.path[:200], "package_verdict": sub.folder[:40]},
            )
    return {
        "package": pkg.short_name, "problem": f"{pkg.source}:{pkg.short_name}",
        "status": "created" if created else ("unchanged" if unchanged else "updated"),
        "version": pkg.version, "types": pkg.types, "validation": pkg.validation,
        "time_limit_ms": pkg.time_limit_ms, "time_limit_fixed": pkg.time_limit_fixed, "memory_mb": pkg.memory_mb,
        "tests": len(pkg.tests), "groups": sorted({t.group for t in pkg.tests}),
        "judges": [{"kind": s.kind, "name": s.name, "language": s.language, "flags": s.flags,
                    **({"refused": r.refused} if r.refused else {})} for s, r in judges],
        "submissions": {folder: sum(1 for s in pkg.submissions if s.folder == folder)
                        for folder in sorted({s.folder for s in pkg.submissions})},
        "refused": pkg.refused,
        "judgeable": not not_judgeable,
        **({"not_judgeable": not_judgeable} if not_judgeable else {}),
    }


def packages_import(paths: list[str], *, fmt: str = "icpc", sandbox: Sandbox | None = None) -> dict[str, Any]:
    """Import every package of format `fmt` ("icpc" or "polygon") under `paths` (package folders,
    folders of packages, .zip files). Polygon's generated tests are made in the sandbox first."""
    if not paths:
        raise PackageImportAborted("nothing to import: give a package folder, a folder of packages or a .zip")
    read: list[Package] = []
    skipped: list[dict[str, str]] = []
    contexts = []
    try:
        for raw in paths:
            path = Path(raw)
            if not path.exists():
                raise PackageImportAborted(f"{raw}: no such file or directory")
            try:
                context = opened(path)
                folder = context.__enter__()
            except PackageError as exc:
                raise PackageImportAborted(str(exc)) from None
            contexts.append(context)
            found = package_dirs(folder) if fmt == "icpc" else polygon_dirs(folder)
            if not found:
                marker = "problem.yaml" if fmt == "icpc" else "problem.xml"
                raise PackageImportAborted(f"{raw}: no problem package here (a folder with {marker}, or "
                                           "folders of them)")
            for root in found:
                name = path.stem if root == folder and path.is_file() else None
                try:
                    if fmt == "polygon":
                        read.append(polygon_read(root, sandbox or get_sandbox(), name=name))
                    else:
                        read.append(package_read(root, name=name))
                except PackageError as exc:
                    skipped.append({"package": name or root.name, "reason": str(exc)})
        with transaction.atomic():
            reports = [package_write(pkg) for pkg in read]
    finally:
        for context in reversed(contexts):
            context.__exit__(None, None, None)
    return {
        "format": fmt,
        "inputs": list(paths),
        "packages": len(read) + len(skipped),
        "imported": len(reports),
        "created": sum(r["status"] == "created" for r in reports),
        "updated": sum(r["status"] == "updated" for r in reports),
        "unchanged": sum(r["status"] == "unchanged" for r in reports),
        "skipped": {"total": len(skipped), "packages": skipped},
        "problems": reports,
    }
