"""One way to write counts, times and names across pages.

- counts say what they count: "4/51 passed", never a bare "4/51" beside a verdict;
- times are a `<time>` element: relative text ("3 minutes ago"), the exact time on hover
  (static/js/app.js rewrites the hover text into the reader's own time zone);
- internal names (`validator_error`) read as words.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django import template
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import escape, format_html
from django.utils.safestring import SafeData, SafeString, mark_safe

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


# Nouns that services and workers write as "N noun(s)" into logs, notes and messages. Rewritten
# for display (stored logs keep what was written); a closed list, so code such as `len(s)` in a
# traceback is never touched.
_PLURAL_NOUNS = ("attempt", "call", "candidate", "completion", "error", "generator", "input", "item", "job", "key",
                 "label", "oracle", "origin", "output", "pid", "problem", "program", "role", "round", "row", "run",
                 "sample", "suite", "task", "test", "token")
_NOUN = "|".join(_PLURAL_NOUNS)
_COUNTED = re.compile(r"(?<![\w.:])(\d+)((?:[ \t]+[A-Za-z][\w/'-]*){0,3}?[ \t]+)(" + _NOUN + r")\(s\)")
_UNCOUNTED = re.compile(r"\b(" + _NOUN + r")\(s\)")


def plural_text(text: str) -> str:
    """`4 candidate(s)` -> `4 candidates`, `1 sample/official test(s)` -> `1 sample/official test`;
    an uncounted `input(s) #3, #4` -> `inputs #3, #4`."""
    text = _COUNTED.sub(lambda m: f"{m[1]}{m[2]}{m[3]}{'' if m[1] == '1' else 's'}", text)
    return _UNCOUNTED.sub(lambda m: f"{m[1]}s", text)


@register.filter(is_safe=True)
def plurals(value: Any) -> Any:
    """Words written with "(s)" read as the count says (escaping is kept: a safe string stays safe)."""
    if value is None:
        return value
    fixed = plural_text(str(value))
    return mark_safe(fixed) if isinstance(value, SafeData) else fixed  # noqa: S308 - only "(s)" changed


_STAMP = re.compile(r"^(\d\d):(\d\d):(\d\d) ")


@register.filter
def log_lines(value: Any, started: Any = None) -> SafeString:
    """A run's log, escaped, with each line's UTC clock stamp (`06:42:29 `, written by the
    recorder) as a `<time>` the page shows in the reader's time zone, and "(s)" words read right.

    The stamps carry no date: it comes from the run's start, a day added whenever the clock goes
    back (a run across midnight)."""
    text = plural_text("" if value is None else str(value))
    start = _as_datetime(started)
    day = (start or timezone.now()).astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    previous = start.astimezone(dt.UTC) - dt.timedelta(minutes=1) if start else None
    out = []
    for line in text.splitlines(keepends=True):
        stamp = _STAMP.match(line)
        if not stamp:
            out.append(escape(line))
            continue
        moment = day.replace(hour=int(stamp[1]), minute=int(stamp[2]), second=int(stamp[3]))
        if previous is not None and moment < previous - dt.timedelta(minutes=1):
            day += dt.timedelta(days=1)
            moment += dt.timedelta(days=1)
        previous = moment
        out.append(format_html('<time datetime="{}" title="{}" data-local data-clock>{} UTC</time> {}',
                               moment.isoformat(timespec="seconds"), moment.strftime("%Y-%m-%d %H:%M:%S UTC"),
                               moment.strftime("%H:%M:%S"), line[stamp.end():]))
    return mark_safe("".join(out))  # noqa: S308 - every part escaped above


_NO_MATCH = re.compile(r"^No (\w[\w ]*) matches the given query\.?$")


@register.filter
def not_found_reason(value: Any) -> str:
    """A 404's reason as a sentence part: Django's "No Problem matches the given query." reads as
    "no such problem"; a view's own reason loses its final stop (the page adds one)."""
    text = str(value).strip()
    if match := _NO_MATCH.match(text):
        return f"no such {match[1].lower()}"
    return text.rstrip(".")


@register.filter
def words(value: Any) -> str:
    """An internal name a person reads (`oracle_free`, `validator_error`) as words."""
    return str(value).replace("_", " ") if value is not None else ""
