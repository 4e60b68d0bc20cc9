"""Site-level pages that belong to no app: the login page, which in demo mode lists the demo logins."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.views import LoginView

from problems.demo import demo_logins


class SiteLoginView(LoginView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["demo_logins"] = demo_logins()
        return context
