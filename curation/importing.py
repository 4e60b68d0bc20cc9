"""Reading a file of sampled completions (JSON lines or parquet) into checked rows.

Every row is checked before anything is written: a file with one bad row is refused whole,
with every bad row named (up to a limit), so a half-imported job never exists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from hardtests_client.extract import extract_code, language_name
from problems.models import SUPPORTED_LANGUAGES, Problem, TestSuite

MAX_COMPLETION_CHARS = 1_000_000
MAX_ERRORS_SHOWN = 20
_GOLD = {"correct": "correct", "ac": "correct", "true": "correct", "1": "correct", "pass": "correct",
         "incorrect": "incorrect", "wrong": "incorrect", "wa": "incorrect", "false": "incorrect", "0": "incorrect",
         "fail": "incorrect"}


class CurationImportError(ValueError):
    """The file cannot be imported; the message names every bad row (up to MAX_ERRORS_SHOWN)."""


class Row(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)

    problem_id: str = Field(validation_alias=AliasChoices("problem_id", "problem", "pid"), min_length=1)
    completion: str | None = Field(default=None, validation_alias=AliasChoices("completion", "response"),
                                   max_length=MAX_COMPLETION_CHARS)
    code: str | None = Field(default=None, max_length=MAX_COMPLETION_CHARS)
    language: str | None = Field(default=None, validation_alias=AliasChoices("language", "lang"))
    model: str = Field(default="", validation_alias=AliasChoices("model", "model_name"), max_length=200)
    sample_index: int | None = Field(default=None, validation_alias=AliasChoices("sample_index", "sample"), ge=0)
    gold: str | None = Field(default=None, validation_alias=AliasChoices("gold", "correct", "label"))

    @field_validator("problem_id", mode="before")
    @classmethod
    def _pid_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("gold", mode="before")
    @classmethod
    def _gold(cls, value: Any) -> Any:
        if value is None or value == "":
            return None
        key = str(value).strip().lower()
        if key not in _GOLD:
            raise ValueError(f"gold label {value!r} is neither correct nor incorrect")
        return _GOLD[key]


@dataclass(frozen=True)
class CheckedRow:
    problem: Problem
    model: str
    sample_index: int
    language: str
    completion: str
    code: str
    extract_kind: str
    gold: str


def read_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """(line or row number, raw row) of a .jsonl / .json lines or .parquet file."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
            raise CurationImportError(f"{path.name}: not a readable parquet file ({exc})") from exc
        yield from enumerate(table.to_pylist(), 1)
        return
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                yield number, _Unreadable(str(exc))


@dataclass(frozen=True)
class _Unreadable:
    reason: str


class _Problems:
    """Problem references (pid, or source:pid) resolved once each; None with a reason when unusable."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self._seen: dict[str, tuple[Problem | None, str]] = {}

    def get(self, ref: str) -> tuple[Problem | None, str]:
        if ref not in self._seen:
            self._seen[ref] = self._resolve(ref)
        return self._seen[ref]

    def _resolve(self, ref: str) -> tuple[Problem | None, str]:
        matches = list(Problem.objects.filter(pid=ref)[:3])
        if not matches and ":" in ref:
            source, pid = ref.split(":", 1)
            matches = list(Problem.objects.filter(source=source, pid=pid)[:1])
        if not matches:
            return None, f"no problem {ref!r}"
        if len(matches) > 1:
            return None, f"pid {ref!r} names problems in several sources; use source:pid"
        problem = matches[0]
        active = problem.suites.filter(status=TestSuite.Status.ACTIVE)
        if self.origin:
            active = active.filter(origin=self.origin)
        if not active.exists():
            which = f"no active {self.origin} suite" if self.origin else "no active suite"
            return None, f"problem {ref!r} has {which}"
        return problem, ""


def rows_check(raw_rows: Iterable[tuple[int, Any]], *, origin: str = "") -> list[CheckedRow]:
    """Every row checked and its code extracted; CurationImportError naming the bad rows."""
    errors: list[str] = []
    checked: list[CheckedRow] = []
    problems = _Problems(origin)
    seen: dict[tuple[int, str, int], int] = {}
    next_index: dict[tuple[int, str], int] = {}
    count = 0
    for number, raw in raw_rows:
        count += 1
        if isinstance(raw, _Unreadable):
            errors.append(f"row {number}: not JSON ({raw.reason})")
            continue
        if not isinstance(raw, dict):
            errors.append(f"row {number}: not a JSON object")
            continue
        try:
            row = Row.model_validate(raw)
        except ValidationError as exc:
            detail = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'row'}: {e['msg']}" for e in exc.errors())
            errors.append(f"row {number}: {detail}")
            continue
        if (row.completion is None) == (row.code is None):
            errors.append(f"row {number}: give exactly one of completion and code")
            continue
        problem, why = problems.get(row.problem_id)
        if problem is None:
            errors.append(f"row {number}: {why}")
            continue
        wanted = language_name(row.language) if row.language else None
        if row.language and wanted is None:
            errors.append(f"row {number}: unsupported language {row.language!r}")
            continue
        if row.completion is not None:
            # The one shared extractor (server and client agree on what a completion's program is).
            found = extract_code(row.completion, language=wanted)
            code, kind, language = found.code, found.kind, wanted or found.language
        else:
            code, kind, language = row.code or "", "given" if (row.code or "").strip() else "empty", wanted
        if language is None and kind != "empty":
            if row.completion is None:
                errors.append(f"row {number}: no language (give `language`, or label the code's fence)")
                continue
            # A model's answer whose program names no language cannot be run: a failed sample
            # (it passes nothing), not a bad row.
            kind = "no_language"
        if language is not None and language not in SUPPORTED_LANGUAGES:
            errors.append(f"row {number}: unsupported language {language!r}")
            continue
        key = (problem.pk, row.model)
        index = row.sample_index if row.sample_index is not None else next_index.get(key, 0)
        next_index[key] = max(next_index.get(key, 0), index + 1)
        unique = (problem.pk, row.model, index)
        if unique in seen:
            errors.append(f"row {number}: the same problem, model and sample_index as row {seen[unique]}")
            continue
        seen[unique] = number
        checked.append(CheckedRow(problem, row.model, index, language or "", row.completion or "", code, kind,
                                  row.gold or ""))
    if errors:
        shown = errors[:MAX_ERRORS_SHOWN]
        more = f" (and {len(errors) - len(shown)} more)" if len(errors) > len(shown) else ""
        raise CurationImportError(f"{len(errors)} bad row(s) of {count}{more}:\n" + "\n".join(shown))
    if not checked:
        raise CurationImportError("the file holds no rows")
    return checked
