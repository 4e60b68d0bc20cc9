"""TACO: rows of ``BAAI/TACO``.

Every field is text: ``input_output`` and ``solutions`` are JSON, tag lists are Python
literals. Problems judged by calling a function (``fn_name`` in ``input_output``, or starter
code) are skipped and counted: the project judges programs through stdin/stdout. TACO has no
problem id, so the URL (or, without one, a hash of the statement) is the pid, which keeps
re-imports idempotent.
"""

from __future__ import annotations

import datetime
import hashlib
from typing import Any

from problems.importers.base import FormatCounters, RowError, RowSkipped
from problems.importers.formats import (
    DatasetFormat,
    iso_date,
    json_field,
    limit,
    literal_list,
    text,
    title_from,
)
from problems.importers.identity import (
    memory_limit_mb,
    platform_id_from_url,
    platform_normalise,
    time_limit_ms,
    url_normalise,
)
from problems.importers.languages import RANK_TACO, language_from_label
from problems.models import DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIME_LIMIT_MS

SOURCE = "taco"
CALL_BASED = "call-based problem (fn_name or starter code)"


def _io(value: Any, where: str) -> str:
    # APPS-style data sometimes stores an output as its list of lines.
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value) + "\n"
    if not isinstance(value, str):
        raise RowError(f"{where} must be a string, got {type(value).__name__}")
    return value


def _plain(value: Any) -> Any:
    # Rows read through Hugging Face datasets carry datetime objects (``date``); extra is JSON.
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return value


def taco_map(row: dict[str, Any], counters: FormatCounters) -> dict[str, Any]:
    statement = text(row, "question", required=True)
    io = json_field(row, "input_output", default={})
    if not isinstance(io, dict):
        raise RowError("field 'input_output' must be a JSON object with 'inputs' and 'outputs'")
    if io.get("fn_name") or text(row, "starter_code").strip():
        counters.add("call_based_skipped")
        raise RowSkipped(CALL_BASED)
    inputs, outputs = io.get("inputs") or [], io.get("outputs") or []
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise RowError("input_output.inputs and input_output.outputs must be lists")
    if len(inputs) != len(outputs):
        raise RowError(f"input_output has {len(inputs)} inputs but {len(outputs)} outputs")
    tests = [
        {"input": _io(i, f"input_output.inputs[{n}]"), "output": _io(o, f"input_output.outputs[{n}]"),
         "kind": "imported"}
        for n, (i, o) in enumerate(zip(inputs, outputs, strict=True))
    ]
    codes = json_field(row, "solutions", default=[])
    if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
        raise RowError("field 'solutions' must be a JSON list of strings")
    solutions = []
    for code in codes:
        if not code.strip():
            continue
        # TACO's solutions are Python, some of it Python 2: kept, marked unsupported.
        language = language_from_label("python", code)
        counters.add(f"solutions_{language}")
        solutions.append({"role": "oracle", "language": language, "code": code, "source": SOURCE,
                          "reliability": RANK_TACO, "verdict": "AC"})
    url = text(row, "url")
    explicit = text(row, "id") or text(row, "pid") or text(row, "task_id")
    pid = explicit or (url_normalise(url) if url else "sha256:" + hashlib.sha256(statement.encode()).hexdigest()[:32])
    level = text(row, "difficulty")
    tags = sorted({t[:100] for t in literal_list(row.get("tags"), "tags") + literal_list(row.get("skill_types"),
                                                                                         "skill_types")})
    extra = {k: _plain(row[k]) for k in ("raw_tags", "Expected Auxiliary Space", "Expected Time Complexity", "picture_num",
                                 "date", "time_limit", "memory_limit") if row.get(k) not in (None, "", "None")}
    return {
        "source": SOURCE, "pid": pid[:200], "title": (text(row, "name") or title_from(statement, pid))[:500],
        "statement": statement, "platform": platform_normalise(text(row, "source")),
        "platform_id": platform_id_from_url(url), "url": url, "contest_date": iso_date(row.get("date")),
        "time_limit_ms": limit(time_limit_ms, row.get("time_limit"), "time_limit", DEFAULT_TIME_LIMIT_MS),
        "memory_limit_mb": limit(memory_limit_mb, row.get("memory_limit"), "memory_limit", DEFAULT_MEMORY_LIMIT_MB),
        "difficulty": [{"source": SOURCE, "level": level}] if level and level != "UNKNOWN_DIFFICULTY" else [],
        "tags": tags, "solutions": solutions,
        "suites": [{"origin": "imported", "tests": tests}] if tests else [],
        "extra": {SOURCE: extra} if extra else {},
    }


FORMAT = DatasetFormat(name="taco", description="BAAI/TACO rows", map_row=taco_map)
