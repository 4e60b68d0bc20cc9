"""The native format in the registry: its rows already are native rows."""

from __future__ import annotations

from typing import Any

from problems.importers.base import FormatCounters
from problems.importers.formats import DatasetFormat


def native_map(row: dict[str, Any], counters: FormatCounters) -> dict[str, Any]:
    return row


FORMAT = DatasetFormat(name="native", description="the project's own JSON lines (README)", map_row=native_map)
