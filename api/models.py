"""API tokens for the verification API."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A bearer token for /api/v1/.

    The secret is shown once when the token is made; only its SHA-256 is stored. A slow
    password hash is unnecessary because the secret is 256 random bits, not a human
    password, and a fast hash keeps authentication cheap on every API call. The prefix
    (not secret) finds the row with one indexed query and lets users tell tokens apart.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="what the token is for, e.g. 'rl-cluster-a'")
    prefix = models.CharField(max_length=16, unique=True)
    secret_sha256 = models.CharField(max_length=64)
    # None: the HARDTESTS_API_RATE_LIMIT default applies; a number overrides it for this token.
    rate_limit_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="requests per minute; empty means the site default"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        db_table = "hardtests_web_apitoken"  # made when the model lived in hardtests_web

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.user_id}"

    @property
    def active(self) -> bool:
        return self.revoked_at is None
