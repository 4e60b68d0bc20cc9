"""A logging filter that hides API tokens sent in URL paths (``.../t/<token>/...``).

Header-less clients may put their token in the path (HARDTESTS_API_URL_TOKENS); Django logs
the path of every failed request (django.request) and the dev server every request
(django.server). Plain Python, so settings can name it before any app is loaded.
"""

from __future__ import annotations

import logging
import re

_TOKEN_IN_PATH = re.compile(r"/t/[^/\s\"']+/")


def redact(text: str) -> str:
    return _TOKEN_IN_PATH.sub("/t/<redacted>/", text)


class PathTokenFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "/t/" in message:
            record.msg, record.args = redact(message), ()
        return True
