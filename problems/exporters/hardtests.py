"""A parquet pair with the published schemas of ``sigcp/hardtests_problems`` and
``sigcp/hardtests_tests`` (dataset cards, 2025), so tools written for HardTests read it and
this project's ``import_dataset hardtests`` reads it back.

Tests come from the active generated suite (else imported, else official); ``test_cases``
is encoded as the dataset encodes it, and ``mapping`` is rebuilt from each test's kind and
generator. The kit is written in the card's ``input_generation`` nesting.

A round trip through ``import_dataset hardtests`` keeps what the schema can carry:
oracle reliability ranks (``source_reliability`` is the rank as text), generator names
(the groups follow ``func_names``; direct tests are ``LLMGen_input``) and call numbers
(position in a mapping group = call number - 1, a dropped call is a null).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from problems.exporters.bundles import Bundle, bundles, test_bodies
from problems.exporters.card import card_write
from problems.importers.unpickle import cases_encode
from problems.models import Language, Solution, TestCase

TEST_ORIGINS = ("generated", "imported", "official")
_GEN = pa.struct([("code", pa.string()), ("func_names", pa.list_(pa.string()))])

PROBLEMS_SCHEMA = pa.schema([
    ("pid", pa.string()),
    ("question_title", pa.string()),
    ("question_content", pa.string()),
    ("question_content_all_languages", pa.list_(pa.struct(
        [("content", pa.string()), ("is_original", pa.bool_()), ("language", pa.string())]))),
    ("platform", pa.string()),
    ("contest_date", pa.string()),
    ("difficulty_ratings", pa.list_(pa.struct([("level", pa.string()), ("score", pa.int64()),
                                               ("source", pa.string())]))),
    ("public_test_cases", pa.list_(pa.struct([("input", pa.string()), ("output", pa.string()),
                                              ("testtype", pa.string())]))),
    ("time_limit", pa.string()),
    ("memory_limit", pa.string()),
    ("url", pa.string()),
    ("tags", pa.list_(pa.struct([("content", pa.list_(pa.string())), ("source", pa.string())]))),
    ("source_dataset_info", pa.struct([("dataset_name", pa.string()), ("idx", pa.int64()), ("split", pa.string())])),
    ("solutions", pa.list_(pa.struct([("code", pa.string()), ("language", pa.string()), ("source", pa.string()),
                                      ("source_reliability", pa.string())]))),
    ("starter_code", pa.string()),
])

TESTS_SCHEMA = pa.schema([
    ("pid", pa.string()),
    ("test_cases_kit", pa.struct([
        ("pid", pa.string()),
        ("input_generation", pa.struct([("LLMGen", pa.list_(pa.string())), ("RPGen", _GEN), ("SPGen", _GEN),
                                        ("HackGen", _GEN)])),
        ("input_validator", pa.string()),
        ("output_judging_function", pa.string()),
    ])),
    ("mapping", pa.struct([("LLMGen", pa.list_(pa.int64())), ("RPGen", pa.list_(pa.list_(pa.int64()))),
                           ("SPGen", pa.list_(pa.list_(pa.int64()))), ("HackGen", pa.list_(pa.list_(pa.int64())))])),
    ("test_cases", pa.string()),
])

_LANGUAGE_LABELS: dict[str, str] = {Language.PYTHON3: "python", Language.PYTHON2: "python2",
                                    Language.CPP: "cpp", Language.JAVA: "java", Language.C: "c"}


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} second" + ("" if ms == 1000 else "s")


def problems_row(bundle: Bundle) -> dict[str, Any]:
    p = bundle.problem
    kept = p.extra.get("hardtests", {}) if isinstance(p.extra, dict) else {}
    info = kept.get("source_dataset_info") or {"dataset_name": p.source, "idx": None, "split": None}
    return {
        "pid": p.pid,
        "question_title": p.title,
        "question_content": p.statement,
        "question_content_all_languages": kept.get("question_content_all_languages")
        or [{"content": p.statement, "is_original": True, "language": "en"}],
        "platform": p.platform,
        "contest_date": p.contest_date.isoformat() if p.contest_date else None,
        "difficulty_ratings": [
            {"level": d.level, "score": round(d.score) if d.score is not None else None, "source": d.source}
            for d in bundle.labels
        ],
        "public_test_cases": [{"input": s["input"], "output": s["output"], "testtype": "stdin"}
                              for s in p.samples],
        "time_limit": _seconds(p.time_limit_ms),
        "memory_limit": f"{p.memory_limit_mb} megabytes",
        "url": p.url,
        "tags": [{"content": bundle.tags, "source": p.platform or p.source}] if bundle.tags else [],
        "source_dataset_info": info,
        "solutions": [
            {"code": s.code, "language": _LANGUAGE_LABELS.get(s.language, s.language), "source": s.source,
             "source_reliability": str(s.reliability) if s.reliability is not None else None}
            for s in bundle.solutions if s.role == Solution.Role.ORACLE
        ],
        "starter_code": "",
    }


def _calls(tests: list[tuple[int, TestCase]]) -> list[int | None]:
    """Test index of each call of one generator, by call number (1-based); a call whose input
    was dropped (invalid, duplicate, no agreeing output) is a null, so call numbers survive."""
    calls: dict[int, int] = {}
    for index, test in tests:
        number = test.call_number if test.call_number and test.call_number not in calls else max(calls, default=0) + 1
        calls[number] = index
    return [calls.get(c) for c in range(1, max(calls, default=0) + 1)]


def _groups(tests: list[TestCase], kind: str, known: list[str]) -> tuple[list[list[int | None]], list[str]]:
    """One group per generator function, in the kit's func_names order (a function all of whose
    calls were dropped keeps its empty group, so groups and names stay aligned)."""
    by_name: OrderedDict[str, list[tuple[int, TestCase]]] = OrderedDict((name, []) for name in known)
    for index, test in enumerate(tests):
        if test.kind == kind:
            by_name.setdefault(test.generator, []).append((index, test))
    if not any(by_name.values()):
        return [], list(known)
    return [_calls(group) for group in by_name.values()], list(by_name)


def tests_row(bundle: Bundle) -> dict[str, Any] | None:
    chosen = bundle.suite_for(TEST_ORIGINS)
    kit = bundle.kit
    if chosen is None and kit is None:
        return None
    tests = chosen[1] if chosen else []
    known = (kit.extra.get("func_names") or {}) if kit and isinstance(kit.extra, dict) else {}
    rp_groups, rp_names = _groups(tests, TestCase.Kind.REGULAR, known.get("RPGen") or [])
    sp_groups, sp_names = _groups(tests, TestCase.Kind.STRATIFIED, known.get("SPGen") or [])
    hack_groups, hack_names = _groups(tests, TestCase.Kind.HACKING, known.get("HackGen") or [])
    regular = kit.regular_generator if kit else ""
    stratified = "gen_stratified_input" in regular

    def gen(code: str, names: list[str], key: str) -> dict[str, Any] | None:
        return {"code": code, "func_names": names or known.get(key) or []} if code else None

    return {
        "pid": bundle.problem.pid,
        "test_cases_kit": {
            "pid": bundle.problem.pid,
            "input_generation": {
                "LLMGen": list(kit.direct_inputs) if kit else [],
                "RPGen": gen(regular if not stratified else "", rp_names, "RPGen"),
                "SPGen": gen(regular if stratified else "", sp_names, "SPGen"),
                "HackGen": gen(kit.hacking_generator if kit else "", hack_names, "HackGen"),
            },
            "input_validator": kit.validator.code if kit and kit.validator else "",
            "output_judging_function": kit.output_judge.code if kit and kit.output_judge else None,
        },
        "mapping": {
            "LLMGen": _calls([(i, t) for i, t in enumerate(tests) if t.kind == TestCase.Kind.DIRECT]),
            "RPGen": rp_groups,
            "SPGen": sp_groups,
            "HackGen": hack_groups,
        },
        "test_cases": cases_encode([
            {"input": inp.decode("utf-8", errors="replace"), "output": out.decode("utf-8", errors="replace")}
            for inp, out in test_bodies(tests)
        ]),
    }


def hardtests_export(*, problems: Any, out: Path, limit: int | None = None, batch: int = 100) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    problems_path, tests_path = out / "hardtests_problems.parquet", out / "hardtests_tests.parquet"
    counts = {"problems": 0, "tests_rows": 0}
    with pq.ParquetWriter(problems_path, PROBLEMS_SCHEMA) as pw, pq.ParquetWriter(tests_path, TESTS_SCHEMA) as tw:
        prows: list[dict[str, Any]] = []
        trows: list[dict[str, Any]] = []

        def flush(final: bool = False) -> None:
            if prows and (final or len(prows) >= batch):
                pw.write_table(pa.Table.from_pylist(prows, schema=PROBLEMS_SCHEMA))
                prows.clear()
            if trows and (final or len(trows) >= batch):
                tw.write_table(pa.Table.from_pylist(trows, schema=TESTS_SCHEMA))
                trows.clear()

        for bundle in bundles(problems, limit=limit):
            prows.append(problems_row(bundle))
            counts["problems"] += 1
            if (row := tests_row(bundle)) is not None:
                trows.append(row)
                counts["tests_rows"] += 1
            flush()
        flush(final=True)
    card_write(out, kind="hardtests", schema=PROBLEMS_SCHEMA, files=[], counts=counts, configs=[
        {"name": "problems", "files": [problems_path.name], "schema": PROBLEMS_SCHEMA, "rows": counts["problems"]},
        {"name": "tests", "files": [tests_path.name], "schema": TESTS_SCHEMA, "rows": counts["tests_rows"]},
    ])
    return {**counts, "files": [str(problems_path), str(tests_path)], "card": str(out / "README.md")}
