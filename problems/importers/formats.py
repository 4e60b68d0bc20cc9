"""What a dataset format is, and small helpers the row mappers share (registry.py lists them).

A format is a reader (how its files make rows; HardTests joins two files) and a mapper from
one raw row to a native row (see native.py). Mappers raise RowError for malformed rows and
RowSkipped for rows the project does not import.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from core import pysource
from problems.importers.base import FormatCounters, RowError
from problems.importers.sources import RawRow, RowFile


class Reader:
    """Rows of all files in order; `rows` may be called more than once."""

    def __init__(self, files: list[RowFile]) -> None:
        self.files = files

    def rows(self) -> Iterator[RawRow]:
        for f in self.files:
            yield from f.rows()

    def count(self) -> int | None:
        counts = [f.count() for f in self.files]
        return None if None in counts else sum(c for c in counts if c is not None)

    def notes(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class DatasetFormat:
    name: str
    description: str
    map_row: Callable[[dict[str, Any], FormatCounters], dict[str, Any]]
    reader: Callable[[list[RowFile]], Reader] = Reader


# --- helpers for mappers -------------------------------------------------------------------


def text(row: dict[str, Any], key: str, *, required: bool = False) -> str:
    value = row.get(key)
    if value is None:
        if required:
            raise RowError(f"missing required field {key!r}")
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise RowError(f"field {key!r} must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise RowError(f"field {key!r} is empty")
    return value


def json_field(row: dict[str, Any], key: str, *, default: Any = None) -> Any:
    """A field some copies of a dataset store as JSON text and others as structured data."""
    value = row.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise RowError(f"field {key!r} is not valid JSON ({exc})") from None
    return value


def literal_list(value: Any, key: str) -> list[str]:
    """TACO writes lists as Python literals (``"['Sorting', 'Greedy']"``); parsed, never evaluated."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        items = value
    elif isinstance(value, str):
        try:
            items = pysource.literal_eval(value)
        except (ValueError, SyntaxError):
            try:
                items = json.loads(value)
            except ValueError:
                raise RowError(f"field {key!r} is not a list literal: {value[:80]!r}") from None
    else:
        raise RowError(f"field {key!r} must be a list, got {type(value).__name__}")
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise RowError(f"field {key!r} must be a list of strings")
    return [i.strip() for i in items if i.strip()]


def iso_date(value: Any) -> str | None:
    """A contest date in ISO form, or None when the dataset's text is not a date."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()[:10]
    try:
        return dt.date.fromisoformat(str(value).strip()[:10]).isoformat()
    except ValueError:
        return None


def title_from(statement: str, fallback: str) -> str:
    first = next((line.strip() for line in statement.splitlines() if line.strip()), "")
    return first if 0 < len(first) <= 100 else fallback


def limit(parse: Callable[[object], int | None], value: object, key: str, default: int) -> int:
    try:
        parsed = parse(value)
    except ValueError as exc:
        raise RowError(f"field {key!r}: {exc}") from None
    return default if parsed is None else parsed
