"""verl's RL data layout: one parquet row per problem with tests, for verl's trainers.

Columns as verl's data preparation scripts write them: ``data_source``, ``prompt`` (chat
messages: the statement and how to answer), ``ability`` ("code"), ``reward_model`` (style
"rule", ``ground_truth``) and ``extra_info``. Two flavours (docs/rl-clients.md):

- ``verl`` (verl_export): data_source "hardtests_web", ground_truth the problem id
  ``source:pid``; the server judges every test with the problem's own limits and output
  judge: point verl's ``custom_reward_function`` at hardtests_client/verl.py.
- ``verl-sandbox-fusion`` (verl_sandbox_fusion_export): rows that verl's *built-in*
  ``sandbox_fusion`` reward scores unmodified: data_source "codecontests" (one of the names
  its default_compute_score routes to sandbox_fusion) and ground_truth the JSON test cases
  ``{"inputs": [...], "outputs": [...]}`` it reads, plus ``"problem"`` (ignored by verl,
  read by our compute_score, so the same rows also work with ours). verl compares stdout
  exactly (trailing newlines aside), so problems that need an output judging function
  (or hold time-only tests) are left out and counted. verl scores the pass rate of the
  first 10 tests, so the tests are listed in the judge's order: the suite's kill order,
  hacking tests first.
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
from problems.exporters.training import DEFAULT_ORIGINS, problem_ref
from problems.judging import judging_position, judging_sort_key
from problems.kill_order import TIME_ONLY

DATA_SOURCE = "hardtests_web"
# verl.utils.reward_score.default_compute_score sends these data sources to sandbox_fusion.
BUILTIN_DATA_SOURCE = "codecontests"

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

def verl_prompt(bundle: Bundle) -> str:
    return answer_prompt(bundle.problem)


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


def verl_sandbox_fusion_row(bundle: Bundle, index: int, origins: tuple[str, ...] = DEFAULT_ORIGINS
                            ) -> dict[str, Any] | str:
    """A row for verl's built-in sandbox_fusion reward, or why the problem is left out."""
    row = verl_row(bundle, index, origins)
    if row is None:
        return "without_suite"
    kit = bundle.kit
    if kit is not None and kit.needs_output_judge:
        return "needs_output_judge"  # verl compares stdout exactly: it would refuse right answers
    chosen = bundle.suite_for(origins)
    assert chosen is not None
    if any(t.kind == TIME_ONLY for t in chosen[1]):
        return "time_only_tests"  # no expected output: verl would compare stdout with nothing
    # verl's built-in scores the pass rate of the first 10 tests only: they must be the ones a
    # wrong program fails, so the tests go in the judge's own order (the suite's kill order, the
    # tests that failed the most known-wrong programs first, then hacking tests first).
    by = judging_sort_key(judging_position(bundle.suites[chosen[0]]))
    ordered = sorted(chosen[1], key=lambda t: by((t.ordinal, t.kind)))
    inputs, outputs = [], []
    for inp, out in test_bodies(ordered):
        try:
            inputs.append(inp.decode("utf-8"))
            outputs.append(out.decode("utf-8"))
        except UnicodeDecodeError:
            return "binary_tests"  # verl sends stdin as JSON text
    row["data_source"] = BUILTIN_DATA_SOURCE
    row["reward_model"] = {"style": "rule", "ground_truth": json.dumps(
        {"inputs": inputs, "outputs": outputs, "problem": row["extra_info"]["problem"]}, ensure_ascii=False)}
    return row


def verl_export(*, problems: Any, out: Path, limit: int | None = None, batch: int = 200,
                builtin: bool = False) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "train.parquet"
    counts = {"problems": 0, "without_suite": 0}
    if builtin:
        counts.update(needs_output_judge=0, binary_tests=0, time_only_tests=0)
    rows: list[dict[str, Any]] = []
    with pq.ParquetWriter(path, SCHEMA) as writer:
        for bundle in bundles(problems, limit=limit):
            made = verl_sandbox_fusion_row(bundle, counts["problems"]) if builtin else verl_row(
                bundle, counts["problems"])
            row = None if isinstance(made, str) else made
            if row is None:
                counts[made if isinstance(made, str) else "without_suite"] += 1
                continue
            rows.append(row)
            counts["problems"] += 1
            if len(rows) >= batch:
                writer.write_table(pa.Table.from_pylist(rows, schema=SCHEMA))
                rows.clear()
        if rows:
            writer.write_table(pa.Table.from_pylist(rows, schema=SCHEMA))
    card_write(out, kind="verl-sandbox-fusion" if builtin else "verl", schema=SCHEMA, files=[path.name],
               counts=counts)
    return {**counts, "files": [str(path)], "card": str(out / "README.md")}


def verl_sandbox_fusion_export(*, problems: Any, out: Path, limit: int | None = None, batch: int = 50
                               ) -> dict[str, Any]:
    """Rows that verl's built-in ``sandbox_fusion`` reward scores unmodified (module docstring)."""
    return verl_export(problems=problems, out=out, limit=limit, batch=batch, builtin=True)
