"""htmx request helpers every app's views share."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """A request as django-htmx's middleware leaves it (for the annotations of views that read
    `request.htmx`)."""

    htmx: HtmxDetails


# htmx stops polling when a response has this status.
STOP_POLLING = 286


def htmx_target(request: HttpRequest) -> str | None:
    """The element an htmx request will swap, or None for a request that needs a full page
    (no htmx, a boosted link, or htmx restoring history after a cache miss)."""
    htmx = getattr(request, "htmx", None)
    if not htmx or htmx.boosted or htmx.history_restore_request:
        return None
    return htmx.target or ""
