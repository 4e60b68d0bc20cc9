"""API token services: create (the secret is returned once), revoke, authenticate.

A token reads `htk_<prefix>_<secret>`: the prefix (12 hex characters, stored in clear)
finds the row, and the SHA-256 of the whole token is compared in constant time. The
secret carries 256 random bits, so a fast hash is enough: nobody can brute-force it,
and authentication stays one indexed query per request.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from api.models import ApiToken
from core.sql import ModelColumns, fetch_all, per_vendor

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger(__name__)
SCHEME = "htk"
_HEX = frozenset("0123456789abcdef")
# last_used_at is informative; writing it on every call would make each API request a
# database write, so it is refreshed at most once per this interval.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class _TokenQuery:
    """ApiToken.objects.filter(prefix=..., revoked_at__isnull=True, user__is_active=True)[:1]"""

    def __init__(self) -> None:
        qn = connection.ops.quote_name
        self.columns = ModelColumns(ApiToken, "t")
        user = ApiToken._meta.get_field("user")
        # the user's primary key is a concrete field, so it has a column (only others have None)
        user_key = str(user.target_field.column)
        self.sql = (
            f"SELECT {self.columns.sql} FROM {qn(ApiToken._meta.db_table)} t "
            f"INNER JOIN {qn(user.related_model._meta.db_table)} u ON u.{qn(user_key)} = t.{qn(user.column)} "
            f"WHERE t.{qn('prefix')} = %s AND t.{qn('revoked_at')} IS NULL AND u.{qn('is_active')} = %s"
        )


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    secret: str  # the full bearer token; shown once, never stored


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def _split(raw: str) -> str | None:
    """The prefix of a well-formed token, else None."""
    parts = raw.split("_", 2)  # the secret itself may contain "_"
    if len(parts) != 3 or parts[0] != SCHEME or not parts[2]:
        return None
    # Checked before any query: a header may carry anything, including NUL bytes that
    # PostgreSQL refuses in a parameter.
    if len(parts[1]) != 12 or any(c not in _HEX for c in parts[1]):
        return None
    return parts[1]


def token_create(*, user: User, name: str, rate_limit_per_minute: int | None = None) -> NewToken:
    prefix = secrets.token_hex(6)
    raw = f"{SCHEME}_{prefix}_{secrets.token_urlsafe(32)}"
    token = ApiToken.objects.create(
        user=user,
        name=name.strip()[:100] or "token",
        prefix=prefix,
        secret_sha256=_digest(raw),
        rate_limit_per_minute=rate_limit_per_minute,
    )
    return NewToken(token=token, secret=raw)


def token_revoke(*, token: ApiToken) -> bool:
    """Revoke now; True if this call revoked it (False if it already was)."""
    now = timezone.now()
    changed = ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now)
    if changed:
        token.revoked_at = now
    return bool(changed)


def token_authenticate(raw: str) -> ApiToken | None:
    """The active token whose secret is `raw`, or None. Never logs `raw`."""
    prefix = _split(raw.strip())
    if prefix is None:
        return None
    # one hand-written query on every request (the ORM's took about twice as long); the user
    # is joined for is_active only (callers read user_id)
    query = per_vendor("token_authenticate", _TokenQuery)
    rows = fetch_all(query.sql, [prefix, True])
    token = query.columns.build(rows[0]) if rows else None
    # Hash and compare even when no row matched, so timing does not tell which prefixes exist.
    expected = token.secret_sha256 if token is not None else "0" * 64
    if not hmac.compare_digest(_digest(raw.strip()), expected) or token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        _last_used_touch(token, now)
    return token


def _last_used_touch(token: ApiToken, now: datetime) -> None:
    """Record the use, best effort: a database that reads but cannot write (read-only, a failover
    in progress) must not turn an authenticated request into an error; the column is informative."""
    try:
        if connection.in_atomic_block:
            with transaction.atomic():  # a savepoint, so a refusal leaves the outer transaction usable
                _last_used_update(token, now)
        else:
            _last_used_update(token, now)
        token.last_used_at = now
    except DatabaseError as exc:
        log.info("token %s: last_used_at not recorded: %s", token.prefix, exc)


def _last_used_update(token: ApiToken, now: datetime) -> None:
    ApiToken.objects.filter(pk=token.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ).update(last_used_at=now)
