"""Filters and columns that apps above `problems` add to the problems list.

The dependency direction is review -> generation -> problems, so the list cannot import
the review models to filter by review status. Instead an app registers a ListExtension in
its AppConfig.ready(); the filter form grows a field for it, the list selector applies it,
and the table shows its column. Each extension costs one query per page for its column.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet


@dataclass(frozen=True)
class Cell:
    text: str
    # One of the stylesheet's badge tones (st-succeeded, st-failed, st-running, ...) or "" for plain muted text.
    tone: str = ""
    title: str = ""


@dataclass(frozen=True)
class ListExtension:
    # The URL parameter and form field name; must not clash with the list's own fields.
    name: str
    label: str
    # (value, label) pairs; the first should be ("", "Any ...").
    choices: list[tuple[str, str]]
    # Narrows a Problem queryset to the value; called only with a value from `choices`.
    apply: Callable[[QuerySet[Any], str], QuerySet[Any]]
    # Column heading and cells for the problem ids of one page (one query); None: no column.
    column: str | None = None
    cells: Callable[[list[int]], dict[int, Cell]] | None = None


_registry: dict[str, ListExtension] = {}


def list_extension_register(extension: ListExtension) -> None:
    """Idempotent: ready() may run more than once in tests."""
    _registry[extension.name] = extension


def list_extensions() -> list[ListExtension]:
    return list(_registry.values())
