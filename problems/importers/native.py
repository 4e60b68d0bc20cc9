"""The project's own lossless JSON-lines format: one problem per line.

A row is checked completely before anything is written (`native_row_parse`), so a caller
can validate a whole file first and then write it in one transaction.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from problems.models import CodeOrigin, DifficultyLabel, Language, Problem, Solution, Tag, TestCase, TestSuite
from problems.services import (
    NewTest,
    judge_create,
    kit_create,
    solution_upsert,
    suite_activate,
    suite_add_tests,
    suite_create,
    validator_create,
)


class RowError(ValueError):
    """A dataset row that cannot be imported; the message says which field and why."""


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


@dataclass
class NativeRow:
    data: dict[str, Any]
    kit: dict[str, Any] | None = None
    suites: list[dict[str, Any]] = field(default_factory=list)


def _str(row: dict[str, Any], key: str, *, required: bool = True, default: str = "") -> str:
    value = row.get(key, None)
    if value is None:
        if required:
            raise RowError(f"missing required field {key!r}")
        return default
    if not isinstance(value, str):
        raise RowError(f"field {key!r} must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise RowError(f"field {key!r} is empty")
    return value


def _int(row: dict[str, Any], key: str, default: int, *, low: int, high: int) -> int:
    value = row.get(key, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise RowError(f"field {key!r} must be an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise RowError(f"field {key!r} must be between {low} and {high}, got {value}")
    return int(value)


def _list(row: dict[str, Any], key: str) -> list[Any]:
    value = row.get(key) or []
    if not isinstance(value, list):
        raise RowError(f"field {key!r} must be a list, got {type(value).__name__}")
    return value


def _io_pair(item: Any, where: str) -> dict[str, str]:
    if not isinstance(item, dict):
        raise RowError(f"{where} must be an object with 'input' and 'output'")
    for key in ("input", "output"):
        if not isinstance(item.get(key), str):
            raise RowError(f"{where}.{key} must be a string")
    return {"input": item["input"], "output": item["output"]}


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
    difficulty = []
    for i, label in enumerate(_list(row, "difficulty")):
        if not isinstance(label, dict) or not isinstance(label.get("source"), str) or label.get("level") is None:
            raise RowError(f"difficulty[{i}] must be an object with 'source' and 'level'")
        score = label.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise RowError(f"difficulty[{i}].score must be a number or null")
        difficulty.append({"source": label["source"], "level": str(label["level"]), "score": score})
    data["difficulty"] = difficulty
    tags = _list(row, "tags")
    if not all(isinstance(t, str) and t.strip() for t in tags):
        raise RowError("field 'tags' must be a list of non-empty strings")
    data["tags"] = sorted({t.strip() for t in tags})
    data["samples"] = [_io_pair(s, f"samples[{i}]") for i, s in enumerate(_list(row, "samples"))]
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
        if reliability is not None and (isinstance(reliability, bool) or not isinstance(reliability, int)):
            raise RowError(f"{where}.reliability must be an integer or null")
        solutions.append(
            {
                "role": sol["role"],
                "language": sol["language"],
                "code": sol["code"],
                "source": str(sol.get("source") or ""),
                "reliability": reliability,
                "gold_verdict": verdict,
                "origin": str(sol.get("origin") or "human"),
                "name": str(sol.get("name") or ""),
                "note": str(sol.get("note") or ""),
            }
        )
    data["solutions"] = solutions
    data["extra"] = row.get("extra") if isinstance(row.get("extra"), dict) else {}
    parsed = NativeRow(data=data)
    kit = row.get("kit")
    if kit is not None:
        parsed.kit = kit_parse(kit)
    for i, suite in enumerate(_list(row, "suites")):
        where = f"suites[{i}]"
        if not isinstance(suite, dict) or suite.get("origin") not in _ORIGINS:
            raise RowError(f"{where}.origin must be one of {sorted(_ORIGINS)}")
        tests = []
        for j, test in enumerate(_list(suite, "tests")):
            pair = _io_pair(test, f"{where}.tests[{j}]")
            kind = test.get("kind") or TestCase.Kind.IMPORTED
            if kind not in _KINDS:
                raise RowError(f"{where}.tests[{j}].kind must be one of {sorted(_KINDS)}, got {kind!r}")
            pair["kind"] = kind
            pair["generator"] = str(test.get("generator") or "")
            tests.append(pair)
        parsed.suites.append({"origin": suite["origin"], "tests": tests})
    return parsed


def kit_parse(kit: Any) -> dict[str, Any]:
    """Check a test-case kit with the keys of DESIGN.md."""
    if not isinstance(kit, dict):
        raise RowError("kit must be an object with the keys of the test-case kit, or null")
    for key in ("input_validator", "output_judging_function", "RPGen_SPGen_input_generator", "HackGen_input_generator"):
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
    return {
        "input_validator": kit.get("input_validator") or "",
        "needs_custom_output_judging_function": needs,
        "output_judging_function": kit.get("output_judging_function") or "",
        "LLMGen_input": list(direct),
        "RPGen_SPGen_input_generator": kit.get("RPGen_SPGen_input_generator") or "",
        "HackGen_input_generator": kit.get("HackGen_input_generator") or "",
        "model": str(kit.get("model") or ""),
        "origin": kit.get("origin") if kit.get("origin") in {c.value for c in CodeOrigin} else CodeOrigin.IMPORTED,
    }


def _kit_differs(problem: Problem, kit: dict[str, Any]) -> bool:
    latest = problem.kits.select_related("validator", "output_judge").order_by("-version").first()
    if latest is None:
        return True
    return (
        (latest.validator.code if latest.validator else "") != kit["input_validator"]
        or (latest.output_judge.code if latest.output_judge else "") != kit["output_judging_function"]
        or latest.direct_inputs != kit["LLMGen_input"]
        or latest.regular_generator != kit["RPGen_SPGen_input_generator"]
        or latest.hacking_generator != kit["HackGen_input_generator"]
    )


def native_row_write(parsed: NativeRow) -> tuple[Problem, bool]:
    """Upsert one parsed row by (source, pid). Idempotent: re-importing changes nothing."""
    data = parsed.data
    with transaction.atomic():
        problem, created = Problem.objects.update_or_create(
            source=data["source"],
            pid=data["pid"],
            defaults={
                k: data[k]
                for k in (
                    "title", "statement", "platform", "url", "time_limit_ms", "memory_limit_mb",
                    "contest_date", "samples", "extra",
                )
            },
        )
        problem.tags.set([Tag.objects.get_or_create(name=name)[0] for name in data["tags"]])
        for label in data["difficulty"]:
            DifficultyLabel.objects.update_or_create(
                problem=problem, source=label["source"], defaults={"level": label["level"], "score": label["score"]}
            )
        for sol in data["solutions"]:
            solution_upsert(problem=problem, **sol)
        kit = parsed.kit
        if kit is not None and _kit_differs(problem, kit):
            validator = (
                validator_create(problem=problem, code=kit["input_validator"], origin=kit["origin"], model_name=kit["model"])
                if kit["input_validator"]
                else None
            )
            judge = (
                judge_create(
                    problem=problem, code=kit["output_judging_function"], origin=kit["origin"], model_name=kit["model"]
                )
                if kit["output_judging_function"]
                else None
            )
            kit_create(
                problem=problem,
                origin=kit["origin"],
                validator=validator,
                output_judge=judge,
                needs_output_judge=kit["needs_custom_output_judging_function"],
                direct_inputs=kit["LLMGen_input"],
                regular_generator=kit["RPGen_SPGen_input_generator"],
                hacking_generator=kit["HackGen_input_generator"],
                model_name=kit["model"],
            )
        for suite_data in parsed.suites:
            _suite_import(problem, suite_data)
    return problem, created


def _suite_import(problem: Problem, suite_data: dict[str, Any]) -> None:
    active = problem.suites.filter(origin=suite_data["origin"], status=TestSuite.Status.ACTIVE).first()
    tests = [NewTest(input=t["input"], output=t["output"], kind=t["kind"], generator=t["generator"]) for t in suite_data["tests"]]
    if active is not None and _same_tests(active, tests):
        return
    suite = suite_create(problem=problem, origin=suite_data["origin"], note="imported")
    suite_add_tests(suite=suite, tests=tests)
    suite_activate(suite=suite)


def _same_tests(suite: TestSuite, tests: list[NewTest]) -> bool:
    from problems.blobs import blob_sha256

    existing = list(suite.tests.order_by("ordinal").values_list("input_sha256", "output_sha256", "kind"))
    wanted = [(blob_sha256(t.input), blob_sha256(t.output), t.kind) for t in tests]
    return existing == wanted
