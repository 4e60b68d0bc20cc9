"""verl's RL data layout: one parquet row per problem with tests, for verl's trainers.

Columns as verl's data preparation scripts write them: ``data_source`` ("hardtests_web"),
``prompt`` (chat messages: the statement and how to answer), ``ability`` ("code"),
``reward_model`` (style "rule", ``ground_truth`` = the problem id ``source:pid``) and
``extra_info``. The reward is computed by the server: point verl's
``custom_reward_function`` at hardtests_client/verl.py (README, "Use it from verl").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from problems.exporters.bundles import Bundle, bundles
from problems.exporters.card import card_write
from problems.exporters.training import DEFAULT_ORIGINS, problem_ref

DATA_SOURCE = "hardtests_web"

SCHEMA = pa.schema([
    ("data_source", pa.string()),
    ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
    ("ability", pa.string()),
    ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
    ("extra_info", pa.struct([
        ("split", pa.string()),
        ("index", pa.int64()),
        ("problem", pa.string()),
        ("title", pa.string()),
        ("time_limit_ms", pa.int64()),
        ("memory_limit_mb", pa.int64()),
        ("tests_origin", pa.string()),
        ("test_count", pa.int64()),
    ])),
])

INSTRUCTIONS = (
    "Solve the following competitive programming problem. Your program reads from standard input and writes to "
    "standard output. Time limit: {time:g} seconds; memory limit: {memory} MB.\n\n{statement}\n{samples}\n"
    "Answer with one complete program in a single fenced code block labelled with its language "
    "(```python, ```cpp or ```java; Java: `public class Main`)."
)


def verl_prompt(bundle: Bundle) -> str:
    p = bundle.problem
    samples = "".join(
        f"\nExample {n} input:\n```\n{s.get('input', '')}```\nExample {n} output:\n```\n{s.get('output', '')}```\n"
        for n, s in enumerate(p.samples if isinstance(p.samples, list) else [], start=1) if isinstance(s, dict)
    )
    return INSTRUCTIONS.format(time=p.time_limit_ms / 1000, memory=p.memory_limit_mb, statement=p.statement.strip(),
                               samples=samples)


def verl_row(bundle: Bundle, index: int, origins: tuple[str, ...] = DEFAULT_ORIGINS) -> dict[str, Any] | None:
    chosen = bundle.suite_for(origins)
    if chosen is None or not chosen[1]:
        return None  # nothing to reward against: the server would refuse it too
    p = bundle.problem
    return {
        "data_source": DATA_SOURCE,
        "prompt": [{"role": "user", "content": verl_prompt(bundle)}],
        "ability": "code",
        "reward_model": {"style": "rule", "ground_truth": problem_ref(p)},
        "extra_info": {"split": "train", "index": index, "problem": problem_ref(p), "title": p.title,
                       "time_limit_ms": p.time_limit_ms, "memory_limit_mb": p.memory_limit_mb,
                       "tests_origin": chosen[0], "test_count": len(chosen[1])},
    }


def verl_export(*, problems: Any, out: Path, limit: int | None = None, batch: int = 200) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "train.parquet"
    counts = {"problems": 0, "without_suite": 0}
    rows: list[dict[str, Any]] = []
    with pq.ParquetWriter(path, SCHEMA) as writer:
        # Test bodies are not needed: the suite's test list is enough to count them.
        for bundle in bundles(problems, limit=limit):
            row = verl_row(bundle, counts["problems"])
            if row is None:
                counts["without_suite"] += 1
                continue
            rows.append(row)
            counts["problems"] += 1
            if len(rows) >= batch:
                writer.write_table(pa.Table.from_pylist(rows, schema=SCHEMA))
                rows.clear()
        if rows:
            writer.write_table(pa.Table.from_pylist(rows, schema=SCHEMA))
    card_write(out, kind="verl", schema=SCHEMA, files=[path.name], counts=counts)
    return {**counts, "files": [str(path)], "card": str(out / "README.md")}
