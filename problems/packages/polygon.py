"""Reading Polygon packages (problem.xml, files/, tests/, solutions/) into a Package.

Tests come from the package's own files where it has them (tests/01, tests/01.a); a
generated test whose file is absent is made as Polygon makes it, `gen args > $`: the
package's generator (a testlib program among its executables) runs in the sandbox with
those arguments. An answer file that is absent is the main solution's output on the test,
run in the sandbox. The checker, the validator and the interactor are the package's testlib
programs, with the testlib.h of files/ (or the configured one). Solutions keep their tag:
main and accepted are AC, wrong-answer WA, time-limit-exceeded TLE, memory-limit-exceeded
MLE, rejected and failed REJECTED; other tags are kept without a gold verdict.
"""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET  # noqa: N817 - the module's usual name
from pathlib import Path

from problems.packages.external import ExternalJudge, Kind, run_generator
from problems.packages.icpc import (
    JudgeSource,
    Package,
    PackageError,
    Submission,
    Test,
    _read_text,
    inside,
    submission_refusal,
)
from sandbox import Limits, Sandbox

TAGS = {"main": "AC", "accepted": "AC", "wrong-answer": "WA", "presentation-error": "WA",
        "time-limit-exceeded": "TLE", "memory-limit-exceeded": "MLE", "rejected": "REJECTED", "failed": "REJECTED"}
# Polygon's source types -> the sandbox's languages (c.gcc is C, compiled with gcc; what the sandbox
# does not run is refused per solution)
LANGUAGE_PREFIXES = (("cpp.", "cpp"), ("python.3", "python3"), ("pypy.3", "python3"), ("java", "java"),
                     ("python.2", "python2"), ("pypy.2", "python2"), ("c.", "c"))


def _language(source_type: str) -> str:
    for prefix, language in LANGUAGE_PREFIXES:
        if source_type.startswith(prefix):
            return language
    return source_type or "unknown"


def _file(root: Path, rel: str, pkg: Package) -> Path | None:
    path = root / rel
    if path.is_symlink() and not inside(root, path):
        pkg.refuse(rel, "a symlink leaving the package (not read)")
        return None
    return path if path.is_file() and inside(root, path) else None


def _cpp_files(root: Path, pkg: Package) -> dict[str, str]:
    """The C++ sources and headers of files/ by name (what a package's programs include)."""
    files: dict[str, str] = {}
    folder = root / "files"
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.suffix in (".h", ".hpp", ".cpp", ".cc", ".cxx") and _file(root, str(path.relative_to(root)), pkg):
                files[path.name] = _read_text(path)
    return files


def _program(root: Path, element: ET.Element | None, kind: str, name: str, pkg: Package,
             headers: dict[str, str]) -> JudgeSource | None:
    source = element.find("source") if element is not None else None
    if source is None:
        return None
    rel = source.get("path", "")
    path = _file(root, rel, pkg)
    if path is None:
        pkg.refuse(rel or name, f"the {name}'s source is missing")
        return None
    language = _language(source.get("type", ""))
    files = {**headers, path.name: _read_text(path)}
    judge = JudgeSource(kind=kind, name=rel, language=language, entry=path.name, files=files)
    if language != "cpp":
        judge.refused = f"a {name} in {language!r} is not supported here (testlib programs are C++)"
    return judge


def _run_main(sb: Sandbox, main: Submission | None, inputs: list[bytes], limits: Limits) -> list[bytes | None]:
    if main is None:
        return [None for _ in inputs]
    prog = sb.compile(main.language, main.code)
    if not prog.ok:
        return [None for _ in inputs]
    return [run.stdout if run.ok else None for run in sb.run(prog, inputs, limits)]


def polygon_read(root: Path, sb: Sandbox, *, name: str | None = None) -> Package:
    """One Polygon package folder (problem.xml at its root); PackageError when refused whole."""
    xml = root / "problem.xml"
    if not xml.is_file():
        raise PackageError("no problem.xml")
    try:
        tree = ET.fromstring(xml.read_bytes())
    except ET.ParseError as exc:
        raise PackageError(f"problem.xml is not valid XML: {exc}") from None
    short = name or tree.get("short-name") or root.name
    names = {n.get("language", ""): n.get("value", "") for n in tree.iterfind("names/name")}
    title = names.get("english") or next(iter(names.values()), "") or short
    testset = tree.find("judging/testset[@name='tests']")
    if testset is None:
        testset = tree.find("judging/testset")
    if testset is None:
        raise PackageError("problem.xml has no testset")
    time_ms = int(testset.findtext("time-limit", "2000") or 2000)
    memory_mb = max(1, int(testset.findtext("memory-limit", str(256 << 20)) or 256 << 20) >> 20)
    input_pattern = testset.findtext("input-path-pattern", "tests/%02d")
    answer_pattern = testset.findtext("answer-path-pattern", "tests/%02d.a")
    statement = ""
    for candidate in sorted(root.glob("statements/*/problem.tex")) + sorted(root.glob("statement-sections/*/legend.tex")):
        if inside(root, candidate):
            statement = (f"*The statement of {title} is LaTeX; shown as its source, never compiled.*\n\n"
                         f"```latex\n{_read_text(candidate).replace('```', '` ` `')}\n```\n")
            break
    interactive = tree.find("assets/interactor") is not None
    pkg = Package(root=root, short_name=short, title=title, version="polygon", statement=statement,
                  statement_format="latex" if statement else "", types=["pass-fail"] + (["interactive"] if
                                                                                      interactive else []),
                  validation="custom interactive" if interactive else "custom", time_limit_ms=time_ms,
                  time_limit_fixed=True, memory_mb=memory_mb, time_limit_to_tle=1.0, ac_to_time_limit=1.0,
                  source="polygon")
    headers = {k: v for k, v in _cpp_files(root, pkg).items() if k.endswith((".h", ".hpp"))}
    if "testlib.h" not in headers:
        pkg.refuse("files/testlib.h", "absent: testlib programs use the configured HARDTESTS_TESTLIB_H")
    # solutions
    for element in tree.iterfind("assets/solutions/solution"):
        source = element.find("source")
        if source is None:
            continue
        rel = source.get("path", "")
        tag = element.get("tag", "")
        path = _file(root, rel, pkg)
        if path is None:
            pkg.refuse(rel, "the solution's file is missing")
            continue
        language = _language(source.get("type", ""))
        why = submission_refusal(language)
        if why:
            pkg.refuse(rel, why)
            continue
        pkg.submissions.append(Submission(path=rel, folder=tag, language=language, code=_read_text(path),
                                          gold=TAGS.get(tag, "UNKNOWN")))
    main = next((s for s in pkg.submissions if s.folder == "main"), None)
    # judges
    checker = _program(root, tree.find("assets/checker"), "testlib_checker", "checker", pkg, headers)
    interactor = _program(root, tree.find("assets/interactor"), "testlib_interactor", "interactor", pkg, headers)
    for judge in (interactor or checker,):
        if judge is not None:
            pkg.judges.append(judge)
    for element in tree.iterfind("assets/validators/validator"):
        validator = _program(root, element, "testlib_validator", "validator", pkg, headers)
        if validator is not None:
            pkg.judges.append(validator)
    if not pkg.judges or pkg.judges[0].kind not in ("testlib_checker", "testlib_interactor"):
        raise PackageError("problem.xml names no checker")
    # tests
    generators: dict[str, ExternalJudge] = {}
    for element in tree.iterfind("files/executables/executable"):
        program = _program(root, element, "testlib_generator", "generator", pkg, headers)
        if program is not None and not program.refused:
            generators[Path(program.entry).stem] = ExternalJudge(
                kind=Kind.TESTLIB_GENERATOR, language="cpp", entry=program.entry,
                files=tuple(sorted(program.files.items())))
    specs = list(testset.iterfind("tests/test"))
    inputs: list[bytes | None] = []
    wanted: dict[str, list[tuple[int, list[str]]]] = {}
    for number, element in enumerate(specs, start=1):
        path = _file(root, input_pattern % number, pkg)
        if path is not None:
            inputs.append(path.read_bytes())
            continue
        inputs.append(None)
        command = element.get("cmd", "")
        if element.get("method") != "generated" or not command:
            pkg.refuse(input_pattern % number, "a manual test whose file is missing")
            continue
        argv = shlex.split(command)
        if argv[0] not in generators:
            pkg.refuse(input_pattern % number, f"its generator {argv[0]!r} is not among the package's executables")
            continue
        wanted.setdefault(argv[0], []).append((number - 1, argv[1:]))
    for gen_name, calls in wanted.items():
        made = run_generator(sb, generators[gen_name], [argv for _, argv in calls])
        for (index, argv), result in zip(calls, made, strict=True):
            if result.output is None:
                pkg.refuse(input_pattern % (index + 1), f"`{gen_name} {' '.join(argv)}` failed: {result.error}")
            else:
                inputs[index] = result.output
    answers: list[bytes | None] = []
    for number in range(1, len(specs) + 1):
        path = _file(root, answer_pattern % number, pkg)
        answers.append(path.read_bytes() if path is not None else None)
    missing = [i for i, (inp, ans) in enumerate(zip(inputs, answers, strict=True)) if inp is not None and ans is None]
    if missing:
        limits = Limits(time_s=max(1.0, time_ms / 1000 * 2), memory_mb=memory_mb, output_kb=256 * 1024)
        made_answers = _run_main(sb, main, [inputs[i] or b"" for i in missing], limits)
        for index, answer in zip(missing, made_answers, strict=True):
            if answer is None:
                pkg.refuse(answer_pattern % (index + 1), "no answer file, and the main solution gave none")
            answers[index] = answer
    for number, (element, inp, ans) in enumerate(zip(specs, inputs, answers, strict=True), start=1):
        if inp is None or ans is None:
            continue
        group = element.get("group") or ("sample" if element.get("sample") == "true" else "tests")
        pkg.tests.append(Test(group=group, name=f"{number:02d}", input=inp, answer=ans,
                              sample=element.get("sample") == "true"))
    if not pkg.tests:
        raise PackageError("no test could be read or made")
    pkg.metadata = {"generators": sorted(generators), "tests_generated": sum(len(c) for c in wanted.values())}
    return pkg


def polygon_dirs(path: Path) -> list[Path]:
    """A Polygon package folder, or the packages in a folder (one level down)."""
    if (path / "problem.xml").is_file():
        return [path]
    if path.is_dir():
        return [child for child in sorted(path.iterdir()) if child.is_dir() and (child / "problem.xml").is_file()]
    return []
