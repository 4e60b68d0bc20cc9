"""ICPC problem packages (the Kattis / DOMjudge problem package format), one folder per problem.

``problem.yaml``; ``data/sample`` (the statement's examples) and ``data/secret`` (the best
active suite) as ``NNN.in`` / ``NNN.ans``; ``input_validators/`` with the kit's validator and
``output_validator/`` with its judging function, each wrapped to the package's contract
(exit 42 accepts, 43 rejects); ``submissions/<verdict>/``: oracles and accepted candidates
in ``accepted/``, candidates with a failing gold verdict in ``wrong_answer/``,
``time_limit_exceeded/`` or ``run_time_error/`` (memory-limit failures too), so a judging
system checks that each gets its verdict; a candidate only known as "rejected" goes to
``rejected/``.

A Python submission whose gold verdict is a time-limit failure is left out (counted as
``python_tle_left_out``): that verdict was earned under CPython, the interpreter this
project judges with, and Kattis and problemtools run ``.py`` files with PyPy, which often
runs the same program in time; a package must not claim a verdict its judge will not give.
The export folder gets a README.md card: what the packages are, how many, and how to check
them with ``verifyproblem``. problemtools compiles Java with ``javac -source 21``, which a JDK
before 21 refuses; with such a JDK found at export, the folder also gets
``problemtools-config/problemtools/languages.yaml`` (``-source`` of that JDK) and the card's
command points problemtools at it (``XDG_CONFIG_HOME``).

Folder names are problem short names as Kattis problemtools requires them (``[a-z0-9]+``),
made from the pid; ``problem.yaml`` keeps the mapping back to ``source:pid`` (a comment
and a ``keywords`` entry, since the format forbids keys of its own). Secret data leaves out
the tests that are already samples.

A problem imported from a package (problems/packages/) is exported with the package's own
judges as themselves, not wrapped: its Kattis output validator (C++ or Python, with its
headers) in ``output_validator/<its name>/``, its runnable Kattis input validators in
``input_validators/<name>/``, the default validator's or the custom one's flags as
``output_validator_flags`` (and ``input_validator_flags``) in ``data/testdata.yaml`` (the
2023-07-draft place of the legacy ``validator_flags``), and its tests in
``data/secret/<group>/`` as ``TestCase.group`` keeps them. testlib checkers and validators
speak another contract (exit 0/1/2) and are not exported; such a problem falls back to the
kit's wrappers, or to none.

The wrappers load the kit's code as a module of its own name, so an ``if __name__ ==
"__main__"`` block in it never runs, then call the project's contract function. They run
under the judging system's own sandbox, like any package validator.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

from problems.exporters.bundles import Bundle, bundles, test_bodies
from problems.models import Language, PackageJudge, Solution, TestCase

SECRET_ORIGINS = ("generated", "official", "imported")
# the Java release problemtools' own languages.yaml compiles for (javac -source 21)
PROBLEMTOOLS_JAVA_RELEASE = 21
PROBLEMTOOLS_CONFIG = "problemtools-config"
JAVA_COMPILE = "javac -source {release} -encoding UTF-8 -sourcepath {{path}} -d {{path}} {{files}}"
_EXTENSIONS: dict[str, str] = {Language.PYTHON3: "py", Language.CPP: "cpp", Language.JAVA: "java", Language.C: "c"}
# Gold verdict -> the submissions folder whose verdict a judging system expects.
VERDICT_FOLDERS: dict[str, str] = {
    Solution.GoldVerdict.WA: "wrong_answer",
    Solution.GoldVerdict.TLE: "time_limit_exceeded",
    Solution.GoldVerdict.RE: "run_time_error",
    Solution.GoldVerdict.MLE: "run_time_error",
    Solution.GoldVerdict.REJECTED: "rejected",
}
KEYWORD_PREFIX = "hardtests_web:"
LICENSE = "unknown"

INPUT_VALIDATOR = '''#!/usr/bin/env python3
"""Input validator (ICPC package contract): the input on stdin; exit 42 if valid, 43 if not."""
import sys

KIT_VALIDATOR = {code!r}


def main():
    module = {{"__name__": "kit_validator"}}
    exec(compile(KIT_VALIDATOR, "kit_validator.py", "exec"), module)
    # Bytes, decoded as the project's own checks decode them: no newline translation, and an
    # input that is not UTF-8 reaches validate_input (which rejects it) instead of crashing.
    input_str = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    try:
        valid = module["validate_input"](input_str) is True
    except Exception as exc:  # a validator that crashes does not accept
        print("validate_input raised", type(exc).__name__, exc, file=sys.stderr)
        valid = False
    sys.exit(42 if valid else 43)


main()
'''

OUTPUT_VALIDATOR = '''#!/usr/bin/env python3
"""Output validator (ICPC package contract).

Called as `validate input_file answer_file feedback_dir [args] < team_output`; exits 42 to
accept and 43 to reject, with a message in feedback_dir/judgemessage.txt.
"""
import os
import sys

KIT_JUDGE = {code!r}


def read_text(stream):
    # As the project's judging decodes: no newline translation, and a team output that is not
    # UTF-8 is judged (and rejected), not a crash the judging system reports as a judge error.
    return stream.read().decode("utf-8", errors="replace")


def main():
    input_file, answer_file, feedback_dir = sys.argv[1:4]
    with open(input_file, "rb") as f:
        input_str = read_text(f)
    with open(answer_file, "rb") as f:
        reference = read_text(f)
    candidate = read_text(sys.stdin.buffer)
    module = {{"__name__": "kit_judge"}}
    exec(compile(KIT_JUDGE, "kit_judge.py", "exec"), module)
    try:
        accepted = module["output_judging_function"](input_str, candidate, reference) is True
        message = "accepted" if accepted else "output_judging_function returned False"
    except Exception as exc:
        accepted, message = False, "output_judging_function raised %s: %s" % (type(exc).__name__, exc)
    with open(os.path.join(feedback_dir, "judgemessage.txt"), "w") as f:
        f.write(message + "\\n")
    sys.exit(42 if accepted else 43)


main()
'''


def shortname(text: str) -> str:
    """A problem short name problemtools accepts: [a-z0-9]+."""
    return re.sub(r"[^a-z0-9]+", "", text.lower())[:40] or "problem"


def _yaml(value: str) -> str:
    # A JSON string is a valid YAML scalar, and escapes everything that needs it.
    return json.dumps(value, ensure_ascii=False)


def _problem_yaml(bundle: Bundle) -> str:
    """problem.yaml of the 2023-07-draft format: a custom output validator is declared by the
    presence of output_validator/, not by a key; the uuid is stable across exports."""
    p = bundle.problem
    ref = f"{p.source}:{p.pid}"
    lines = [
        f"# hardtests_web problem {_yaml(ref)} (source {_yaml(p.source)}, pid {_yaml(p.pid)})",
        "problem_format_version: 2023-07-draft",
        "type: pass-fail",
        f"name: {_yaml(p.title)}",
        f"uuid: {uuid.uuid5(uuid.NAMESPACE_URL, f'hardtests:{p.source}/{p.pid}')}",
        "source:",
        f"  name: {_yaml(p.platform or p.source)}",
    ]
    if p.url:
        lines.append(f"  url: {_yaml(p.url)}")
    lines += [
        f"license: {LICENSE}",
        "keywords:",
        f"  - {_yaml(KEYWORD_PREFIX + ref)}",
        *[f"  - {_yaml(tag)}" for tag in bundle.tags],
        "limits:",
        f"  memory: {p.memory_limit_mb}",
    ]
    package = (p.extra or {}).get("package") if isinstance(p.extra, dict) else None
    if not (isinstance(package, dict) and package.get("time_limit_fixed") is False):
        lines.insert(len(lines) - 1, f"  time_limit: {p.time_limit_ms / 1000:g}")
    # else: the package this problem came from fixed no time limit, so neither does its export:
    # verifyproblem computes it from the accepted submissions, as it did for the source (a fixed
    # copy of the limit computed at import fails verification once the machine's load differs)
    return "\n".join(lines) + "\n"


def _write_case(folder: Path, name: str, inp: bytes, ans: bytes) -> None:
    (folder / f"{name}.in").write_bytes(inp)
    (folder / f"{name}.ans").write_bytes(ans)


def _submission(folder: Path, sol: Solution, number: int) -> bool:
    ext = _EXTENSIONS.get(sol.language)
    if ext is None:
        return False
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{sol.role}-{number:03d}"
    if ext == "java":
        # Java wants the file named after its public class; a folder keeps the names apart.
        found = re.search(r"public\s+(?:final\s+)?class\s+(\w+)", sol.code)
        target = folder / stem
        target.mkdir(exist_ok=True)
        (target / f"{found[1] if found else 'Main'}.java").write_text(sol.code, encoding="utf-8")
    else:
        (folder / f"{stem}.{ext}").write_text(sol.code, encoding="utf-8")
    return True


_SAFE_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _safe_relative(path: str) -> Path | None:
    """A package file's path, kept only when every part is a plain name (no '..', no absolute path)."""
    parts = path.replace("\\", "/").split("/")
    return Path(*parts) if parts and all(_SAFE_PART.fullmatch(part) for part in parts) else None


def _write_judge(folder: Path, judge: PackageJudge) -> bool:
    """The package's own program, its files as they came (sources, validate.h, testlib.h)."""
    files = {rel: text for name, text in (judge.files or {}).items() if (rel := _safe_relative(name)) is not None}
    if not files or len(files) != len(judge.files or {}):
        return False
    for rel, text in files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return True


def _program_folder(judge: PackageJudge) -> str:
    """The folder one of the package's programs goes back into: its own name where that is plain."""
    return re.sub(r"[^A-Za-z0-9_-]+", "", Path(judge.name).stem)[:60] or "validator"


def _package_judges(bundle: Bundle, checker_id: int | None) -> tuple[PackageJudge | None, list[PackageJudge]]:
    """The suite's own output judge (a Kattis kind: the format's contract, so exported as itself) and the
    package's Kattis input validators that can run; testlib programs speak another contract."""
    judges = list(bundle.problem.package_judges.filter(refused=""))
    checker = next((j for j in judges if j.pk == checker_id and j.kind in (
        PackageJudge.Kind.KATTIS_OUTPUT_VALIDATOR, PackageJudge.Kind.KATTIS_DEFAULT)), None)
    inputs = sorted((j for j in judges if j.kind == PackageJudge.Kind.KATTIS_INPUT_VALIDATOR
                     and j.language in ("cpp", "python3")), key=lambda j: j.name)
    return checker, inputs


def _group_folder(test: TestCase) -> str:
    """A package's group under data/secret ("secret/group1"), or "" for the plain secret folder."""
    parts = test.group.split("/")
    if len(parts) >= 2 and parts[0] == "secret" and _safe_relative("/".join(parts[1:])) is not None:
        return "/".join(parts[1:])
    return ""


def package_write(bundle: Bundle, root: Path) -> dict[str, int]:
    counts = {"sample": 0, "secret": 0, "secret_samples_skipped": 0, "accepted": 0, "rejected": 0,
              "unsupported_submissions": 0}
    (root / "data" / "sample").mkdir(parents=True, exist_ok=True)
    (root / "data" / "secret").mkdir(parents=True, exist_ok=True)
    (root / "problem.yaml").write_text(_problem_yaml(bundle), encoding="utf-8")
    (root / "statement").mkdir(exist_ok=True)
    (root / "statement" / "problem.en.md").write_text(bundle.problem.statement, encoding="utf-8")
    public = bundle.tests.get("public")
    samples = (list(test_bodies(public)) if public
               else [(s["input"].encode(), s["output"].encode()) for s in bundle.problem.samples])
    for n, (inp, ans) in enumerate(samples, start=1):
        _write_case(root / "data" / "sample", f"{n:03d}", inp, ans)
        counts["sample"] += 1
    chosen = bundle.suite_for(SECRET_ORIGINS)
    # A sample is shown to contestants already; repeating it in secret data only makes it count twice.
    shown = {inp for inp, _ in samples}
    chosen_tests = chosen[1] if chosen else []
    for test, (inp, ans) in zip(chosen_tests, test_bodies(chosen_tests), strict=True):
        if inp in shown:
            counts["secret_samples_skipped"] += 1
            continue
        counts["secret"] += 1
        # A package's groups go back where the package had them (data/secret/<group>/).
        group = _group_folder(test)
        folder = root / "data" / "secret" / group if group else root / "data" / "secret"
        folder.mkdir(parents=True, exist_ok=True)
        _write_case(folder, f"{counts['secret']:03d}", inp, ans)
    suite = bundle.suites.get(chosen[0]) if chosen else None
    checker, input_judges = _package_judges(bundle, suite.checker_id if suite else None)
    if suite is not None and suite.checker_id is not None and checker is None:
        # a testlib checker or an interactor: another contract, not written; the card's counts say so
        counts["package_checker_not_exported"] = counts.get("package_checker_not_exported", 0) + 1
    kit = bundle.kit
    testdata: list[str] = []
    if input_judges:
        for judge in input_judges:
            if _write_judge(root / "input_validators" / _program_folder(judge), judge):
                counts["package_input_validators"] = counts.get("package_input_validators", 0) + 1
        flags = sorted({" ".join(j.flags) for j in input_judges if j.flags})
        if len(flags) == 1:
            testdata.append(f"input_validator_flags: {_yaml(flags[0])}")
    elif kit and kit.validator:
        folder = root / "input_validators"
        folder.mkdir(exist_ok=True)
        (folder / "validate.py").write_text(INPUT_VALIDATOR.format(code=kit.validator.code), encoding="utf-8")
    if checker is not None:
        # The package's own output validator as itself, in a folder of its own under output_validator/
        # (problemtools takes each entry there as one program: a validate.h beside validate.cc must
        # not be one); the flags, the default validator's too, live in data/testdata.yaml in 2023-07.
        if (checker.kind == PackageJudge.Kind.KATTIS_OUTPUT_VALIDATOR
                and _write_judge(root / "output_validator" / _program_folder(checker), checker)):
            counts["package_output_validators"] = counts.get("package_output_validators", 0) + 1
        if checker.flags:
            testdata.append(f"output_validator_flags: {_yaml(' '.join(checker.flags))}")
    elif kit and kit.output_judge and kit.needs_output_judge:
        folder = root / "output_validator"
        folder.mkdir(exist_ok=True)
        (folder / "validate.py").write_text(OUTPUT_VALIDATOR.format(code=kit.output_judge.code), encoding="utf-8")
    if testdata:
        (root / "data" / "testdata.yaml").write_text("\n".join(testdata) + "\n", encoding="utf-8")
    numbers: dict[str, int] = {}
    written: set[tuple[str, str]] = set()
    for sol in bundle.solutions:
        if sol.role == Solution.Role.ORACLE or sol.gold_verdict == Solution.GoldVerdict.AC:
            verdict_folder = "accepted"
        elif sol.gold_verdict in VERDICT_FOLDERS:
            verdict_folder = VERDICT_FOLDERS[sol.gold_verdict]
        else:
            continue
        if verdict_folder == "time_limit_exceeded" and sol.language == Language.PYTHON3:
            counts["python_tle_left_out"] = counts.get("python_tle_left_out", 0) + 1
            continue
        # An imported package's accepted submission is both a candidate and an oracle: one file.
        if (verdict_folder, sol.code_sha256) in written:
            counts["duplicate_submissions_skipped"] = counts.get("duplicate_submissions_skipped", 0) + 1
            continue
        written.add((verdict_folder, sol.code_sha256))
        numbers[verdict_folder] = numbers.get(verdict_folder, 0) + 1
        if _submission(root / "submissions" / verdict_folder, sol, numbers[verdict_folder]):
            counts["accepted" if verdict_folder == "accepted" else "rejected"] += 1
            counts[f"submissions_{verdict_folder}"] = counts.get(f"submissions_{verdict_folder}", 0) + 1
        else:
            counts["unsupported_submissions"] += 1
    return counts


def javac_release() -> int | None:
    """The feature release of the JDK's javac on this machine (17 for "javac 17.0.15"), or None."""
    javac = shutil.which("javac")
    if javac is None:
        return None
    try:
        done = subprocess.run([javac, "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"javac (\d+)(?:\.(\d+))?", done.stdout + done.stderr)
    if found is None:
        return None
    major = int(found[1])
    return int(found[2] or 0) if major == 1 else major  # "javac 1.8.0" is release 8


def problemtools_config_write(out: Path, release: int | None) -> str | None:
    """For a JDK older than problemtools' -source 21: a languages.yaml that compiles for it, in
    a config folder of the export; the folder's name (for XDG_CONFIG_HOME), or None."""
    if release is None or release >= PROBLEMTOOLS_JAVA_RELEASE:
        return None
    folder = out / PROBLEMTOOLS_CONFIG / "problemtools"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "languages.yaml").write_text(
        f"# javac {release} refuses problemtools' default -source {PROBLEMTOOLS_JAVA_RELEASE}\n"
        f"java:\n    compile: '{JAVA_COMPILE.format(release=release)}'\n", encoding="utf-8")
    return PROBLEMTOOLS_CONFIG


def icpc_export(*, problems: Any, out: Path, limit: int | None = None) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    totals: dict[str, int] = {"problems": 0}
    used: set[str] = set()
    names: list[tuple[str, str]] = []
    for bundle in bundles(problems, limit=limit):
        name = shortname(bundle.problem.pid)
        if name in used:  # the same pid in two sources
            name = shortname(f"{bundle.problem.source}{bundle.problem.pid}")
        base, n = name, 2
        while name in used:
            name, n = f"{base}{n}", n + 1
        used.add(name)
        for key, value in package_write(bundle, out / name).items():
            totals[key] = totals.get(key, 0) + value
        totals["problems"] += 1
        names.append((name, f"{bundle.problem.source}:{bundle.problem.pid}"))
    release = javac_release()
    config = problemtools_config_write(out, release)
    (out / "README.md").write_text(_folder_card(names, totals, release=release, config=config), encoding="utf-8")
    return {**totals, "files": [str(out)], "card": str(out / "README.md")}


def _check_recipe(release: int | None, config: str | None) -> list[str]:
    command = "verifyproblem FOLDER -p config data validators submissions"
    if config is not None:
        return [
            "Check a package with Kattis problemtools, from this folder:", "",
            f"```sh\nXDG_CONFIG_HOME=\"$PWD/{config}\" {command}\n```", "",
            f"problemtools compiles Java with `javac -source {PROBLEMTOOLS_JAVA_RELEASE}`, which the JDK found at "
            f"export (javac {release}) refuses: every Java submission would be a compile error. "
            f"`{config}/problemtools/languages.yaml` compiles for release {release} instead (problemtools reads "
            "`$XDG_CONFIG_HOME/problemtools/languages.yaml` over its own). With JDK "
            f"{PROBLEMTOOLS_JAVA_RELEASE} or later, drop `XDG_CONFIG_HOME`.",
        ]
    found = f"the JDK found at export is javac {release}" if release is not None else "no javac was found at export"
    return [
        "Check a package with Kattis problemtools:", "", f"```sh\n{command}\n```", "",
        f"problemtools compiles Java with `javac -source {PROBLEMTOOLS_JAVA_RELEASE}` ({found}). On an older JDK, put "
        f"`java: {{compile: '{JAVA_COMPILE.format(release='N')}'}}` (N: its release) in "
        "`$XDG_CONFIG_HOME/problemtools/languages.yaml` (default `~/.config`), or every Java submission is a "
        "compile error.",
    ]


def _folder_card(names: list[tuple[str, str]], totals: dict[str, int], *, release: int | None = None,
                 config: str | None = None) -> str:
    lines = [
        "# hardtests_web ICPC problem packages", "",
        "One folder per problem in the Kattis / DOMjudge problem package format (`problem.yaml` of the "
        "2023-07-draft format): `data/sample` and `data/secret` (`NNN.in` / `NNN.ans`), `input_validators/`, "
        "`output_validator/` where the problem needs one, `statement/problem.en.md`, and `submissions/<verdict>/` "
        "with the oracles (`accepted/`) and candidates with known verdicts.", "",
        *_check_recipe(release, config), "",
        "problemtools runs `.py` with PyPy, as Kattis does; Python submissions that only time out under CPython "
        "are left out. Made by `manage.py export_dataset icpc` of hardtests_web.", "",
        "## Counts", "", "| | |", "|---|---|",
        *[f"| {key} | {value} |" for key, value in sorted(totals.items())], "",
        "## Problems", "", "| folder | problem (source:pid) |", "|---|---|",
        *[f"| `{name}` | `{ref}` |" for name, ref in names], "",
        "## Licence", "",
        "The problems come from public datasets and judges whose own terms apply; check each source before "
        "redistributing.", "",
    ]
    return "\n".join(lines)
