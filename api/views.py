"""Token management pages: each user lists, creates and revokes only their own API tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from api import tokens
from api.models import ApiToken
from core.forms import form_refused_pop, form_refused_redirect

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# A user is not meant to hold hundreds of tokens; the cap bounds what one account can mint.
MAX_ACTIVE_TOKENS = 50
# The new secret crosses the redirect after "Create" in a signed cookie that lives a minute and
# is read once: it is never stored on the server, and reloading the list does not show it again.
SECRET_COOKIE = "new_token"
SECRET_COOKIE_MAX_AGE_S = 60


class AuthenticatedHttpRequest(HttpRequest):
    """A request that login_required let through: its user is signed in (django-stubs' way of
    saying so; no such object is built, the views receive Django's HttpRequest)."""

    user: User


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="what it is for, e.g. 'rl-cluster-a'")


def _page(request: AuthenticatedHttpRequest, form: TokenForm, *, secret: str | None = None,
          status: int = 200) -> HttpResponse:
    rows = ApiToken.objects.filter(user=request.user).order_by("revoked_at", "-created_at")
    return render(
        request,
        "api/tokens.html",
        {"tokens": rows, "form": form, "secret": secret},
        status=status,
    )


def _over_cap(request: AuthenticatedHttpRequest) -> bool:
    return ApiToken.objects.filter(user=request.user, revoked_at__isnull=True).count() >= MAX_ACTIVE_TOKENS


@login_required
@require_GET
def token_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    data, errors = form_refused_pop(request, key="token")
    form = TokenForm(data) if data is not None else TokenForm()
    if data is not None:
        form.is_valid()
        for error in errors:
            form.add_error(None, error)
    secret = request.get_signed_cookie(SECRET_COOKIE, default=None, max_age=SECRET_COOKIE_MAX_AGE_S,
                                       salt=SECRET_COOKIE)
    response = _page(request, form, secret=secret)
    if secret is not None:
        response.delete_cookie(SECRET_COOKIE, path=request.path)
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = TokenForm(request.POST)
    if not form.is_valid():
        return form_refused_redirect(request, key="token", to=reverse("token_list"))
    if _over_cap(request):
        return form_refused_redirect(request, key="token", to=reverse("token_list"), errors=[
            f"You already have {MAX_ACTIVE_TOKENS} active tokens; revoke one first."])
    new = tokens.token_create(user=request.user, name=form.cleaned_data["name"])
    response = redirect("token_list")
    response.status_code = 303
    response.set_signed_cookie(SECRET_COOKIE, new.secret, salt=SECRET_COOKIE, max_age=SECRET_COOKIE_MAX_AGE_S,
                               path=reverse("token_list"), httponly=True, samesite="Strict",
                               secure=request.is_secure())
    return response


@login_required
@require_POST
def token_revoke(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    # Someone else's token is a 404, exactly like a missing one.
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    if tokens.token_revoke(token=token):
        messages.success(request, f"Token “{token.name}” revoked; it no longer works.")
    return redirect("token_list")
