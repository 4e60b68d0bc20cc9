"""Native JSON lines: the lossless export. Import it into an empty database and export again,
and the file is byte for byte the same: rows in (source, pid) order, keys sorted, lists in
an order that does not depend on database ids.

What it carries is what the format documents: a problem, its labels, tags, samples,
solutions, aliases, its latest kit and its active suites. Older kit and suite versions,
verdicts and reviews are the history of this database, not part of the dataset.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from problems.exporters.bundles import Bundle, bundles, test_bodies


def _text_or_b64(key: str, data: bytes) -> dict[str, str]:
    try:
        return {key: data.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{key}_b64": base64.b64encode(data).decode("ascii")}


def native_row(bundle: Bundle) -> dict[str, Any]:
    p = bundle.problem
    kit = bundle.kit
    row: dict[str, Any] = {
        "source": p.source,
        "pid": p.pid,
        "title": p.title,
        "statement": p.statement,
        "platform": p.platform,
        "platform_id": p.platform_id,
        "url": p.url,
        "contest_date": p.contest_date.isoformat() if p.contest_date else None,
        "time_limit_ms": p.time_limit_ms,
        "memory_limit_mb": p.memory_limit_mb,
        "difficulty": [{"source": d.source, "level": d.level, "score": d.score} for d in bundle.labels],
        "tags": bundle.tags,
        "samples": p.samples,
        "comparison": p.comparison,
        "solutions": [
            {"role": s.role, "language": s.language, "code": s.code, "source": s.source,
             "reliability": s.reliability, "verdict": s.gold_verdict, "origin": s.origin, "name": s.name,
             "note": s.note}
            for s in bundle.solutions
        ],
        "kit": None,
        "suites": [
            {"origin": origin,
             # Outputs from one oracle that no second oracle confirmed (HARDTESTS_MIN_ORACLES=1).
             "unverified": bundle.suites[origin].unverified,
             # oracle_free suites: how their model-made outputs were checked; {} for oracle-checked ones
             "trust": bundle.suites[origin].trust,
             # a time-only test has no expected output: no "output" key, never an empty one
             "tests": [{**_text_or_b64("input", inp),
                        **({} if t.kind == "time_only" else _text_or_b64("output", out)),
                        "kind": t.kind, "generator": t.generator, "call_number": t.call_number,
                        **({"output_origin": t.output_origin} if t.output_origin else {})}
                       for t, (inp, out) in zip(tests, test_bodies(tests), strict=True)]}
            for origin, tests in ((o, bundle.tests.get(o, [])) for o in sorted(bundle.suites))
        ],
        "aliases": [{"source": a.source, "pid": a.pid, "url": a.url} for a in bundle.aliases],
        "extra": p.extra,
    }
    if kit is not None:
        judge = kit.output_judge.code if kit.output_judge else ""
        row["kit"] = {
            "input_validator": kit.validator.code if kit.validator else "",
            "needs_custom_output_judging_function": bool(kit.needs_output_judge and judge),
            "output_judging_function": judge,
            "LLMGen_input": kit.direct_inputs,
            "RPGen_SPGen_input_generator": kit.regular_generator,
            "HackGen_input_generator": kit.hacking_generator,
            "batch_generator": kit.batch_generator,
            "origin": kit.origin,
            "model": kit.model_name,
            "extra": kit.extra,
        }
    return row


def native_export(*, problems: Any, out: Path, limit: int | None = None) -> dict[str, Any]:
    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with out.open("w", encoding="utf-8", newline="\n") as handle:
        for bundle in bundles(problems, limit=limit):
            handle.write(json.dumps(native_row(bundle), ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    return {"problems": count, "files": [str(out)]}

