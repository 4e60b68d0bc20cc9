"""Token management pages: each user lists, creates and revokes only their own API tokens."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from api import tokens
from api.models import ApiToken

# A user is not meant to hold hundreds of tokens; the cap bounds what one account can mint.
MAX_ACTIVE_TOKENS = 50


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="what it is for, e.g. 'rl-cluster-a'")


def _page(request: HttpRequest, form: TokenForm, *, secret: str | None = None, status: int = 200) -> HttpResponse:
    rows = ApiToken.objects.filter(user=request.user).order_by("revoked_at", "-created_at")
    return render(
        request,
        "api/tokens.html",
        {"tokens": rows, "form": form, "secret": secret},
        status=status,
    )


@login_required
@require_GET
def token_list(request: HttpRequest) -> HttpResponse:
    return _page(request, TokenForm())


@login_required
@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    if ApiToken.objects.filter(user=request.user, revoked_at__isnull=True).count() >= MAX_ACTIVE_TOKENS:
        form.add_error(None, f"You already have {MAX_ACTIVE_TOKENS} active tokens; revoke one first.")
        return _page(request, form, status=400)
    new = tokens.token_create(user=request.user, name=form.cleaned_data["name"])
    # Rendered in this response only (not a redirect, not a message): the secret is never
    # stored in clear, so this page is the one chance to copy it.
    response = _page(request, TokenForm(), secret=new.secret)
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    # Someone else's token is a 404, exactly like a missing one.
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    if tokens.token_revoke(token=token):
        messages.success(request, f"Token “{token.name}” revoked; it no longer works.")
    return redirect("token_list")
