"""Reading ICPC/Kattis problem packages (legacy, 2023-07 and 2025-09) into plain data.

Nothing here runs code of the package: sources are read as text, to be run later in the
sandbox. What the project cannot judge faithfully is refused with a reason: the whole
package (multi-pass, no tests), or one part (a submission in a language the sandbox does
not run, a test whose file is a symlink leaving the package, BAPCtools' generators), each
named in `Package.refused`, which the import report prints.
"""

from __future__ import annotations

import re
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from problems.importers.languages import detect_language
from problems.packages.default_validator import FlagError, parse_flags
from problems.packages.external import CPP_SUFFIXES, pick_entry
from sandbox.languages import compiler_missing

# folder -> (gold verdict, what verifyproblem requires of it); a folder not named here keeps
# its name as the package verdict and has no gold verdict
FOLDER_VERDICTS = {
    "accepted": "AC",
    "wrong_answer": "WA",
    "time_limit_exceeded": "TLE",
    "run_time_error": "RE",
    "memory_limit_exceeded": "MLE",
    "rejected": "REJECTED",
}
# verifyproblem's default when the package fixes no time limit: max(1, ceil(slowest AC x 2)) s
DEFAULT_TIME_LIMIT_S = 1.0
# problemtools' system default (its config/problem.yaml)
DEFAULT_MEMORY_MB = 1024
MAX_TEXT = 8 * 1024 * 1024
ZIP_MAX_BYTES = 2 * 1024 * 1024 * 1024
STATEMENT_DIRS = ("statement", "problem_statement")
OUTPUT_VALIDATOR_DIRS = ("output_validator", "output_validators")
INPUT_VALIDATOR_DIRS = ("input_validators", "input_validator")


class PackageError(ValueError):
    """A package refused whole; the message is the reason."""


@dataclass
class JudgeSource:
    kind: str  # a PackageJudge.Kind value
    name: str
    language: str
    entry: str
    files: dict[str, str]
    flags: list[str] = field(default_factory=list)
    refused: str = ""


@dataclass
class Test:
    group: str  # "sample", "secret", "secret/group1"
    name: str
    input: bytes
    answer: bytes
    sample: bool


@dataclass
class Submission:
    path: str  # relative to submissions/
    folder: str
    language: str
    code: str
    gold: str  # a Solution.GoldVerdict value


@dataclass
class Package:
    root: Path
    short_name: str
    title: str
    version: str  # "legacy", "2023-07", "2025-09"
    statement: str
    statement_format: str
    types: list[str]
    validation: str  # "default", "custom", "custom interactive"
    time_limit_ms: int
    time_limit_fixed: bool
    memory_mb: int
    time_limit_to_tle: float
    ac_to_time_limit: float
    tests: list[Test] = field(default_factory=list)
    judges: list[JudgeSource] = field(default_factory=list)
    submissions: list[Submission] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    # the problems' source: "icpc", or "polygon" (problems/packages/polygon.py reads into the same shape)
    source: str = "icpc"

    @property
    def interactive(self) -> bool:
        return "interactive" in self.types

    @property
    def scoring(self) -> bool:
        return "scoring" in self.types

    def refuse(self, part: str, reason: str) -> None:
        self.refused.append({"part": part, "reason": reason})


def _yaml(path: Path) -> dict[str, Any]:
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML is a dependency
        raise PackageError("reading problem.yaml needs PyYAML (pip install PyYAML)") from None
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
    except yaml.YAMLError as exc:
        raise PackageError(f"{path.name} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise PackageError(f"{path.name} is not a mapping")
    return data


def inside(root: Path, path: Path) -> bool:
    """Whether `path`, symlinks resolved, stays inside the package."""
    try:
        path.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def _walk(root: Path, folder: Path, pkg: Package | None, part: str) -> Iterator[Path]:
    """Files under `folder`, sorted, symlinks that leave the package refused (never read)."""
    if not folder.is_dir():
        return
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() and not inside(root, path):
            if pkg is not None:
                pkg.refuse(f"{part}/{path.relative_to(folder)}", "a symlink leaving the package (not read)")
            continue
        if path.is_file() and inside(root, path):
            yield path


def _read_text(path: Path) -> str:
    if path.stat().st_size > MAX_TEXT:
        raise PackageError(f"{path.name} is larger than {MAX_TEXT // (1024 * 1024)} MB")
    return path.read_text(encoding="utf-8", errors="surrogateescape")


def _version(meta: dict[str, Any]) -> str:
    declared = str(meta.get("problem_format_version", "") or "").strip().lower()
    if not declared or declared == "legacy" or declared.startswith("legacy"):
        return "legacy"
    if declared.startswith("2023-07"):
        return "2023-07"
    if declared.startswith("2025-09"):
        return "2025-09"
    raise PackageError(f"problem_format_version {declared!r} is not one this importer reads "
                       "(legacy, 2023-07, 2025-09)")


def _types(meta: dict[str, Any], version: str) -> tuple[list[str], str]:
    if version == "legacy":
        kind = str(meta.get("type", "pass-fail") or "pass-fail")
        validation = " ".join(str(meta.get("validation", "default") or "default").split())
        types = [kind]
        words = validation.split()
        if words[:1] == ["custom"]:
            if "interactive" in words:
                types.append("interactive")
            if "multipass" in words or "multi-pass" in words:
                types.append("multi-pass")
            if "score" in words and "scoring" not in types:
                types.append("scoring")
        return types, validation
    raw = meta.get("type", "pass-fail") or "pass-fail"
    types = [str(t) for t in raw] if isinstance(raw, list) else str(raw).split()
    validation = "default"
    if "interactive" in types:
        validation = "custom interactive"
    return types, validation


def _name(meta: dict[str, Any], fallback: str) -> str:
    name = meta.get("name")
    if isinstance(name, dict):
        name = name.get("en") or next(iter(name.values()), None)
    return str(name).strip() if name else fallback


def _statement(root: Path, pkg_name: str) -> tuple[str, str]:
    """The statement as Markdown (English first), or LaTeX shown as source (never run)."""
    for folder in STATEMENT_DIRS:
        base = root / folder
        if not base.is_dir() or not inside(root, base):
            continue
        for pattern, fmt in (("problem.en.md", "md"), ("problem.md", "md"), ("problem.*.md", "md"),
                             ("problem.en.tex", "tex"), ("problem.tex", "tex"), ("problem.*.tex", "tex")):
            for path in sorted(base.glob(pattern)):
                if not path.is_file() or not inside(root, path):
                    continue
                text = _read_text(path)
                if fmt == "md":
                    return text, "markdown"
                return (f"*The statement of {pkg_name} is LaTeX; shown as its source, never compiled.*\n\n"
                        f"```latex\n{text.replace('```', '` ` `')}\n```\n"), "latex"
    return "", ""


def _limits(root: Path, meta: dict[str, Any]) -> tuple[int, bool, int]:
    limits = meta.get("limits") or {}
    if not isinstance(limits, dict):
        limits = {}
    fixed: float | None = None
    value = limits.get("time_limit")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        fixed = float(value)
    for name in (".timelimit", "data/.timelimit"):
        path = root / name
        if fixed is None and path.is_file() and inside(root, path):
            try:
                fixed = float(path.read_text().split()[0])
            except (ValueError, IndexError):
                pass
    ini = root / "domjudge-problem.ini"
    if fixed is None and ini.is_file() and inside(root, ini):
        match = re.search(r"^\s*timelimit\s*=\s*['\"]?([0-9.]+)", ini.read_text(errors="replace"), re.MULTILINE)
        if match:
            fixed = float(match.group(1))
    memory = limits.get("memory")
    memory_mb = int(memory) if isinstance(memory, int | float) and not isinstance(memory, bool) and memory > 0 \
        else DEFAULT_MEMORY_MB
    seconds = fixed if fixed is not None else DEFAULT_TIME_LIMIT_S
    return round(seconds * 1000), fixed is not None, memory_mb


def _multipliers(meta: dict[str, Any], version: str) -> tuple[float, float]:
    """(ac_to_time_limit, time_limit_to_tle) with problemtools' defaults for the version."""
    limits = meta.get("limits") or {}
    limits = limits if isinstance(limits, dict) else {}
    if version == "legacy":
        ac, tle = limits.get("time_multiplier", 5.0), limits.get("time_safety_margin", 2.0)
    else:
        multipliers = limits.get("time_multipliers") or {}
        multipliers = multipliers if isinstance(multipliers, dict) else {}
        ac, tle = multipliers.get("ac_to_time_limit", 2.0), multipliers.get("time_limit_to_tle", 1.5)
    try:
        return float(ac), float(tle)
    except (TypeError, ValueError):
        raise PackageError("limits: the time multipliers are not numbers") from None


def _group_config(root: Path, folder: Path) -> dict[str, Any]:
    for name in ("testdata.yaml", "test_group.yaml"):
        path = folder / name
        if path.is_file() and inside(root, path):
            return _yaml(path)
    return {}


def _flags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return str(value).split()


def _tests(root: Path, pkg: Package) -> None:
    data = root / "data"
    if not data.is_dir():
        return
    inherited: dict[str, dict[str, Any]] = {}
    for folder in [data, *sorted(p for p in data.rglob("*") if p.is_dir())]:
        if folder.is_symlink() and not inside(root, folder):
            pkg.refuse(str(folder.relative_to(root)), "a symlink leaving the package (not read)")
            continue
        rel = "" if folder == data else str(folder.relative_to(data))
        parent = str(Path(rel).parent) if rel and "/" in rel else ""
        config = {**inherited.get(parent, {}), **_group_config(root, folder)} if rel else _group_config(root, folder)
        inherited[rel] = config
        if rel:
            pkg.groups[rel] = config
    for path in sorted(data.rglob("*.in")):
        rel_dir = str(path.parent.relative_to(data))
        part = str(path.relative_to(root))
        if path.is_symlink() and not inside(root, path):
            pkg.refuse(part, "a symlink leaving the package (not read)")
            continue
        if not path.is_file():
            continue
        answer = path.with_suffix(".ans")
        if answer.is_symlink() and not inside(root, answer):
            pkg.refuse(str(answer.relative_to(root)), "a symlink leaving the package (not read)")
            continue
        if not answer.is_file():
            if not pkg.interactive:
                pkg.refuse(part, "no .ans beside the .in: not a test")
                continue
        group = "" if rel_dir == "." else rel_dir
        pkg.tests.append(Test(group=group or "data", name=path.stem, input=path.read_bytes(),
                              answer=answer.read_bytes() if answer.is_file() else b"",
                              sample=group.split("/")[0] == "sample"))
    # problemtools orders a group's tests and subgroups by name; data/sample comes before data/secret
    pkg.tests.sort(key=lambda t: (0 if t.sample else 1, t.group, t.name))


def _output_flags(pkg: Package, meta: dict[str, Any], root_config: dict[str, Any]) -> list[str]:
    flags = _flags(meta.get("validator_flags"))
    flags += _flags(root_config.get("output_validator_flags", root_config.get("output_validator_args")))
    per_group = {name: _flags(config.get("output_validator_flags", config.get("output_validator_args")))
                 for name, config in pkg.groups.items()
                 if "output_validator_flags" in config or "output_validator_args" in config}
    root_flags = _flags(root_config.get("output_validator_flags", root_config.get("output_validator_args")))
    differing = {name: f for name, f in per_group.items() if f != root_flags}
    if differing:
        raise PackageError("output validator flags differ between test groups "
                           f"({', '.join(sorted(differing))}): one suite is judged with one set of flags")
    return flags


def _judge_folder(root: Path, folder: Path, kind: str, name: str, pkg: Package, flags: list[str]) -> JudgeSource:
    files = {str(p.relative_to(folder)): _read_text(p) for p in _walk(root, folder, pkg, name)}
    entry = pick_entry(files)
    language = _language_of_file(entry, files.get(entry, ""))
    source = JudgeSource(kind=kind, name=name, language=language, entry=entry, files=files, flags=flags)
    if not files:
        source.refused = "no source files"
    elif language not in ("cpp", "python3"):
        source.refused = f"a {kind.replace('_', ' ')} in {language!r} is not supported (C++ and Python 3 are)"
    return source


def _single_or_folders(base: Path) -> list[Path]:
    """A validator directory holds one program (its files directly) or one folder/file per program."""
    children = sorted(base.iterdir())
    direct_sources = [c for c in children if c.is_file() and _language_of_file(c.name, "") in ("cpp", "python3", "c")]
    if direct_sources and not any(c.is_dir() for c in children):
        return [base] if base.name in ("output_validator",) else children
    return children


def _validators(root: Path, pkg: Package, meta: dict[str, Any], root_config: dict[str, Any]) -> None:
    try:
        out_flags = _output_flags(pkg, meta, root_config)
    except PackageError:
        raise
    folder = next((root / d for d in OUTPUT_VALIDATOR_DIRS if (root / d).is_dir()), None)
    custom = pkg.validation.split()[:1] == ["custom"] or (pkg.version != "legacy" and folder is not None)
    if custom:
        if folder is None or not inside(root, folder):
            raise PackageError(f"validation is {pkg.validation!r} and the package has no output validator")
        programs = _single_or_folders(folder)
        target = programs[0] if programs else folder
        kind = "kattis_interactor" if pkg.interactive else "kattis_output_validator"
        name = str(target.relative_to(root))
        if target.is_dir():
            pkg.judges.append(_judge_folder(root, target, kind, name, pkg, out_flags))
        else:
            pkg.judges.append(_judge_file(root, target, kind, name, out_flags))
        if pkg.validation == "default" and pkg.version == "legacy":
            pkg.validation = "custom"
        if len(programs) > 1:
            pkg.refuse(str(folder.relative_to(root)), f"{len(programs)} output validators: only {name} is used")
    else:
        try:
            parse_flags(out_flags)
        except FlagError as exc:
            raise PackageError(f"validator_flags for the default output validator: {exc}") from None
        pkg.judges.append(JudgeSource(kind="kattis_default", name="default output validator", language="",
                                      entry="", files={}, flags=out_flags))
    in_flags = _flags(root_config.get("input_validator_flags", root_config.get("input_validator_args")))
    for dirname in INPUT_VALIDATOR_DIRS:
        base = root / dirname
        if not base.is_dir() or not inside(root, base):
            continue
        for item in _single_or_folders(base) if base.name == "input_validator" else sorted(base.iterdir()):
            name = str(item.relative_to(root))
            if item.is_symlink() and not inside(root, item):
                pkg.refuse(name, "a symlink leaving the package (not read)")
                continue
            if item.is_dir():
                pkg.judges.append(_judge_folder(root, item, "kattis_input_validator", name, pkg, in_flags))
            elif item.is_file():
                pkg.judges.append(_judge_file(root, item, "kattis_input_validator", name, in_flags))


def _judge_file(root: Path, path: Path, kind: str, name: str, flags: list[str]) -> JudgeSource:
    text = _read_text(path)
    language = _language_of_file(path.name, text)
    source = JudgeSource(kind=kind, name=name, language=language, entry=path.name, files={path.name: text},
                         flags=flags)
    if language not in ("cpp", "python3"):
        source.refused = f"a {kind.replace('_', ' ')} in {language!r} is not supported (C++ and Python 3 are)"
    return source


def _language_of_file(name: str, code: str) -> str:
    suffix = Path(name).suffix
    if suffix in CPP_SUFFIXES:
        return "cpp"
    if suffix == ".c":
        return "c"
    if suffix == ".java":
        return "java"
    if suffix == ".py":
        first = code.splitlines()[0] if code else ""
        if "python2" in first or re.search(r"(^|[_.-])py2([_.-]|$)", Path(name).stem):
            return "python2"
        if first.startswith("#!") and "python3" in first:
            return "python3"
        return "python3" if not code or detect_language(code) != "python2" else "python2"
    if suffix in (".py2",):
        return "python2"
    if suffix in (".py3",):
        return "python3"
    return {".ctd": "checktestdata", ".viva": "viva", ".sh": "shell"}.get(suffix, suffix.lstrip(".") or "unknown")


# C is compiled with gcc as C (sandbox/languages.py), never with g++ as C++
SUPPORTED_SUBMISSION_LANGUAGES = ("c", "cpp", "python3", "java")


def submission_refusal(language: str) -> str:
    """Why a submission in `language` is not imported ("" when it is judged): a language the
    sandbox does not run, or one whose compiler this machine lacks (a C submission with no
    gcc is refused, never judged as C++)."""
    if language not in SUPPORTED_SUBMISSION_LANGUAGES:
        return f"{language!r} is not a language the sandbox runs"
    return compiler_missing(language)


def _submissions(root: Path, pkg: Package) -> None:
    base = root / "submissions"
    if not base.is_dir() or not inside(root, base):
        return
    for folder in sorted(p for p in base.iterdir() if p.is_dir()):
        gold = FOLDER_VERDICTS.get(folder.name, "UNKNOWN")
        for item in sorted(folder.iterdir()):
            rel = str(item.relative_to(base))
            if item.is_symlink() and not inside(root, item):
                pkg.refuse(f"submissions/{rel}", "a symlink leaving the package (not read)")
                continue
            if item.is_dir():
                pkg.refuse(f"submissions/{rel}", "a submission of several files is not supported")
                continue
            if not item.is_file():
                continue
            code = _read_text(item)
            language = _language_of_file(item.name, code)
            why = submission_refusal(language)
            if why:
                pkg.refuse(f"submissions/{rel}", why)
                continue
            pkg.submissions.append(Submission(path=rel, folder=folder.name, language=language, code=code, gold=gold))


def package_read(root: Path, *, name: str | None = None) -> Package:
    """One package folder (its short name: the folder's, or `name`); PackageError when it is refused whole."""
    meta = _yaml(root / "problem.yaml")
    version = _version(meta)
    short = re.sub(r"[^A-Za-z0-9_.-]+", "-", name or root.resolve().name).strip("-") or "problem"
    types, validation = _types(meta, version)
    if "multi-pass" in types:
        raise PackageError("multi-pass problems are not supported")
    if "submit-answer" in types:
        raise PackageError("submit-answer problems are not supported")
    time_ms, fixed, memory_mb = _limits(root, meta)
    ac_to_time_limit, tle = _multipliers(meta, version)
    title = _name(meta, short)
    statement, fmt = _statement(root, title)
    pkg = Package(root=root, short_name=short, title=title, version=version, statement=statement,
                  statement_format=fmt, types=types, validation=validation, time_limit_ms=time_ms,
                  time_limit_fixed=fixed, memory_mb=memory_mb, time_limit_to_tle=tle,
                  ac_to_time_limit=ac_to_time_limit,
                  metadata={k: meta[k] for k in ("source", "license", "author", "credits", "uuid", "source_url",
                                                 "rights_owner", "keywords") if k in meta})
    if (root / "generators").is_dir() or (root / "generators" / "generators.yaml").exists() \
            or (root / "data" / "generators.yaml").exists():
        pkg.refuse("generators", "BAPCtools generators are not run here; only the tests present under data/ "
                                 "are imported")
    _tests(root, pkg)
    if not pkg.tests:
        raise PackageError("no tests under data/ (a .in with its .ans)")
    root_config = _group_config(root, root / "data")
    _validators(root, pkg, meta, root_config)
    _submissions(root, pkg)
    return pkg


def is_package(path: Path) -> bool:
    return (path / "problem.yaml").is_file() or ((path / "data").is_dir() and (path / "submissions").is_dir())


def package_dirs(path: Path) -> list[Path]:
    """A package folder, or the packages in a folder (one level down)."""
    if is_package(path):
        return [path]
    if path.is_dir():
        return [child for child in sorted(path.iterdir()) if child.is_dir() and is_package(child)]
    return []


@contextmanager
def opened(path: Path) -> Iterator[Path]:
    """A folder to read packages from: `path` itself, or a .zip extracted into a private temporary
    folder (entries leaving it, symlinks and oversized archives refused)."""
    if path.is_dir():
        yield path
        return
    if not zipfile.is_zipfile(path):
        raise PackageError(f"{path}: not a folder or a .zip")
    scratch = Path(tempfile.mkdtemp(prefix="hts-package-"))
    try:
        with zipfile.ZipFile(path) as archive:
            total = 0
            for info in archive.infolist():
                target = (scratch / info.filename).resolve()
                if not str(target).startswith(str(scratch.resolve()) + "/") and target != scratch.resolve():
                    raise PackageError(f"{path}: the entry {info.filename!r} leaves the archive's folder")
                if stat.S_ISLNK(info.external_attr >> 16):
                    continue  # a symlink in an archive is never followed: the part it names is missing
                total += info.file_size
                if total > ZIP_MAX_BYTES:
                    raise PackageError(f"{path}: more than {ZIP_MAX_BYTES >> 30} GB uncompressed")
                archive.extract(info, scratch)
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
