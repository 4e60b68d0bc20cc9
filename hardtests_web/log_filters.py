"""Logging filters for django.request and django.security.

Django logs every 4xx answer with the exception that made it (a full traceback for each
PermissionDenied). A refusal is the server working as meant: the log keeps one line
("Forbidden (Permission denied): /studies/3/"), not the traceback that hides real failures.
"""

from __future__ import annotations

import logging


class RefusalFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
