"""One way to write counts, times and names across pages.

- counts say what they count: "4/51 passed", never a bare "4/51" beside a verdict;
- times are a `<time>` element: relative text ("3 minutes ago"), the exact time on hover
  (static/js/app.js rewrites the hover text into the reader's own time zone);
- internal names (`validator_error`) read as words.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import template
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

# The run's count columns (generation.materialise.types.COUNT_KEYS) as a person reads them.
COUNT_LABELS = {
    "generated": ("Generated", "inputs the generators produced"),
    "failed": ("Generator failed", "calls that raised, timed out, ran out of memory or returned nothing"),
    "duplicate": ("Duplicates", "inputs dropped as equal to an earlier one"),
    "invalid": ("Rejected", "inputs the validator rejected"),
    "validator_error": ("Validator crashed", "inputs the validator crashed or timed out on"),
    "disagreement": ("Oracles disagree", "inputs whose oracle outputs did not agree"),
    "kept": ("Kept", "tests in the suite"),
}


@register.simple_tag
def passed_of(passed: int | None, total: int | None) -> str:
    """`4/51 passed`: the share of tests a program passed, said as such."""
    if passed is None or total is None:
        return ""
    return f"{passed}/{total} passed"


@register.filter
def count_label(name: str) -> str:
    label = COUNT_LABELS.get(name)
    return label[0] if label else str(name).replace("_", " ").capitalize()


@register.filter
def count_help(name: str) -> str:
    label = COUNT_LABELS.get(name)
    return label[1] if label else ""


def _as_datetime(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, str) and value:
        parsed = parse_datetime(value)
        if parsed is None:
            return None
        moment = parsed
    else:
        return None
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, dt.UTC)
    return moment


@register.filter
def when(value: Any) -> SafeString | str:
    """A moment as `<time datetime="..." title="2026-11-26 10:41 UTC">3 minutes ago</time>`."""
    moment = _as_datetime(value)
    if moment is None:
        return "" if value in (None, "") else str(value)
    utc = moment.astimezone(dt.UTC)
    return format_html('<time datetime="{}" title="{}" data-local>{}</time>', utc.isoformat(timespec="seconds"),
                       utc.strftime("%Y-%m-%d %H:%M UTC"), naturaltime(moment))
