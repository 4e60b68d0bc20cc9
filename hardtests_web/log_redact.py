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
        # A traceback may quote the path too (a request's repr, a URL in an error).
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text and "/t/" in record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info and "/t/" in record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def gunicorn_atoms_redact(atoms: dict[str, object]) -> dict[str, object]:
    """gunicorn's access-log atoms without a token: the request line (r), path (U), referer (f)."""
    return {key: redact(value) if isinstance(value, str) and "/t/" in value else value
            for key, value in atoms.items()}
