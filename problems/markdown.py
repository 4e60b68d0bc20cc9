"""Problem statements: Markdown with $...$ math, rendered on the server and sanitised by nh3.

Math is not typeset here. The dollarmath plugin only keeps Markdown from mangling it
(underscores, asterisks), and we emit it as \\( ... \\) / \\[ ... \\] inside a span, escaped,
so KaTeX's auto-render (static/js/math.js) typesets it in the browser. The HTML that comes
out of markdown-it is then cleaned by nh3 with a small allow-list, because statements come
from datasets and are untrusted.
"""

from __future__ import annotations

from html import escape
from typing import Any

import nh3
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

_ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "b", "i", "u", "s", "sub", "sup", "code", "pre", "kbd",
    "blockquote", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "a", "img", "span", "div",
}
_ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "span": {"class"},
    "div": {"class"},
    "code": {"class"},
    "th": {"align"},
    "td": {"align"},
}
_MATH_CLASSES = {"math-inline", "math-block"}


def _math_inline(content: str, _options: Any) -> str:
    return f'<span class="math-inline">\\({escape(content, quote=False)}\\)</span>'


def _math_block(content: str, _options: Any) -> str:
    return f'<div class="math-block">\\[{escape(content.strip(), quote=False)}\\]</div>\n'


def _build() -> MarkdownIt:
    # "js-default" keeps raw HTML off: a statement's own <script> becomes text before nh3 even sees it.
    md = MarkdownIt("js-default", {"linkify": False, "typographer": False}).enable("table")
    dollarmath_plugin(
        md, allow_labels=False, allow_space=True, allow_digits=True, double_inline=True,
        renderer=_math_inline, label_renderer=None,
    )
    # dollarmath gives block math its own renderer hook only through the "display" flag, so
    # override the two render rules to keep inline and block output distinct.
    md.add_render_rule("math_inline", lambda self, tokens, idx, options, env: _math_inline(tokens[idx].content, options))
    md.add_render_rule(
        "math_inline_double", lambda self, tokens, idx, options, env: _math_block(tokens[idx].content, options)
    )
    md.add_render_rule("math_block", lambda self, tokens, idx, options, env: _math_block(tokens[idx].content, options))
    return md


_MD = _build()


def _attribute_filter(tag: str, attr: str, value: str) -> str | None:
    if attr == "class" and tag in ("span", "div"):
        kept = [c for c in value.split() if c in _MATH_CLASSES]
        return " ".join(kept) or None
    if attr == "class" and tag == "code":
        return value if value.startswith("language-") and value[9:].replace("-", "").isalnum() else None
    return value


def sanitise_html(html: str) -> str:
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        attribute_filter=_attribute_filter,
    )


def render_markdown(text: str, *, heading_shift: int = 2) -> str:
    """Markdown (with $math$) -> sanitised HTML, safe to mark safe in a template.

    Headings move down two levels: a statement's "# Title" sits under the page's own h1.
    """
    env: dict[str, Any] = {}
    tokens = _MD.parse(text or "", env)
    for token in tokens:
        if token.type in ("heading_open", "heading_close") and heading_shift:
            token.tag = f"h{min(6, int(token.tag[1]) + heading_shift)}"
    return sanitise_html(_MD.renderer.render(tokens, _MD.options, env))
