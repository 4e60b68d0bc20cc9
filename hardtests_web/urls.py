from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from api.v1 import api
from generation.dashboard import home
from hardtests_web.ops.health import healthz, healthz_deep

urlpatterns = [
    path("admin/", admin.site.urls),
    # django-rq wraps each of its views in staff_member_required itself.
    path("rq/", include("django_rq.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", healthz, name="healthz"),
    path("healthz/deep", healthz_deep, name="healthz-deep"),
    path("api/v1/", api.urls),
    path("account/tokens/", include("api.token_urls")),
    path("", home, name="home"),
    path("", include("problems.urls")),
    path("", include("generation.urls")),
    path("", include("review.urls")),
]
