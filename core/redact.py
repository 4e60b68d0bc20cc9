"""Hiding API tokens in text that leaves the process (logs, error answers): plain Python, so
settings (logging filters) and every app can use it before Django is set up."""

from __future__ import annotations

import re

# A path segment after /t/ (any case, the last segment too: a mistyped URL is logged as a 404),
# and a token of ours anywhere (a query string, a header, a client's error text).
_TOKEN_IN_PATH = re.compile(r"(/t/+)[^/\s\"'?#&]+", re.I)
_TOKEN = re.compile(r"htk_[0-9a-f]{12}_[A-Za-z0-9_\-]+")


def token_marked(text: str) -> bool:
    """Whether ``text`` may hold a token (a cheap test before ``redact``)."""
    return "/t/" in text or "/T/" in text or "htk_" in text


def redact(text: str) -> str:
    """``text`` with every API token replaced by ``<redacted>``."""
    return _TOKEN.sub("htk_<redacted>", _TOKEN_IN_PATH.sub(r"\1<redacted>", text))
