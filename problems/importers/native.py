"""The project's own lossless JSON-lines format: one problem per line.

Every other format is mapped onto this one (``hardtests.py``, ``codecontests.py``...), so a
row is checked here completely before anything is written (`native_row_parse`) and there is
one write path (`problems.importers.writer`). The format is documented in the README
(section "Native dataset format"); `problems.exporters.native` writes it.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from problems.importers.base import RowError
from problems.models import CodeOrigin, Language, Problem, Solution, TestCase, TestSuite

__all__ = ["KIT_KEYS", "NativeRow", "RowError", "kit_parse", "native_row_parse", "native_row_write"]

KIT_KEYS = (
    "input_validator",
    "needs_custom_output_judging_function",
    "output_judging_function",
    "LLMGen_input",
    "RPGen_SPGen_input_generator",
    "HackGen_input_generator",
)
_ROLES = {c.value for c in Solution.Role}
_LANGUAGES = {c.value for c in Language}
_VERDICTS = {c.value for c in Solution.GoldVerdict}
_ORIGINS = {c.value for c in TestSuite.Origin}
_KINDS = {c.value for c in TestCase.Kind}
_CODE_ORIGINS = {c.value for c in CodeOrigin}

# Column widths, checked here because PostgreSQL refuses a longer value mid-transaction
# (which would abort a whole import at write time) while SQLite silently stores it.
_MAX = {"source": 50, "pid": 200, "title": 500, "platform": 50, "platform_id": 200, "url": 500}


@dataclass
class NativeRow:
    data: dict[str, Any]
    kit: dict[str, Any] | None = None
    suites: list[dict[str, Any]] = field(default_factory=list)
    aliases: list[dict[str, str]] = field(default_factory=list)
    # True when the row said nothing about platform_id, so the writer may derive one.
    platform_id_given: bool = True


def _str(row: dict[str, Any], key: str, *, required: bool = True, default: str = "", where: str = "") -> str:
    value = row.get(key, None)
    name = f"{where}{key}"
    if value is None:
        if required:
            raise RowError(f"missing required field {name!r}")
        return default
    if not isinstance(value, str):
        raise RowError(f"field {name!r} must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise RowError(f"field {name!r} is empty")
    limit = _MAX.get(key) if not where else None
    if limit and len(value) > limit:
        raise RowError(f"field {name!r} is longer than {limit} characters")
    return value


def _short(value: Any, name: str, limit: int) -> str:
    text = "" if value is None else value
    if not isinstance(text, str):
        raise RowError(f"{name} must be a string or null, got {type(value).__name__}")
    if len(text) > limit:
        raise RowError(f"{name} is longer than {limit} characters")
    return text


def _int(row: dict[str, Any], key: str, default: int, *, low: int, high: int) -> int:
    value = row.get(key, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise RowError(f"field {key!r} must be an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise RowError(f"field {key!r} must be between {low} and {high}, got {value}")
    return int(value)


def _list(row: dict[str, Any], key: str, where: str = "") -> list[Any]:
    value = row.get(key) or []
    if not isinstance(value, list):
        raise RowError(f"field {where}{key!r} must be a list, got {type(value).__name__}")
    return value


def _body(item: dict[str, Any], key: str, where: str) -> str | bytes:
    """A test body: a string, or ``<key>_b64`` for bytes that are not UTF-8 (kept exactly)."""
    if f"{key}_b64" in item:
        try:
            return base64.b64decode(item[f"{key}_b64"], validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise RowError(f"{where}.{key}_b64 is not valid base64") from None
    if not isinstance(item.get(key), str):
        raise RowError(f"{where}.{key} must be a string")
    return item[key]


def _io_pair(item: Any, where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise RowError(f"{where} must be an object with 'input' and 'output'")
    return {"input": _body(item, "input", where), "output": _body(item, "output", where)}


def _difficulty(row: dict[str, Any]) -> list[dict[str, Any]]:
    labels: dict[str, dict[str, Any]] = {}
    for i, label in enumerate(_list(row, "difficulty")):
        if not isinstance(label, dict) or not isinstance(label.get("source"), str) or label.get("level") is None:
            raise RowError(f"difficulty[{i}] must be an object with 'source' and 'level'")
        score = label.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise RowError(f"difficulty[{i}].score must be a number or null")
        source = _short(label["source"], f"difficulty[{i}].source", 50)
        level = _short(str(label["level"]), f"difficulty[{i}].level", 50)
        if not source:
            raise RowError(f"difficulty[{i}].source is empty")
        labels[source] = {"source": source, "level": level, "score": score}
    return [labels[k] for k in sorted(labels)]


def _solutions(row: dict[str, Any]) -> list[dict[str, Any]]:
    solutions = []
    for i, sol in enumerate(_list(row, "solutions")):
        where = f"solutions[{i}]"
        if not isinstance(sol, dict):
            raise RowError(f"{where} must be an object")
        if sol.get("role") not in _ROLES:
            raise RowError(f"{where}.role must be one of {sorted(_ROLES)}, got {sol.get('role')!r}")
        if sol.get("language") not in _LANGUAGES:
            raise RowError(f"{where}.language must be one of {sorted(_LANGUAGES)}, got {sol.get('language')!r}")
        if not isinstance(sol.get("code"), str) or not sol["code"].strip():
            raise RowError(f"{where}.code must be a non-empty string")
        verdict = sol.get("verdict") or Solution.GoldVerdict.UNKNOWN
        if verdict not in _VERDICTS:
            raise RowError(f"{where}.verdict must be one of {sorted(_VERDICTS)} or null, got {verdict!r}")
        reliability = sol.get("reliability")
        if reliability is not None and (isinstance(reliability, bool) or not isinstance(reliability, int)
                                        or reliability < 0):
            raise RowError(f"{where}.reliability must be a non-negative integer or null")
        solutions.append(
            {
                "role": sol["role"],
                "language": sol["language"],
                "code": sol["code"],
                "source": _short(sol.get("source"), f"{where}.source", 100),
                "reliability": reliability,
                "gold_verdict": str(verdict),
                "origin": _short(sol.get("origin"), f"{where}.origin", 100) or "human",
                "name": _short(sol.get("name"), f"{where}.name", 200),
                "note": _short(sol.get("note"), f"{where}.note", 500),
            }
        )
    return solutions


def _suites(row: dict[str, Any]) -> list[dict[str, Any]]:
    suites: dict[str, dict[str, Any]] = {}
    for i, suite in enumerate(_list(row, "suites")):
        where = f"suites[{i}]"
        if not isinstance(suite, dict) or suite.get("origin") not in _ORIGINS:
            raise RowError(f"{where}.origin must be one of {sorted(_ORIGINS)}")
        if suite["origin"] in suites:
            raise RowError(f"{where}: a second suite of origin {suite['origin']!r} (one per origin)")
        tests = []
        for j, test in enumerate(_list(suite, "tests", where=f"{where}.")):
            pair = _io_pair(test, f"{where}.tests[{j}]")
            kind = test.get("kind") or TestCase.Kind.IMPORTED
            if kind not in _KINDS:
                raise RowError(f"{where}.tests[{j}].kind must be one of {sorted(_KINDS)}, got {kind!r}")
            call = test.get("call_number")
            if call is not None and (isinstance(call, bool) or not isinstance(call, int) or call < 0):
                raise RowError(f"{where}.tests[{j}].call_number must be a non-negative integer or null")
            pair["kind"] = kind
            pair["generator"] = _short(test.get("generator"), f"{where}.tests[{j}].generator", 200)
            pair["call_number"] = call
            tests.append(pair)
        suites[suite["origin"]] = {"origin": suite["origin"], "tests": tests}
    return list(suites.values())


def _aliases(row: dict[str, Any]) -> list[dict[str, str]]:
    aliases = []
    for i, alias in enumerate(_list(row, "aliases")):
        if not isinstance(alias, dict):
            raise RowError(f"aliases[{i}] must be an object with 'source' and 'pid'")
        aliases.append(
            {
                "source": _str(alias, "source", where=f"aliases[{i}]."),
                "pid": _str(alias, "pid", where=f"aliases[{i}]."),
                "url": _short(alias.get("url"), f"aliases[{i}].url", 500),
            }
        )
    return aliases


def native_row_parse(row: Any) -> NativeRow:
    """Check a native row and normalise it; raises RowError naming the first problem found."""
    if not isinstance(row, dict):
        raise RowError(f"a row must be a JSON object, got {type(row).__name__}")
    data: dict[str, Any] = {
        "source": _str(row, "source", required=False, default="native") or "native",
        "pid": _str(row, "pid"),
        "title": _str(row, "title"),
        "statement": _str(row, "statement", required=False),
        "platform": _str(row, "platform", required=False),
        "platform_id": _str(row, "platform_id", required=False),
        "url": _str(row, "url", required=False),
        "time_limit_ms": _int(row, "time_limit_ms", 2000, low=1, high=600_000),
        "memory_limit_mb": _int(row, "memory_limit_mb", 256, low=1, high=65_536),
    }
    date = row.get("contest_date")
    if date:
        try:
            data["contest_date"] = dt.date.fromisoformat(str(date)[:10])
        except ValueError:
            raise RowError(f"field 'contest_date' is not an ISO date: {date!r}") from None
    else:
        data["contest_date"] = None
    data["difficulty"] = _difficulty(row)
    tags = _list(row, "tags")
    if not all(isinstance(t, str) and t.strip() and len(t.strip()) <= 100 for t in tags):
        raise RowError("field 'tags' must be a list of non-empty strings of at most 100 characters")
    data["tags"] = sorted({t.strip() for t in tags})
    samples = [_io_pair(s, f"samples[{i}]") for i, s in enumerate(_list(row, "samples"))]
    if any(isinstance(s["input"], bytes) or isinstance(s["output"], bytes) for s in samples):
        raise RowError("samples must be text (only suite tests may be binary)")
    data["samples"] = samples
    data["solutions"] = _solutions(row)
    extra = row.get("extra")
    if extra is not None and not isinstance(extra, dict):
        raise RowError(f"field 'extra' must be an object, got {type(extra).__name__}")
    data["extra"] = extra or {}
    parsed = NativeRow(data=data, platform_id_given="platform_id" in row)
    kit = row.get("kit")
    if kit is not None:
        parsed.kit = kit_parse(kit)
    parsed.suites = _suites(row)
    parsed.aliases = _aliases(row)
    return parsed


def kit_parse(kit: Any) -> dict[str, Any]:
    """Check a test-case kit with the keys of DESIGN.md (plus ``batch_generator`` and ``extra``)."""
    if not isinstance(kit, dict):
        raise RowError("kit must be an object with the keys of the test-case kit, or null")
    code_keys = ("input_validator", "output_judging_function", "RPGen_SPGen_input_generator",
                 "HackGen_input_generator", "batch_generator")
    for key in code_keys:
        if kit.get(key) is not None and not isinstance(kit[key], str):
            raise RowError(f"kit.{key} must be a string (Python source) or null")
    direct = kit.get("LLMGen_input") or []
    if not isinstance(direct, list) or not all(isinstance(x, str) for x in direct):
        raise RowError("kit.LLMGen_input must be a list of strings")
    needs = kit.get("needs_custom_output_judging_function", False)
    if not isinstance(needs, bool):
        raise RowError("kit.needs_custom_output_judging_function must be true or false")
    if needs and not (kit.get("output_judging_function") or "").strip():
        raise RowError("kit says it needs an output judging function but output_judging_function is empty")
    origin = kit.get("origin")
    if origin is not None and origin not in _CODE_ORIGINS:
        raise RowError(f"kit.origin must be one of {sorted(_CODE_ORIGINS)}, got {origin!r}")
    extra = kit.get("extra")
    if extra is not None and not isinstance(extra, dict):
        raise RowError("kit.extra must be an object or null")
    parsed = {key: kit.get(key) or "" for key in code_keys}
    if not any(parsed.values()) and not direct:
        raise RowError("kit has no validator, judge, inputs or generators")
    parsed.update(
        {
            "needs_custom_output_judging_function": needs,
            "LLMGen_input": list(direct),
            "model": _short(kit.get("model"), "kit.model", 100),
            "origin": origin or CodeOrigin.IMPORTED,
            "extra": extra or {},
        }
    )
    return parsed


def native_row_write(parsed: NativeRow) -> tuple[Problem, bool]:
    """Upsert one parsed row by (source, pid). Idempotent: re-importing changes nothing."""
    from problems.importers.writer import rows_write

    outcome = rows_write([parsed])[0]
    return Problem.objects.get(pk=outcome.problem_id), outcome.status == "created"
