"""The first-run banner: while the demo suites are being built, every page says so, with progress."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from problems.demo import demo_build_status


def demo_build(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    # Partials never carry the banner; the login page does not poll (the status needs a login).
    if request.headers.get("HX-Request") or not (user and user.is_authenticated):
        return {}
    return {"demo_build": demo_build_status()}
