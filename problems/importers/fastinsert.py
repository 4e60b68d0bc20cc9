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

import operator
from collections.abc import Sequence
from typing import Any, cast

from django.db import connection, models
from django.utils import timezone

_PLAIN = (models.CharField, models.TextField, models.IntegerField, models.BooleanField, models.FloatField,
          models.ForeignKey)
_AUTO = ("AutoField", "BigAutoField", "SmallAutoField")


def fast_insert(model: type[models.Model], rows: Sequence[dict[str, Any] | models.Model], *,
                batch: int = 2000) -> None:
    if not rows:
        return
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and f.get_internal_type() in _AUTO)]
    names = [f.attname for f in fields]
    # A missing key takes the value the ORM would give it: the field's default, else "" for a
    # text field that may not be NULL (Field.get_default), else None. The value is serialised
    # at once, so one default object can serve every row.
    defaults = {f.attname: f.get_default() for f in fields}
    pick = operator.itemgetter(*names)
    stamps = [i for i, f in enumerate(fields) if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)]
    converted = [(i, f.get_db_prep_save) for i, f in enumerate(fields)
                 if i not in stamps and (not isinstance(f, _PLAIN) or isinstance(f, models.DateTimeField))]
    # concrete fields all have a column
    columns = ", ".join(connection.ops.quote_name(cast(str, f.column)) for f in fields)
    sql = (f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({columns}) "
           f"VALUES ({', '.join(['%s'] * len(fields))})")

    def row(item: dict[str, Any] | models.Model) -> tuple[Any, ...]:
        picked = pick({**defaults, **(item if isinstance(item, dict) else item.__dict__)})
        values: tuple[Any, ...] = (picked,) if len(names) == 1 else picked
        if not (stamps or converted):
            return values
        out = list(values)
        for i in stamps:
            out[i] = now
        for i, prep in converted:
            out[i] = prep(out[i], connection)
        return tuple(out)

    with connection.cursor() as cursor:
        for start in range(0, len(rows), batch):
            cursor.executemany(sql, [row(r) for r in rows[start : start + batch]])
