"""Template helpers: highlighted code, sanitised Markdown, verdict styles, compact sizes.

The two filters that return safe strings only ever return Pygments output (which escapes
the code it is given) or nh3-sanitised HTML; untrusted text never reaches mark_safe raw.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from django import template
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CppLexer, JavaLexer, PythonLexer, TextLexer

from problems.markdown import render_markdown
from problems.selectors import verdict_style

register = template.Library()

_LEXERS = {"python3": PythonLexer, "python": PythonLexer, "python2": PythonLexer, "cpp": CppLexer, "java": JavaLexer}
_FORMATTER = HtmlFormatter(cssclass="highlight", wrapcode=True)
MAX_HIGHLIGHT_CHARS = 300_000


@lru_cache(maxsize=512)
def _highlighted(digest: str, code: str, language: str) -> str:
    lexer = _LEXERS.get(language, TextLexer)()
    return pygments_highlight(code, lexer, _FORMATTER)


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
def get_item(mapping: dict, key: object) -> object:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def seconds(value: float | int | None) -> str:
    if value is None:
        return ""
    value = float(value)
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s" if value < 120 else f"{value / 60:.1f} min"
