"""JSON errors of the API: one body shape, a status for every client mistake, never an HTML 500.

Every error body is {"code": <machine-readable>, "detail": <human sentence>} (plus "errors"
for validation failures), so a training loop can branch on `code` without parsing text.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypedDict

from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError, connections
from django.http import Http404, HttpRequest, HttpResponse
from ninja.errors import AuthenticationError, HttpError, ValidationError
from redis.exceptions import RedisError

if TYPE_CHECKING:
    from ninja import NinjaAPI

log = logging.getLogger(__name__)


class ApiError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, detail: str, *, code: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if code:
            self.code = code
        self.headers = headers or {}


class BadRequest(ApiError):
    status = 400
    code = "bad_request"


class NotFound(ApiError):
    status = 404
    code = "not_found"


class PayloadTooLarge(ApiError):
    status = 413
    code = "too_large"


class RateLimited(ApiError):
    status = 429
    code = "rate_limited"


class Unavailable(ApiError):
    """The sandbox fleet cannot take the work now; the client should retry later."""

    status = 503
    code = "unavailable"

    def __init__(self, detail: str, *, code: str | None = None, retry_after_s: int = 5) -> None:
        super().__init__(detail, code=code, headers={"Retry-After": str(retry_after_s)})


def _body(code: str, detail: str, **extra: Any) -> dict[str, Any]:
    return {"code": code, "detail": detail, **extra}


class ValidationErrorItem(TypedDict):
    """One entry of a 400's "errors" (api.schemas.ValidationErrorItem in the OpenAPI schema)."""

    loc: list[str]
    msg: str
    type: str


def _validation_errors(exc: ValidationError) -> list[ValidationErrorItem]:
    # Keep only plain, JSON-safe fields: pydantic's `ctx` and `input` may hold arbitrary
    # objects (and echo the client's whole program back).
    out: list[ValidationErrorItem] = []
    for error in exc.errors:
        out.append(
            {
                "loc": [str(part) for part in error.get("loc", ())],
                "msg": str(error.get("msg", "")),
                "type": str(error.get("type", "")),
            }
        )
    return out


def install_error_handlers(api: NinjaAPI) -> None:
    def respond(request: HttpRequest, status: int, body: dict[str, Any],
                headers: dict[str, str] | None = None) -> HttpResponse:
        response = api.create_response(request, body, status=status)
        for key, value in (headers or {}).items():
            response[key] = value
        return response

    @api.exception_handler(ApiError)
    def api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
        return respond(request, exc.status, _body(exc.code, exc.detail), exc.headers)

    @api.exception_handler(ValidationError)
    def validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        errors = _validation_errors(exc)
        too_many = [e for e in errors if e["type"] == "too_long" and e["loc"][-1:] == ["items"]]
        if too_many:
            # A batch over the limit is a size refusal (413, as documented), not a malformed body.
            return respond(request, 413, _body("batch_too_large", f"items: {too_many[0]['msg']}"))
        unknown = [e for e in errors if e["type"] == "extra_forbidden"]
        if unknown:
            # A field the request does not have (api.schemas._NO_UNKNOWN_FIELDS): 422, named.
            def field_path(loc: list[str]) -> str:
                while loc[:1] == ["body"]:  # ninja's own wrapping of the request body
                    loc = loc[1:]
                return ".".join(loc)

            names = ", ".join(repr(field_path(e["loc"])) for e in unknown)
            return respond(request, 422, _body("unknown_field", f"unknown field {names}: not a field of this "
                                                                "request (see /api/v1/openapi.json)", errors=unknown))
        first: ValidationErrorItem = errors[0] if errors else {"loc": [], "msg": "invalid input", "type": ""}
        where = ".".join(first["loc"])
        detail = f"{where}: {first['msg']}" if where else first["msg"]
        # 400, not ninja's default 422: the issue asks for 400 on any bad input.
        return respond(request, 400, _body("invalid", detail, errors=errors))

    @api.exception_handler(AuthenticationError)
    def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        detail = exc.message if exc.message != "Unauthorized" else "a valid API token is required"
        return respond(
            request, 401, _body("unauthorized", f"{detail} (send 'Authorization: Bearer <token>')"),
            {"WWW-Authenticate": 'Bearer realm="hardtests"'},
        )

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
        # ninja raises HttpError(400) for a body that is not JSON.
        code = {400: "bad_request", 404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "error")
        return respond(request, exc.status_code, _body(code, exc.message))

    @api.exception_handler(Http404)
    def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return respond(request, 404, _body("not_found", str(exc) or "not found"))

    @api.exception_handler(RequestDataTooBig)
    def too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
        # Django's own DATA_UPLOAD_MAX_MEMORY_SIZE, hit by a chunked body without Content-Length.
        return respond(request, 413, _body("too_large", "request body too large"))

    # OperationalError and InterfaceError only: an IntegrityError or a ProgrammingError is a bug (500).
    @api.exception_handler(OperationalError)
    @api.exception_handler(InterfaceError)
    def database_down(request: HttpRequest, exc: Exception) -> HttpResponse:
        # An outage (connection refused, server restarting, read-only) is the service's state,
        # not a bug: say so, and when to try again. The broken connection is dropped so the
        # next request connects afresh.
        log.warning("API: database unavailable on %s %s: %s", request.method, request.path, exc)
        for conn in connections.all(initialized_only=True):
            if conn.connection is not None and not conn.is_usable():
                conn.close()
        return respond(request, 503, _body("database_unavailable", "the database is unavailable; try again later"),
                       {"Retry-After": "5"})

    @api.exception_handler(RedisError)
    def redis_down(request: HttpRequest, exc: RedisError) -> HttpResponse:
        log.warning("API: Redis unavailable on %s %s: %s", request.method, request.path, exc)
        return respond(request, 503, _body("redis_unavailable", "the job queue (Redis) is unavailable; try again later"),
                       {"Retry-After": "5"})

    @api.exception_handler(Exception)
    def internal(request: HttpRequest, exc: Exception) -> HttpResponse:
        # A bug on our side: log it (never the Authorization header) and answer JSON, not a
        # Django HTML page or a traceback.
        log.exception("API error on %s %s", request.method, request.path)
        return respond(request, 500, _body("internal", "internal error; it has been logged"))
