"""Inserting rows with one ``executemany``, for the import's largest tables.

``bulk_create`` builds a model instance per row and compiles one SQL statement per batch,
value by value; at 50,000 problems (hundreds of thousands of tests, solutions and blobs)
that is the largest share of an import's CPU. Here rows are plain dicts (or instances), the
statement is built once from the model's fields, and only fields that need conversion
(JSON, dates) go through Django's own ``get_db_prep_save``. A field missing from a row gets
the field's default, so a field another change adds to a model is still written. Primary
keys are not returned: callers that need them read them back by natural key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.db import connection, models
from django.utils import timezone

_PLAIN = (models.CharField, models.TextField, models.IntegerField, models.BooleanField, models.FloatField,
          models.ForeignKey)
_AUTO = ("AutoField", "BigAutoField", "SmallAutoField")


def _getter(field: models.Field, now: Any) -> Callable[[Any], Any]:
    name = field.attname
    timestamp = getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)
    if timestamp:
        return lambda row: now
    simple = isinstance(field, _PLAIN) and not isinstance(field, models.DateTimeField)
    if field.has_default():
        default = field.default
        fallback: Callable[[], Any] = default if callable(default) else (lambda: default)
    else:
        fallback = lambda: None  # noqa: E731 - NOT NULL without a value fails loudly in the database
    prep = field.get_db_prep_save

    def get(row: Any) -> Any:
        value = row.get(name, _MISSING) if isinstance(row, dict) else getattr(row, name)
        if value is _MISSING:
            value = fallback()
        return value if simple else prep(value, connection)

    return get


_MISSING = object()


def fast_insert(model: type[models.Model], rows: Sequence[dict[str, Any] | models.Model], *,
                batch: int = 2000) -> None:
    if not rows:
        return
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and f.get_internal_type() in _AUTO)]
    getters = [_getter(f, now) for f in fields]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    sql = (f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({columns}) "
           f"VALUES ({', '.join(['%s'] * len(fields))})")
    with connection.cursor() as cursor:
        for start in range(0, len(rows), batch):
            cursor.executemany(sql, [tuple(g(r) for g in getters) for r in rows[start : start + batch]])
