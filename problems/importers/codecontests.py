"""CodeContests: rows of ``deepmind/code_contests`` (parquet or JSON lines).

Tests come in three groups that mean different things, so each becomes its own suite:
``public_tests`` (the statement's examples, origin public), ``private_tests`` (the judge's
own tests, official) and ``generated_tests`` (mutated inputs with outputs from accepted
solutions, imported). ``solutions`` were accepted on the judge and become oracles;
``incorrect_solutions`` were rejected and become candidates with gold verdict REJECTED.
Enums arrive as integers (the Hugging Face copy) or as their names (the original protos).
"""

from __future__ import annotations

from typing import Any

from problems.importers.base import FormatCounters, RowError
from problems.importers.formats import DatasetFormat, text
from problems.importers.identity import platform_id_codeforces, platform_id_from_url
from problems.importers.languages import RANK_CODECONTESTS
from problems.models import Language, Solution

SOURCE = "codecontests"

# The class labels of the published schema, in order.
SOURCES = ("", "codechef", "codeforces", "hackerearth", "codejam", "atcoder", "aizu")
DIFFICULTIES = ("UNKNOWN_DIFFICULTY", "EASY", "MEDIUM", "HARD", "HARDER", "HARDEST", "EXTERNAL",
                *(chr(c) for c in range(ord("A"), ord("V") + 1)))
# PYTHON is Python 2 in CodeContests; the sandbox does not run it, but it is kept (python2).
LANGUAGES = (Language.OTHER, Language.PYTHON2, Language.CPP, Language.PYTHON3, Language.JAVA)
_LANGUAGE_NAMES = {"UNKNOWN_LANGUAGE": 0, "PYTHON": 1, "CPP": 2, "PYTHON3": 3, "JAVA": 4}
_SOURCE_NAMES = {"UNKNOWN_SOURCE": 0, "CODECHEF": 1, "CODEFORCES": 2, "HACKEREARTH": 3, "CODEJAM": 4,
                 "ATCODER": 5, "AIZU": 6}


def _enum(value: Any, names: dict[str, int] | tuple[str, ...], size: int, key: str) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        table = names if isinstance(names, dict) else {n: i for i, n in enumerate(names)}
        if value.upper() in table:
            return table[value.upper()]
        if value.isdigit():
            value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
        raise RowError(f"field {key!r}: unknown value {value!r}")
    index: int = value
    return index


def _tests(row: dict[str, Any], key: str) -> list[dict[str, str]]:
    group = row.get(key)
    if group is None:
        return []
    pairs: list[tuple[Any, Any]]
    if isinstance(group, list):  # some copies store a list of {input, output}
        pairs = [(t.get("input"), t.get("output")) if isinstance(t, dict) else (None, None) for t in group]
    elif isinstance(group, dict):
        inputs, outputs = group.get("input") or [], group.get("output") or []
        if not isinstance(inputs, list) or not isinstance(outputs, list):
            raise RowError(f"{key}.input and {key}.output must be lists")
        if len(inputs) != len(outputs):
            raise RowError(f"{key} has {len(inputs)} inputs but {len(outputs)} outputs")
        pairs = list(zip(inputs, outputs, strict=True))
    else:
        raise RowError(f"field {key!r} must be an object with 'input' and 'output' lists")
    for i, (inp, out) in enumerate(pairs):
        if not isinstance(inp, str) or not isinstance(out, str):
            raise RowError(f"{key}[{i}]: input and output must be strings")
    return [{"input": i, "output": o} for i, o in pairs]


def _solutions(row: dict[str, Any], key: str, counters: FormatCounters, *, role: str, verdict: str,
               ) -> list[dict[str, Any]]:
    group = row.get(key)
    if group is None:
        return []
    if not isinstance(group, dict):
        raise RowError(f"field {key!r} must be an object with 'language' and 'solution' lists")
    languages, codes = group.get("language") or [], group.get("solution") or []
    if not isinstance(languages, list) or not isinstance(codes, list) or len(languages) != len(codes):
        raise RowError(f"{key}.language and {key}.solution must be lists of the same length")
    out = []
    for i, (lang, code) in enumerate(zip(languages, codes, strict=True)):
        if not isinstance(code, str):
            raise RowError(f"{key}.solution[{i}] must be a string")
        if not code.strip():
            continue
        language = LANGUAGES[_enum(lang, _LANGUAGE_NAMES, len(LANGUAGES), f"{key}.language[{i}]")]
        counters.add(f"{key}_{language}")
        out.append({"role": role, "language": language, "code": code, "source": SOURCE,
                    "reliability": RANK_CODECONTESTS if role == "oracle" else None, "verdict": verdict,
                    "note": "Python 2: kept, not run by the sandbox" if language == Language.PYTHON2 else ""})
    return out


def _limits(row: dict[str, Any]) -> tuple[int, int]:
    tl = row.get("time_limit")
    time_ms = 2000
    if isinstance(tl, dict):
        seconds, nanos = tl.get("seconds") or 0, tl.get("nanos") or 0
        if not isinstance(seconds, int | float) or not isinstance(nanos, int | float):
            raise RowError("time_limit.seconds and time_limit.nanos must be numbers")
        time_ms = round(seconds * 1000 + nanos / 1e6) or 2000
    elif tl is not None:
        raise RowError("field 'time_limit' must be an object with 'seconds' and 'nanos'")
    mem = row.get("memory_limit_bytes")
    if mem is not None and (isinstance(mem, bool) or not isinstance(mem, int) or mem < 0):
        raise RowError("field 'memory_limit_bytes' must be a non-negative integer")
    # CodeContests writes the judge's "256 MB" as 256000000 (decimal); a power-of-two limit
    # (268435456) is binary. Either way the judge meant 256.
    memory_mb = (mem // 1_000_000 if mem % 1_000_000 == 0 else round(mem / (1024 * 1024))) if mem else 256
    return time_ms, max(1, memory_mb)


def codecontests_map(row: dict[str, Any], counters: FormatCounters) -> dict[str, Any]:
    name = text(row, "name", required=True)
    platform = SOURCES[_enum(row.get("source"), _SOURCE_NAMES, len(SOURCES), "source")]
    difficulty_index = _enum(row.get("difficulty"), DIFFICULTIES, len(DIFFICULTIES), "difficulty")
    labels: list[dict[str, Any]] = (
        [{"source": SOURCE, "level": DIFFICULTIES[difficulty_index], "score": None}]
        if difficulty_index else []
    )
    rating = row.get("cf_rating")
    if isinstance(rating, int) and not isinstance(rating, bool) and rating > 0:
        labels.append({"source": "codeforces", "level": str(rating), "score": rating})
    url = ""
    platform_id = ""
    if platform == "codeforces":
        platform_id = platform_id_codeforces(row.get("cf_contest_id"), row.get("cf_index"))
        if platform_id:
            url = f"https://codeforces.com/contest/{int(row['cf_contest_id'])}/problem/{str(row['cf_index']).upper()}"
    time_ms, memory_mb = _limits(row)
    public = _tests(row, "public_tests")
    suites = [
        {"origin": origin, "tests": [{**t, "kind": kind} for t in tests]}
        for origin, kind, tests in (
            ("public", "public", public),
            ("official", "imported", _tests(row, "private_tests")),
            ("imported", "imported", _tests(row, "generated_tests")),
        )
        if tests
    ]
    solutions = _solutions(row, "solutions", counters, role="oracle", verdict=Solution.GoldVerdict.AC)
    solutions += _solutions(row, "incorrect_solutions", counters, role="candidate",
                            verdict=Solution.GoldVerdict.REJECTED)
    extra = {k: row[k] for k in ("cf_contest_id", "cf_index", "cf_points", "input_file", "output_file",
                                 "is_description_translated", "untranslated_description") if row.get(k)}
    description = text(row, "description", required=True)
    return {
        "source": SOURCE, "pid": name[:200], "title": name.split(". ", 1)[-1][:500] or name[:500],
        "statement": description, "platform": platform, "platform_id": platform_id or platform_id_from_url(url),
        "url": url, "time_limit_ms": time_ms, "memory_limit_mb": memory_mb, "difficulty": labels,
        "tags": [t[:100] for t in (row.get("cf_tags") or []) if isinstance(t, str) and t.strip()],
        "samples": public, "solutions": solutions, "suites": suites,
        "extra": {SOURCE: extra} if extra else {},
    }


FORMAT = DatasetFormat(
    name="codecontests",
    description="deepmind/code_contests rows (parquet or JSON lines)",
    map_row=codecontests_map,
)
