"""HardTests: rows of ``sigcp/hardtests_problems`` joined on ``pid`` with ``sigcp/hardtests_tests``.

Problems files are recognised by ``question_content``, tests files by ``test_cases`` or
``test_cases_kit``. The kit has been published in two nestings: generators under
``test_cases_kit.input_generation`` (``LLMGen``, ``RPGen``/``SPGen``/``HackGen`` as
``{code, func_names}``) as the dataset card lists them, or directly in ``test_cases_kit``
as HardTests' own conversion script writes them; the pipeline's raw output uses
``LLMGen_input``, ``RPGen_SPGen_input_generator`` and ``HackGen_input_generator``, and an
early card ``small_scale_input``/``regular_input_generator``/``hacking_input_generator``.
All are read. ``mapping`` lists, per generator, which decoded tests it produced.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from problems.importers.base import FormatCounters, RowError, RowSkipped
from problems.importers.formats import DatasetFormat, Reader, iso_date, json_field, limit, text
from problems.importers.identity import (
    memory_limit_mb,
    platform_id_from_url,
    platform_normalise,
    time_limit_ms,
)
from problems.importers.languages import language_from_label, reliability_rank
from problems.importers.sources import RawRow, RowFile, SourceError
from problems.importers.unpickle import cases_decode
from problems.models import DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIME_LIMIT_MS, TestCase

SOURCE = "hardtests"
# The generator name materialising gives direct (LLM-written) inputs.
DIRECT_GENERATOR = "LLMGen_input"
CALL_BASED = "call-based problem (starter code or functional tests)"

# (keys the generator has been published under, the test kind it makes)
_GENERATORS = (
    (("LLMGen", "LLMGen_input", "small_scale_input"), TestCase.Kind.DIRECT),
    (("RPGen",), TestCase.Kind.REGULAR),
    (("SPGen",), TestCase.Kind.STRATIFIED),
    (("RPGen_SPGen", "RPGen_SPGen_input_generator", "regular_input_generator"), None),  # kind from the code
    (("HackGen", "HackGen_input_generator", "hacking_input_generator"), TestCase.Kind.HACKING),
)


class HardTestsReader(Reader):
    def __init__(self, files: list[RowFile]) -> None:
        super().__init__(files)
        self.problems: list[RowFile] = []
        self.tests: list[RowFile] = []
        for f in files:
            columns = f.columns()
            if "question_content" in columns:
                self.problems.append(f)
            elif columns & {"test_cases", "test_cases_kit"}:
                self.tests.append(f)
            else:
                raise SourceError(
                    f"{f.name}: neither a HardTests problems file (question_content) nor a tests file (test_cases)"
                )
        if not self.problems:
            raise SourceError("hardtests needs the problems file(s) (rows with question_content), not only tests")
        self._index: dict[Any, tuple[int, Any]] | None = None
        self._matched = 0

    def _tests_index(self) -> dict[Any, tuple[int, Any]]:
        if self._index is None:
            self._index = {}
            for n, f in enumerate(self.tests):
                for pid, locator in f.index("pid").items():
                    self._index[pid] = (n, locator)
        return self._index

    def rows(self) -> Iterator[RawRow]:
        index = self._tests_index()
        matched = 0
        for f in self.problems:
            for raw in f.rows():
                if raw.data is not None and (found := index.get(raw.data.get("pid"))) is not None:
                    n, locator = found
                    raw.data["__tests__"] = self.tests[n].get(locator)
                    # Errors in the tests part must name the tests file, not the problems file.
                    raw.data["__tests_where__"] = f"{self.tests[n].name} (the row of pid {raw.data.get('pid')!r})"
                    matched += 1
                yield raw
        self._matched = matched

    def count(self) -> int | None:
        counts = [f.count() for f in self.problems]
        return None if None in counts else sum(c for c in counts if c is not None)

    def notes(self) -> dict[str, Any]:
        index = self._tests_index()
        return {"tests_rows": len(index), "tests_rows_without_problem": max(0, len(index) - self._matched)}


def _generator(value: Any, key: str) -> tuple[str, list[str]]:
    if value is None:
        return "", []
    if isinstance(value, str):
        return value, []
    if not isinstance(value, dict):
        raise RowError(f"tests: test_cases_kit {key} must be an object with 'code' and 'func_names'")
    code = value.get("code") or ""
    names = value.get("func_names") or []
    if not isinstance(code, str) or not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise RowError(f"tests: test_cases_kit {key}.code must be a string and func_names a list of strings")
    return code, names


def _first(d: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, Any]:
    for key in keys:
        if d.get(key) is not None:
            return key, d[key]
    return keys[0], None


def _kit(raw: Any) -> tuple[dict[str, Any], dict[str, list[str]], dict[str, str]]:
    """The native kit, the generator function names, and the code of each generator group."""
    if isinstance(raw, str):
        raw = json_field({"test_cases_kit": raw}, "test_cases_kit")
    if not isinstance(raw, dict):
        raise RowError("tests: test_cases_kit must be an object")
    nested = isinstance(raw.get("input_generation"), dict)
    gen = raw["input_generation"] if nested else raw
    _, direct = _first(gen, _GENERATORS[0][0])
    direct = direct or []
    if not isinstance(direct, list) or not all(isinstance(x, str) for x in direct):
        raise RowError("tests: test_cases_kit LLMGen must be a list of strings")
    codes: dict[str, str] = {}
    names: dict[str, list[str]] = {}
    for keys, _kind in _GENERATORS[1:]:
        key, value = _first(gen, keys)
        code, funcs = _generator(value, key)
        if code:
            codes[keys[0]], names[keys[0]] = code, funcs
    regular = "\n\n".join(codes[k] for k in ("RPGen", "SPGen", "RPGen_SPGen") if k in codes)
    judge = raw.get("output_judging_function") or ""
    validator = raw.get("input_validator") or ""
    if not isinstance(judge, str) or not isinstance(validator, str):
        raise RowError("tests: input_validator and output_judging_function must be strings")
    if judge.strip() in ("None", "null"):  # "no judge needed", written as text by some copies
        judge = ""
    needs = raw.get("needs_custom_output_judging_function")
    kit = {
        "input_validator": validator,
        "needs_custom_output_judging_function": bool(judge.strip()) if needs is None else bool(needs),
        "output_judging_function": judge,
        "LLMGen_input": direct,
        "RPGen_SPGen_input_generator": regular,
        "HackGen_input_generator": codes.get("HackGen", ""),
        "origin": "imported",
        "model": "hardtests",
        "extra": {"func_names": names, "nesting": "input_generation" if nested else "flat"},
    }
    return kit, names, codes


def _suite(row: dict[str, Any], names: dict[str, list[str]], codes: dict[str, str]) -> dict[str, Any] | None:
    if not row.get("test_cases"):
        return None
    tests = cases_decode(row["test_cases"])
    mapping = json_field(row, "mapping", default={})
    if not isinstance(mapping, dict):
        raise RowError("tests: mapping must be an object")
    kinds: list[tuple[str, str, int | None] | None] = [None] * len(tests)
    for keys, kind in _GENERATORS:
        key, groups = _first(mapping, keys)
        if groups is None:
            continue
        if not isinstance(groups, list):
            raise RowError(f"tests: mapping.{key} must be a list")
        group_kind = kind or (TestCase.Kind.STRATIFIED if "gen_stratified_input" in codes.get(keys[0], "")
                              else TestCase.Kind.REGULAR)
        funcs = names.get(keys[0], [])
        flat = all(g is None or (isinstance(g, int) and not isinstance(g, bool)) for g in groups)
        for g, group in enumerate([groups] if flat else groups):
            if not isinstance(group, list):
                raise RowError(f"tests: mapping.{key}[{g}] must be a list of test indices")
            # Position in the group is the call (numbered from 1, as materialising numbers them);
            # a null is a call that left no test.
            for position, index in enumerate(group):
                if index is None:
                    continue
                if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(tests):
                    raise RowError(f"tests: mapping.{key} refers to test {index!r}, but test_cases has {len(tests)}")
                if flat:
                    generator = DIRECT_GENERATOR if kind == TestCase.Kind.DIRECT else ""
                else:
                    generator = funcs[g] if g < len(funcs) else f"{keys[0]}_{g}"
                kinds[index] = kinds[index] or (group_kind, generator[:200], position + 1)
    out = []
    for test, info in zip(tests, kinds, strict=True):
        test_kind, generator, call = info or (TestCase.Kind.IMPORTED, "", None)
        out.append({**test, "kind": test_kind, "generator": generator, "call_number": call})
    return {"origin": "generated", "tests": out}


def _reliability(source: str, label: Any) -> int:
    """A rank written as a number (this project's export) is kept; a source label is ranked."""
    if isinstance(label, int) and not isinstance(label, bool) and label > 0:
        return label
    if isinstance(label, str) and label.strip().isdigit() and int(label) > 0:
        return int(label)
    return reliability_rank(source, label if isinstance(label, str) else None)


def hardtests_map(row: dict[str, Any], counters: FormatCounters) -> dict[str, Any]:
    pid = text(row, "pid", required=True)
    public = json_field(row, "public_test_cases", default=[])
    if not isinstance(public, list) or not all(isinstance(t, dict) for t in public):
        raise RowError("field 'public_test_cases' must be a list of objects")
    if text(row, "starter_code").strip() or any(str(t.get("testtype") or "stdin").lower() != "stdin" for t in public):
        counters.add("call_based_skipped")
        raise RowSkipped(CALL_BASED)
    statement = text(row, "question_content", required=True)
    url = text(row, "url")
    platform = platform_normalise(text(row, "platform"))
    difficulty = []
    for i, label in enumerate(json_field(row, "difficulty_ratings", default=[]) or []):
        if not isinstance(label, dict):
            raise RowError(f"difficulty_ratings[{i}] must be an object with 'source' and 'level'")
        difficulty.append({"source": label.get("source") or platform or SOURCE, "level": label.get("level"),
                           "score": label.get("score")})
    tags: list[str] = []
    for i, group in enumerate(json_field(row, "tags", default=[]) or []):
        content = group.get("content") if isinstance(group, dict) else [group]
        if not isinstance(content, list) or not all(isinstance(t, str) for t in content):
            raise RowError(f"tags[{i}].content must be a list of strings")
        tags.extend(t.strip()[:100] for t in content if t.strip())
    solutions = []
    for i, sol in enumerate(json_field(row, "solutions", default=[]) or []):
        if not isinstance(sol, dict) or not isinstance(sol.get("code"), str):
            raise RowError(f"solutions[{i}] must be an object with a string 'code'")
        if not sol["code"].strip():
            counters.add("empty_solutions_dropped")
            continue
        language = language_from_label(sol.get("language"), sol["code"])
        counters.add(f"solutions_{language}")
        source = str(sol.get("source") or SOURCE)
        solutions.append({
            "role": "oracle", "language": language, "code": sol["code"], "source": source[:100],
            "reliability": _reliability(source, sol.get("source_reliability")), "verdict": "AC",
            "note": f"source_reliability: {sol['source_reliability']}"[:500] if sol.get("source_reliability") else "",
        })
    native: dict[str, Any] = {
        "source": SOURCE, "pid": pid, "title": (text(row, "question_title") or pid)[:500], "statement": statement,
        "platform": platform, "platform_id": platform_id_from_url(url), "url": url,
        "contest_date": iso_date(row.get("contest_date")),
        "time_limit_ms": limit(time_limit_ms, row.get("time_limit"), "time_limit", DEFAULT_TIME_LIMIT_MS),
        "memory_limit_mb": limit(memory_limit_mb, row.get("memory_limit"), "memory_limit", DEFAULT_MEMORY_LIMIT_MB),
        "difficulty": difficulty, "tags": sorted(set(tags)), "solutions": solutions,
        "samples": [{"input": t.get("input"), "output": t.get("output")} for t in public],
        "extra": {SOURCE: {k: row[k] for k in ("source_dataset_info", "question_content_all_languages",
                                               "contest_date", "time_limit", "memory_limit") if row.get(k)}},
    }
    native["suites"] = [{"origin": "public", "tests": [{**s, "kind": "public"} for s in native["samples"]]}] if public \
        else []
    tests_row = row.get("__tests__")
    if tests_row is not None:
        status = tests_row.get("status")
        if status not in (None, "success"):
            counters.add("tests_rows_not_successful")
        elif tests_row.get("test_cases_kit") is not None or tests_row.get("test_cases"):
            try:
                kit, names, codes = _kit(tests_row.get("test_cases_kit") or {})
                suite = _suite(tests_row, names, codes)
            except RowError as exc:
                raise RowError(f"in {row.get('__tests_where__') or 'the tests file'}: {exc}") from None
            if any(kit[k] for k in ("input_validator", "output_judging_function", "LLMGen_input",
                                    "RPGen_SPGen_input_generator", "HackGen_input_generator")):
                native["kit"] = kit
            if suite is not None:
                native["suites"].append(suite)
    return native


FORMAT = DatasetFormat(
    name="hardtests",
    description="sigcp/hardtests_problems + sigcp/hardtests_tests (parquet or JSON lines), joined on pid",
    map_row=hardtests_map,
    reader=HardTestsReader,
)
