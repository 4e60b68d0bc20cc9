from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest

from core.permissions import is_maintainer


def site(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    return {
        "public_read": settings.HARDTESTS_PUBLIC_READ,
        "llm_configured": bool(settings.OPENAI_BASE_URL or settings.OPENAI_API_KEY),
        "is_maintainer": bool(user and is_maintainer(user)),
    }
