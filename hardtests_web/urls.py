from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from generation.dashboard import home
from hardtests_web.api import api
from hardtests_web.api.sandboxfusion import sandboxfusion_api, sandboxfusion_prefix


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


urlpatterns = [
    path("admin/", admin.site.urls),
    # django-rq wraps each of its views in staff_member_required itself.
    path("rq/", include("django_rq.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", healthz, name="healthz"),
    path("api/v1/", api.urls),
    # SandboxFusion-compatible /run_code and /submit (HARDTESTS_SANDBOXFUSION_PREFIX).
    path(sandboxfusion_prefix(), sandboxfusion_api.urls),
    path("account/tokens/", include("hardtests_web.token_urls")),
    path("", home, name="home"),
    path("", include("problems.urls")),
    path("", include("generation.urls")),
    path("", include("review.urls")),
]
