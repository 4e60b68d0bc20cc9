"""The gate every API operation passes: bearer token, then body size, then rate limit.

ninja runs auth before it reads the body, and it is the only per-request hook it has,
so the size and rate checks live here too: an oversized body is refused from its
Content-Length without being read, and rejected or unauthenticated requests cost no
rate-limit budget of another token.
"""

from __future__ import annotations

from django.http import HttpRequest
from ninja.security import HttpBearer

from api.conf import api_setting
from api.errors import BadRequest, PayloadTooLarge, Unavailable
from api.models import ApiToken
from api.throttle import rate_limit_check
from api.tokens import token_authenticate
from core.lifecycle import shutting_down


def _check_body_size(request: HttpRequest) -> None:
    raw = request.META.get("CONTENT_LENGTH") or "0"
    try:
        length = int(raw)
    except ValueError:
        raise BadRequest("invalid Content-Length header") from None
    limit_kb = api_setting("HARDTESTS_API_MAX_BODY_KB")
    if length > limit_kb * 1024:
        raise PayloadTooLarge(f"request body is {length} bytes; the limit is {limit_kb} KiB")


class TokenRequest(HttpRequest):
    """The request an operation behind TokenAuth receives: ninja calls the operation only when
    the auth returned a token, and leaves it in request.auth (a type for the checker; the
    object is Django's HttpRequest)."""

    auth: ApiToken


class BearerGate(HttpBearer):
    """What TokenAuth and HeaderlessAuth share: the bearer header, and the checks every
    token passes. Each says in its own __call__ what it lets through (HeaderlessAuth more
    than a token, which a subclass of TokenAuth could not)."""

    def bearer(self, request: HttpRequest) -> ApiToken | None:
        # Replaces ninja's parsing, which logs the whole header (a secret) under DEBUG when
        # the scheme is not "Bearer".
        scheme, _, value = request.headers.get("Authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            return None
        return self.authenticate(request, value.strip())

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        if shutting_down():
            # Read after SIGTERM: work started now might not finish before the process exits.
            raise Unavailable("this server is shutting down; try again (another node, or in a moment)",
                              code="shutting_down", retry_after_s=2)
        api_token = token_authenticate(token)
        if api_token is None:
            return None
        _check_body_size(request)
        rate_limit_check(api_token.prefix, api_token.rate_limit_per_minute or api_setting("HARDTESTS_API_RATE_LIMIT"))
        return api_token


class TokenAuth(BearerGate):
    """/api/v1/: a bearer token, nothing else."""

    def __call__(self, request: HttpRequest) -> ApiToken | None:
        return self.bearer(request)
