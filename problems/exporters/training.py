"""Training data: one row per problem with what an RL verifier needs, as parquet and JSON lines.

A row holds the statement, a ready prompt (statement, limits, samples and how to present
the answer: OpenRLHF's ``--data.input_key prompt --data.label_key id``), the limits, the tests (input, output) of the best active suite
(generated, else official, else imported, else the public samples), the output judging
function when the problem needs one (else null: compare tokens), and metadata. Problems
without any test are left out and counted.

Every row has the same keys and types, with no map columns, so Hugging Face ``datasets``
loads both files (the parquet and the JSON lines) with the features in SCHEMA. ``id`` is
``source:pid``, the reference the verification API resolves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from problems.exporters.bundles import Bundle, bundles, test_bodies
from problems.exporters.card import card_write
from problems.exporters.prompt import answer_prompt

# oracle_free (model-made outputs) before the samples alone, never before an oracle-checked suite;
# tests_origin and tests_unverified say which one a row carries.
DEFAULT_ORIGINS = ("generated", "official", "imported", "oracle_free", "public")

SCHEMA = pa.schema([
    ("id", pa.string()),
    ("source", pa.string()),
    ("pid", pa.string()),
    ("title", pa.string()),
    ("statement", pa.string()),
    # The statement with the limits, samples and how to present the answer (a fenced block
    # labelled with its language): OpenRLHF's --data.input_key prompt.
    ("prompt", pa.string()),
    ("time_limit_ms", pa.int64()),
    ("memory_limit_mb", pa.int64()),
    ("tests", pa.list_(pa.struct([("input", pa.string()), ("output", pa.string())]))),
    ("tests_origin", pa.string()),
    ("output_judging_function", pa.string()),
    ("metadata", pa.struct([
        ("platform", pa.string()),
        ("platform_id", pa.string()),
        ("url", pa.string()),
        ("difficulty", pa.list_(pa.struct([("source", pa.string()), ("level", pa.string())]))),
        ("tags", pa.list_(pa.string())),
        ("test_kinds", pa.list_(pa.struct([("kind", pa.string()), ("count", pa.int64())]))),
        ("oracles", pa.int64()),
        # How outputs are compared when there is no judging function: "tokens" or "exact".
        ("comparison", pa.string()),
        # True when the outputs came from one oracle that no second oracle confirmed.
        ("tests_unverified", pa.bool_()),
    ])),
])


def problem_ref(problem: Any) -> str:
    """source:pid, what the verification API and the reward functions take as a problem id."""
    return f"{problem.source}:{problem.pid}"


def training_row(bundle: Bundle, origins: tuple[str, ...] = DEFAULT_ORIGINS) -> dict[str, Any] | None:
    chosen = bundle.suite_for(origins)
    p = bundle.problem
    unverified = False
    if chosen is not None and chosen[1]:
        origin, cases = chosen
        unverified = bool(bundle.suites[origin].unverified)
        # A time-only test has no expected output, which this format cannot say: left out, so that
        # no consumer compares a program's output with "" (the API still judges with it).
        cases = [t for t in cases if t.kind != "time_only"]
        tests = [{"input": inp.decode("utf-8", errors="replace"), "output": out.decode("utf-8", errors="replace")}
                 for inp, out in test_bodies(cases)]
        kinds: dict[str, int] = {}
        for t in cases:
            kinds[t.kind] = kinds.get(t.kind, 0) + 1
    elif "public" in origins and p.samples:
        origin, tests, kinds = "samples", [dict(s) for s in p.samples], {"public": len(p.samples)}
    else:
        return None
    kit = bundle.kit
    judge = kit.output_judge.code if kit and kit.output_judge and kit.needs_output_judge else None
    return {
        "id": problem_ref(p),
        "source": p.source,
        "pid": p.pid,
        "title": p.title,
        "statement": p.statement,
        "prompt": answer_prompt(p),
        "time_limit_ms": p.time_limit_ms,
        "memory_limit_mb": p.memory_limit_mb,
        "tests": tests,
        "tests_origin": origin,
        "output_judging_function": judge,
        "metadata": {
            "platform": p.platform,
            "platform_id": p.platform_id,
            "url": p.url,
            "difficulty": [{"source": d.source, "level": d.level} for d in bundle.labels],
            "tags": bundle.tags,
            "test_kinds": [{"kind": k, "count": n} for k, n in sorted(kinds.items())],
            "oracles": sum(1 for s in bundle.solutions if s.role == "oracle"),
            "comparison": p.comparison,
            "tests_unverified": unverified,
        },
    }


def training_export(*, problems: Any, out: Path, limit: int | None = None,
                    origins: tuple[str, ...] = DEFAULT_ORIGINS, batch: int = 50) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    parquet_path, jsonl_path = out / "train.parquet", out / "train.jsonl"
    counts = {"problems": 0, "tests": 0, "without_tests": 0}
    rows: list[dict[str, Any]] = []
    with pq.ParquetWriter(parquet_path, SCHEMA) as writer, jsonl_path.open("w", encoding="utf-8") as jsonl:

        def flush() -> None:
            if rows:
                writer.write_table(pa.Table.from_pylist(rows, schema=SCHEMA))
                rows.clear()

        for bundle in bundles(problems, limit=limit):
            row = training_row(bundle, origins)
            if row is None:
                counts["without_tests"] += 1
                continue
            jsonl.write(json.dumps(row, ensure_ascii=False) + "\n")
            rows.append(row)
            counts["problems"] += 1
            counts["tests"] += len(row["tests"])
            if len(rows) >= batch:
                flush()
        flush()
    card_write(out, kind="training", schema=SCHEMA, files=[parquet_path.name], counts=counts,
               extra_files=[jsonl_path.name])
    return {**counts, "files": [str(parquet_path), str(jsonl_path)], "card": str(out / "README.md")}
