"""Cross-cutting HTTP policy: login by default (the Content-Security-Policy is django-csp's, see settings)."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import Resolver404, resolve

from core.redact import redact

# Paths reachable without a session: the login page, static files, the token-authenticated API.
_OPEN_PREFIXES = ("/accounts/login/", "/static/", "/api/", "/healthz", "/favicon.ico")
# The SandboxFusion-compatible endpoints authenticate themselves (hardtests_web/api/headerless.py).
_SANDBOXFUSION = re.compile(r"(t/[^/]+/)?(run_code|submit|openapi\.json)/?")


def _sandboxfusion_path(path: str) -> bool:
    stripped = settings.HARDTESTS_SANDBOXFUSION_PREFIX.strip("/")
    prefix = f"/{stripped}/" if stripped else "/"
    return path.startswith(prefix) and _SANDBOXFUSION.fullmatch(path[len(prefix):]) is not None


class LoginRequiredUnlessPublicMiddleware:
    """Every page needs a login, unless HARDTESTS_PUBLIC_READ=1 opens reads (GET/HEAD)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path
        if request.user.is_authenticated or path.startswith(_OPEN_PREFIXES) or path.startswith("/admin/") \
                or _sandboxfusion_path(path):
            return self.get_response(request)
        if settings.HARDTESTS_PUBLIC_READ and request.method in ("GET", "HEAD"):
            return self.get_response(request)
        if getattr(request, "htmx", False):
            response = HttpResponse(status=401)
            response["HX-Redirect"] = f"{settings.LOGIN_URL_PATH}?next={redact(path)}"
            return response
        # Without a token a client mistyped into its URL: the redirect is followed and logged.
        return redirect_to_login(redact(request.get_full_path()))


class MethodNotAllowedPageMiddleware:
    """A POST-only address typed or reloaded in the address bar (after a form, say) is not a
    blank 405: it sends the person to the page the form belongs to (the address one segment
    up, when that is a page), or shows the site's 405 page. API paths keep their JSON errors."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code != 405 or request.path.startswith("/api/") or _sandboxfusion_path(request.path):
            return response
        if request.method in ("GET", "HEAD"):
            parent = _parent_page(request.path)
            if parent is not None:
                return HttpResponseRedirect(parent, status=303)
        page = render(request, "405.html", {"request_path": request.path, "allowed": response.get("Allow", "")},
                      status=405)
        if response.has_header("Allow"):
            page["Allow"] = response["Allow"]
        return page


def _parent_page(path: str) -> str | None:
    """The nearest address above `path` that names a view (`/studies/3/items/9/label/` ->
    `/studies/3/items/9/`), or None."""
    parts = [p for p in path.split("/") if p]
    while parts:
        parts.pop()
        candidate = "/" + "/".join(parts) + ("/" if parts else "")
        try:
            resolve(candidate)
        except Resolver404:
            continue
        return candidate
    return None
