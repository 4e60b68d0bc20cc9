"""Admin for API tokens: inspect and revoke. Tokens are created in the UI or with
`manage.py create_api_token`, which show the secret once; the admin never sees it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from api.models import ApiToken
from api.tokens import token_revoke

# ModelAdmin is generic only in django-stubs (subscripting it at run time needs their
# monkeypatch, a dev-only package)
if TYPE_CHECKING:
    _ApiTokenAdminBase = admin.ModelAdmin[ApiToken]
else:
    _ApiTokenAdminBase = admin.ModelAdmin


@admin.register(ApiToken)
class ApiTokenAdmin(_ApiTokenAdminBase):
    list_display = ("name", "user", "prefix", "created_at", "last_used_at", "revoked_at", "rate_limit_per_minute")
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("user", "prefix", "secret_sha256", "created_at", "last_used_at", "revoked_at")
    fields = ("name", "user", "prefix", "rate_limit_per_minute", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = sum(token_revoke(token=token) for token in queryset)
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)
