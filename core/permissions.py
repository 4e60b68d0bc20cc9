"""Roles: annotators label in studies, maintainers regenerate and manage studies, staff administer.

Roles are Django groups (created by a migration of problems), so they are managed in the admin.
"""

from __future__ import annotations

from typing import Any

MAINTAINERS = "maintainers"
ANNOTATORS = "annotators"


def _in_group(user: Any, name: str) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    cache = getattr(user, "_hardtests_groups", None)
    if cache is None:
        cache = set(user.groups.values_list("name", flat=True))
        user._hardtests_groups = cache
    return name in cache


def is_maintainer(user: Any) -> bool:
    return bool(getattr(user, "is_superuser", False)) or _in_group(user, MAINTAINERS)


def is_annotator(user: Any) -> bool:
    return _in_group(user, ANNOTATORS) or is_maintainer(user)


def require_maintainer(request: Any) -> None:
    """For views: refuse (403) anyone who is not a maintainer."""
    from django.core.exceptions import PermissionDenied

    if not is_maintainer(request.user):
        raise PermissionDenied("Only maintainers can do this.")
