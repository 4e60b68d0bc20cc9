"""Hand-written SELECTs on the hot path, turned into model instances as the ORM would.

The ORM spends most of a small query building and compiling it (about 0.3-0.7 ms each on
this machine, more when the process has been idle); the verification API's per-request
lookups are written once as SQL instead, and their rows become instances through the
fields' own converters (aware datetimes, JSON, booleans), exactly as a queryset's would.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from django.db import connection
from django.db.models import Model

M = TypeVar("M", bound=Model)
T = TypeVar("T")


class ModelColumns(Generic[M]):
    """Some columns of a model in a SELECT (under a table alias), and how a row of them becomes
    an instance: with the ORM's converters; fields not selected are deferred (loaded on access)."""

    def __init__(self, model: type[M], alias: str, names: tuple[str, ...] | None = None) -> None:
        fields = [f for f in model._meta.concrete_fields if names is None or f.attname in names]
        self.model = model
        self.names = [f.attname for f in fields]
        # concrete fields always have a column (only non-concrete ones have None)
        self.sql = ", ".join(f"{alias}.{connection.ops.quote_name(str(f.column))}" for f in fields)
        self._converters = []
        for index, field in enumerate(fields):
            column = field.get_col(alias)
            found = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
            if found:
                self._converters.append((index, column, found))

    def __len__(self) -> int:
        return len(self.names)

    def build(self, values: tuple[Any, ...] | list[Any]) -> M:
        values = list(values)
        for index, column, converters in self._converters:
            for convert in converters:
                values[index] = convert(values[index], column, connection)
        return self.model.from_db(connection.alias, self.names, values)


def fetch_all(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows


_built = threading.local()


def per_vendor(name: str, build: Callable[[], T]) -> T:
    """`build()` once per thread and database vendor: quoting and converters differ between
    vendors, and the converters belong to the thread's own connection. A name is made by one
    `build` only (the value cached under it is of that type)."""
    made: dict[tuple[str, str], Any] | None = getattr(_built, "made", None)
    if made is None:
        made = _built.made = {}
    key = (name, connection.vendor)
    if key not in made:
        made[key] = build()
    value: T = made[key]  # what this name's one `build` made
    return value
