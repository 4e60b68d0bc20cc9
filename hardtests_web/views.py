"""Site-level pages that belong to no app: the login page (which in demo mode lists the demo
logins), and the pages a refused form lands on (CSRF, and the error pages' kept form)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.views import LoginView
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, HttpResponseServerError
from django.middleware import csrf
from django.template import loader
from django.template.exceptions import TemplateDoesNotExist
from django.views import defaults

from problems.demo import demo_logins

# Never echoed back into a page: a password typed into a stale login form stays typed nowhere.
SECRET_FIELD = re.compile(r"pass|secret", re.IGNORECASE)
NOT_KEPT = {"csrfmiddlewaretoken"}
LONG_VALUE = 80  # a value longer than this (or with a line break) is shown in a text box


class SiteLoginView(LoginView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["demo_logins"] = demo_logins()
        return context


@dataclass(frozen=True)
class KeptField:
    name: str
    value: str
    secret: bool  # shown as an empty password box: to be typed again
    multiline: bool


@dataclass(frozen=True)
class KeptForm:
    """What a refused POST carried, to show (and, from this site only, send again)."""

    action: str
    fields: list[KeptField]
    files_lost: list[str]
    resend: bool


def same_origin(request: HttpRequest) -> bool:
    """The refused request came from one of this site's own pages (a stale tab), not from
    another site: only then does the page offer to send it again with a fresh token, or a
    forged cross-site form would become one click away from going through."""
    if request.headers.get("Sec-Fetch-Site") == "same-origin":
        return True
    origin = request.headers.get("Origin")
    try:
        return bool(origin) and origin == f"{request.scheme}://{request.get_host()}"
    except DisallowedHost:
        return False


def kept_form(request: HttpRequest) -> KeptForm | None:
    """The fields of a refused POST, in the order they came; None for anything else."""
    if request.method != "POST":
        return None
    try:
        items = [(k, v) for k, values in request.POST.lists() for v in values if k not in NOT_KEPT]
        files = sorted({f.name or k for k, fs in request.FILES.lists() for f in fs})
    except Exception:  # noqa: BLE001 - a body that cannot be parsed (too large, malformed) keeps nothing
        return None
    if not items and not files:
        return None
    fields = [KeptField(name=k, value="" if SECRET_FIELD.search(k) else v, secret=bool(SECRET_FIELD.search(k)),
                        multiline="\n" in v or len(v) > LONG_VALUE) for k, v in items]
    return KeptForm(action=request.get_full_path(), fields=fields, files_lost=files, resend=same_origin(request))


CSRF_REASONS = {
    "stale": ("This form was opened before your session changed (you logged out, or logged in again, in this "
              "or another tab), so the security token it carried no longer matches. Nothing was saved."),
    "cookie": ("Your browser did not send this site's cookie with the form (cookies blocked for this site, or the "
               "session ended). Nothing was saved."),
    "origin": ("The form was sent from another address than this site's own, so it was refused to protect your "
               "account. Nothing was saved."),
}


def _csrf_kind(reason: str) -> str:
    if reason == csrf.REASON_NO_CSRF_COOKIE:
        return "cookie"
    if "origin" in reason.lower() or "referer" in reason.lower():
        return "origin"
    return "stale"


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: the site's own page (not Django's bare 403) saying what happened, with
    what was typed kept: shown, and, when the form came from this site, ready to send again
    with the current session's token."""
    kind = _csrf_kind(reason)
    if request.headers.get("HX-Request") == "true":
        # htmx shows a short plain answer in place; the form it came from keeps its fields.
        return HttpResponse(CSRF_REASONS[kind] + " Reload the page, then send it again.", status=403,
                            content_type="text/plain; charset=utf-8")
    template = loader.get_template("csrf_failure.html")
    context = {"kind": kind, "explanation": CSRF_REASONS[kind], "kept": kept_form(request), "reason": reason}
    return HttpResponse(template.render(context, request), status=403)


def server_error(request: HttpRequest, template_name: str = "500.html") -> HttpResponse:
    """The 500 page with the refused form's fields kept; Django's plain one if even that fails
    (a 500 may come from the templates themselves)."""
    try:
        template = loader.get_template(template_name)
        return HttpResponseServerError(template.render({"kept": kept_form(request)}))
    except TemplateDoesNotExist:
        return defaults.server_error(request, template_name)
    except Exception:  # noqa: BLE001 - the error page must not fail in turn
        return defaults.server_error(request, template_name)
