"""A logging filter that hides API tokens sent in URL paths (``.../t/<token>/...``).

Header-less clients may put their token in the path (HARDTESTS_API_URL_TOKENS); Django logs
the path of every failed request (django.request) and the dev server every request
(django.server). Plain Python, so settings can name it before any app is loaded.
"""

from __future__ import annotations

import logging

from core.redact import redact, token_marked

__all__ = ["PathTokenFilter", "gunicorn_atoms_redact", "redact"]


class PathTokenFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if token_marked(message):
            record.msg, record.args = redact(message), ()
        # A traceback may quote the path too (a request's repr, a URL in an error).
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text and token_marked(record.exc_text):
            record.exc_text = redact(record.exc_text)
        if record.stack_info and token_marked(record.stack_info):
            record.stack_info = redact(record.stack_info)
        return True


def gunicorn_atoms_redact(atoms: dict[str, object]) -> dict[str, object]:
    """gunicorn's access-log atoms without a token: the request line (r), path (U), referer (f)."""
    return {key: redact(value) if isinstance(value, str) and token_marked(value) else value
            for key, value in atoms.items()}
