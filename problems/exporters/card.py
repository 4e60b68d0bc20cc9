"""Dataset cards: a README.md beside an export, as the Hugging Face Hub reads it.

The YAML header declares the licence, the data files (so ``load_dataset(folder)`` and the
Hub find the split) and the features, written from the export's own arrow schema, so a
loader never has to guess a type. The body says what the rows are, how many there are and
how they were made.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

DEFAULT_LICENSE = "other"

_DTYPES = {pa.string(): "string", pa.int64(): "int64", pa.int32(): "int32", pa.bool_(): "bool",
           pa.float64(): "float64", pa.float32(): "float32"}

_ABOUT = {
    "training": "One row per problem with its statement, limits, tests (input, output) of the best active suite "
                "and the output judging function where one is needed: what an RL verifier needs.",
    "verl": "verl's RL data layout: `prompt` is the chat message asking for a solution, "
            "`reward_model.ground_truth` is the problem's id (`source:pid`) for the hardtests_web reward "
            "(`hardtests_client.verl.compute_score`), `extra_info` holds the limits and the problem id.",
    "verl-sandbox-fusion": "verl's RL data layout for verl's built-in `sandbox_fusion` reward: `data_source` is "
                           "`codecontests`, `reward_model.ground_truth` is the JSON test cases "
                           "(`inputs`, `outputs`) plus the problem's id (`problem`). verl's built-in reward gives "
                           "the pass rate of the first 10 tests (continuous) and compares stdout exactly; "
                           "hardtests_client.verl.compute_score reads the same rows and gives 1.0 only when every "
                           "test passes. Problems that need an output judging function are left out.",
    "hardtests": "The two tables of HardTests (`sigcp/hardtests_problems`, `sigcp/hardtests_tests`): problems "
                 "with their oracle programs, and test-case kits with the materialised tests.",
    "native": "hardtests_web's lossless JSON lines: problems, labels, samples, solutions, kits and active suites.",
}


def _dtype(kind: pa.DataType) -> str:
    if kind in _DTYPES:
        return _DTYPES[kind]
    raise ValueError(f"no Hugging Face dtype for arrow type {kind}")


def _feature_lines(name: str | None, kind: pa.DataType, indent: int) -> list[str]:
    """One feature in the YAML of ``datasets.Features._to_yaml_list`` (datasets 4)."""
    pad = " " * indent
    head = f"{pad}- name: {name}" if name is not None else None
    lines = [head] if head else []
    inner = indent + 2 if head else indent
    ipad = " " * inner
    if pa.types.is_struct(kind):
        lines.append(f"{ipad}struct:")
        for field in kind:
            lines += _feature_lines(field.name, field.type, inner)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        value = kind.value_type
        if pa.types.is_struct(value):
            lines.append(f"{ipad}list:")
            for field in value:
                lines += _feature_lines(field.name, field.type, inner)
        elif pa.types.is_list(value):
            lines.append(f"{ipad}list:")
            lines += [line for line in _feature_lines(None, value, inner + 2)]
        else:
            lines.append(f"{ipad}list: {_dtype(value)}")
    else:
        lines.append(f"{ipad}dtype: {_dtype(kind)}")
    return lines


def features_yaml(schema: pa.Schema, indent: int = 2) -> list[str]:
    lines = []
    for field in schema:
        lines += _feature_lines(field.name, field.type, indent)
    return lines


def card_text(*, kind: str, configs: list[dict[str, Any]], counts: dict[str, Any], license: str = DEFAULT_LICENSE,
              extra_files: list[str] | None = None) -> str:
    """configs: [{"name", "files" (parquet paths), "schema", "rows"}]; the first is the default."""
    y: list[str] = ["---", f"license: {license}", "pretty_name: " + json.dumps(f"hardtests_web {kind} export"),
                    "tags:", "- code", "- competitive-programming", "task_categories:", "- text-generation",
                    "configs:"]
    for config in configs:
        y.append(f"- config_name: {config['name']}")
        if config is configs[0]:
            y.append("  default: true")
        y += ["  data_files:", "  - split: train", "    path:"] + [f"    - {json.dumps(f)}" for f in config["files"]]
    y.append("dataset_info:")
    for config in configs:
        y += [f"- config_name: {config['name']}", "  features:"] + features_yaml(config["schema"], 2)
        y += ["  splits:", "  - name: train", f"    num_bytes: {config.get('num_bytes', 0)}",
              f"    num_examples: {config['rows']}"]
        y += [f"  download_size: {config.get('download_size', 0)}", f"  dataset_size: {config.get('num_bytes', 0)}"]
    y.append("---")
    made = datetime.now(UTC).strftime("%Y-%m-%d")
    body = [
        "", f"# hardtests_web {kind} export", "", _ABOUT.get(kind, ""), "",
        "## Counts", "", "| | |", "|---|---|",
        *[f"| {key} | {value} |" for key, value in counts.items() if isinstance(value, int | float)],
        "", "## Files", "",
        *[f"- `{f}` ({config['name']})" for config in configs for f in config["files"]],
        *[f"- `{f}` (the same rows as JSON lines)" for f in extra_files or []],
        "", "## Schema", "",
        "Declared in the YAML header above (features), one entry per column; every row has every column.",
        "", "## How it was made", "",
        f"Exported on {made} by `manage.py export_dataset {kind}` of hardtests_web, which makes and checks test "
        "suites with the HardTestGen method: an LLM writes an input validator, an output judging function where "
        "needed, and input generators (direct, regular/stratified, hacking); the generators run in a sandbox, the "
        "validator keeps valid inputs, and outputs come from human-written oracle programs that agree on at least "
        "90% of inputs. Suites are reviewed and evaluated against programs with known verdicts.",
        "", "## Licence", "",
        f"`{license}`. The problems come from public datasets and judges whose own terms apply to their "
        "statements and programs; check each `source` before redistributing.", "",
    ]
    return "\n".join(y + body)


def _uncompressed_bytes(path: Path) -> int:
    if path.suffix != ".parquet":
        return path.stat().st_size
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def card_write(out: Path, *, kind: str, schema: pa.Schema, files: list[str], counts: dict[str, Any],
               license: str = DEFAULT_LICENSE, extra_files: list[str] | None = None,
               configs: list[dict[str, Any]] | None = None) -> Path:
    rows = int(counts.get("problems", 0))
    configs = configs or [{"name": "default", "files": files, "schema": schema, "rows": rows}]
    for config in configs:
        config.setdefault("num_bytes", 0)
        config.setdefault("download_size", 0)
        for name in config["files"]:
            if (out / name).is_file():
                # num_bytes: the rows' uncompressed size, as datasets records it; download: the files.
                config["download_size"] += (out / name).stat().st_size
                config["num_bytes"] += _uncompressed_bytes(out / name)
    path = out / "README.md"
    path.write_text(card_text(kind=kind, configs=configs, counts=counts, license=license, extra_files=extra_files),
                    encoding="utf-8")
    return path
