"""Template helpers: highlighted code, sanitised Markdown, verdict styles, compact sizes.

The two filters that return safe strings only ever return Pygments output (which escapes
the code it is given) or nh3-sanitised HTML; untrusted text never reaches mark_safe raw.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from html import escape as html_escape
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CLexer, CppLexer, JavaLexer, PythonLexer, TextLexer

from problems.markdown import render_markdown
from problems.selectors import verdict_style

register = template.Library()

_LEXERS = {"python3": PythonLexer, "python": PythonLexer, "python2": PythonLexer, "cpp": CppLexer, "java": JavaLexer,
           "c": CLexer}
_FORMATTER = HtmlFormatter(cssclass="highlight", wrapcode=True)
MAX_HIGHLIGHT_CHARS = 300_000


@lru_cache(maxsize=512)
def _highlighted(digest: str, code: str, language: str) -> str:
    lexer = _LEXERS.get(language, TextLexer)()
    html: str = pygments_highlight(code, lexer, _FORMATTER)
    return html


@register.filter
def highlight(code: str | None, language: str = "python3") -> SafeString:
    """Pygments HTML (token classes, styled by static/css/pygments.css) of escaped code."""
    code = code or ""
    if len(code) > MAX_HIGHLIGHT_CHARS:
        # Too big to colour usefully; still escaped by the plain-text lexer.
        language = "text"
    digest = hashlib.sha256(code.encode()).hexdigest()
    return mark_safe(_highlighted(digest, code, language))  # noqa: S308 - Pygments escapes its input


@register.filter
def markdown(text: str | None) -> SafeString:
    return mark_safe(render_markdown(text or ""))  # noqa: S308 - nh3-sanitised


@register.filter
def verdict_css(verdict: str | None) -> str:
    return verdict_style(verdict)[0]


@register.filter
def verdict_glyph(verdict: str | None) -> str:
    return verdict_style(verdict)[1]


@register.filter
def kb(value: int | None) -> str:
    """Memory in KiB -> a short human figure."""
    if value is None:
        return ""
    if value < 1024:
        return f"{value} K"
    return f"{value / 1024:.1f} M" if value < 100 * 1024 else f"{value // 1024} M"


@register.filter
def get_item(mapping: dict[Any, Any], key: object) -> object:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def seconds(value: float | int | None) -> str:
    if value is None:
        return ""
    value = float(value)
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s" if value < 120 else f"{value / 60:.1f} min"


@register.simple_tag
def select_field(field: Any) -> SafeString:
    """A <select> for a bound ChoiceField, built in Python.

    Django renders every <option> through a widget template, which costs milliseconds for a
    list of hundreds of tags or difficulty levels; this is the same HTML (escaped through
    format_html) in a fraction of the time.
    """
    value = field.value()
    selected = "" if value is None else str(value)

    def options(choices: Any) -> str:
        out = []
        for key, label in choices:
            if isinstance(label, (list, tuple)):
                out.append(format_html('<optgroup label="{}">{}</optgroup>', key, mark_safe(options(label))))  # noqa: S308
            else:
                out.append(format_html('<option value="{}"{}>{}</option>', key,
                                       mark_safe(" selected") if str(key) == selected else "", label))  # noqa: S308
        return "".join(out)

    return format_html('<select name="{}" id="{}" aria-label="{}">{}</select>', field.html_name, field.auto_id,
                       field.label, mark_safe(options(field.field.choices)))  # noqa: S308 - built by format_html


_CELL_EMPTY = '<td class="cell v-none">·</td>'


@register.simple_tag
def matrix_body(matrix: Any, problem_id: int) -> SafeString:
    """The verdict matrix's <tbody> rows, built in Python: a 100 x 30 table is 3,000 cells,
    too many for the template engine (or format_html) within the page's time budget.

    css and glyph come from selectors.VERDICT_STYLE (constants); the verdict and kind strings
    come from stored rows and are escaped; times, memory and ids are formatted integers.
    Each judged cell links to its detail (input, outputs, diff), which htmx opens in the side panel.
    """
    base = f"/problems/{int(problem_id)}/verdicts/{int(matrix.suite.pk)}/"
    solution_ids = [int(c.solution.pk) for c in matrix.columns]
    rows = []
    for ordinal, kind, label, cells, row_contradicts in matrix.rows:
        kind_html = html_escape(kind)
        mark = ' class="contradicts"' if row_contradicts else ""
        flag = ' <span class="gold-flag" title="a program known to be correct fails this test">≠ gold</span>' \
            if row_contradicts else ""
        parts = [f'<tr{mark}><th scope="row" class="test-head"><span class="num">{int(ordinal) + 1}</span> '
                 f'<span class="kind kind-{kind_html}">{html_escape(label)}</span>{flag}</th>']
        for solution_id, cell in zip(solution_ids, cells, strict=True):
            if cell is None:
                parts.append(_CELL_EMPTY)
                continue
            css, glyph, verdict, time_ms, memory_kb, contradicts = cell
            ms = int(time_ms) if isinstance(time_ms, (int, float)) else ""
            mem = kb(int(memory_kb)) if isinstance(memory_kb, (int, float)) else ""
            url = f"{base}{solution_id}/{int(ordinal)}/"
            extra = " contradicts" if contradicts else ""
            parts.append(f'<td class="cell {css}{extra}"><a href="{url}" hx-get="{url}" hx-target="#cell-detail" '
                         f'hx-swap="innerHTML"><b>{glyph}</b> {html_escape(verdict)}<small>{ms} ms · {mem}</small></a></td>')
        parts.append("</tr>")
        rows.append("".join(parts))
    return mark_safe("".join(rows))  # noqa: S308 - constants, integers and html.escape'd strings only


@register.filter
def samples_missing_from_statement(problem: Any) -> bool:
    """Whether the statement lacks some sample's input (most statements print their samples;
    showing them again under it is noise)."""
    statement = " ".join((problem.statement or "").split())
    for sample in problem.samples or []:
        text = sample.get("input") if isinstance(sample, dict) else None
        if isinstance(text, str) and text.strip() and " ".join(text.split()) not in statement:
            return True
    return False


@register.filter
def solution_gaps(problem: Any) -> list[str]:
    """What the problem lacks for an oracle-checked suite and for measuring one (shown on its page)."""
    from problems.models import SUPPORTED_LANGUAGES, Solution

    oracle, gold = getattr(problem, "has_usable_oracle", None), getattr(problem, "has_gold_candidate", None)
    if oracle is None or gold is None:  # not annotated by problems.selectors.problem_get
        rows = list(problem.solutions.values_list("role", "language", "gold_verdict"))
        oracle = any(role == Solution.Role.ORACLE and lang in SUPPORTED_LANGUAGES for role, lang, _ in rows)
        gold = any(role == Solution.Role.CANDIDATE and g != Solution.GoldVerdict.UNKNOWN for role, _, g in rows)
    gaps = []
    if not oracle:
        gaps.append("no oracle (human solution) in a supported language: an oracle-checked suite cannot be made")
    if not gold:
        gaps.append("no candidate with a known verdict: suites of this problem cannot be measured")
    if not problem.samples:
        gaps.append("no sample tests: an LLM brute force cannot be checked against the statement")
    return gaps


@register.simple_tag
def page_link(name: str, *args: Any) -> str:
    """The address of a page another app owns (problems.page_links), or "" without that app."""
    from problems.page_links import page_link as build

    return build(name, *args)
