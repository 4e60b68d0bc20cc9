"""What every importer shares: the row errors, skips and the per-format counters."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any


class RowError(ValueError):
    """A dataset row that cannot be imported; the message says which field and why."""


class RowSkipped(Exception):  # noqa: N818 - a skip is an outcome, not an error
    """A well-formed row the project deliberately does not import (e.g. a call-based problem)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class FormatCounters:
    """Per-format facts for the summary (``python2_solutions``, ``call_based_skipped``...)."""

    counts: Counter[str] = field(default_factory=Counter)

    def add(self, key: str, n: int = 1) -> None:
        if n:
            self.counts[key] += n


@dataclass(frozen=True)
class SourceRow:
    """One raw row and where it came from, for ``file:row`` messages."""

    where: str
    data: dict[str, Any]


# A format turns the raw rows of its files into native rows (dicts in the project's own
# format, see native.py); everything after that is shared.
RowMapper = Callable[[dict[str, Any], FormatCounters], dict[str, Any]]
RowStream = Iterator[SourceRow]
