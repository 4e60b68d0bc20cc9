from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@register.filter
def cell(value: Any) -> str:
    """A table cell: shares and rates with three decimals, undefined as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) or abs(value) < 10 else f"{value:g}"
    return str(value)
