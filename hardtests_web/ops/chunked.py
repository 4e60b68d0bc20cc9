"""Read a chunked request body (Transfer-Encoding: chunked, no Content-Length).

WSGI has no length for such a body, and Django then reads it as empty: a client that streams
its JSON (some HTTP libraries do for generated bodies) would get "missing body" for a correct
request. gunicorn decodes the chunks; this middleware reads them up to the API's body limit
(one byte more tells it was too large: 413) and hands Django a body with its length.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


class ChunkedBodyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        meta = request.META
        chunked = "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not meta.get("CONTENT_LENGTH") and "wsgi.input" in meta:
            limit = max(int(settings.HARDTESTS_API_MAX_BODY_KB) * 1024, int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0))
            body = meta["wsgi.input"].read(limit + 1)
            if len(body) > limit:
                return JsonResponse({"code": "too_large", "detail": f"request body over {limit} bytes"}, status=413)
            meta["CONTENT_LENGTH"] = str(len(body))
            # What WSGIRequest built from an absent length (an empty stream), rebuilt with it.
            request._stream = io.BytesIO(body)
            request._read_started = False  # type: ignore[attr-defined]
        return self.get_response(request)
