from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.templatetags.static import static
from django.urls import include, path
from django.views import defaults
from django.views.generic import RedirectView

from api.sandboxfusion import sandboxfusion_api, sandboxfusion_prefix
from api.v1 import api
from generation.dashboard import home
from hardtests_web.ops.health import healthz, healthz_deep
from hardtests_web.views import SiteLoginView

urlpatterns = [
    path("admin/", admin.site.urls),
    # django-rq wraps each of its views in staff_member_required itself.
    path("rq/", include("django_rq.urls")),
    path("accounts/login/", SiteLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", healthz, name="healthz"),
    # Browsers ask for /favicon.ico whatever the page says.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("healthz/deep", healthz_deep, name="healthz-deep"),
    path("api/v1/", api.urls),
    # SandboxFusion-compatible /run_code and /submit (HARDTESTS_SANDBOXFUSION_PREFIX).
    path(sandboxfusion_prefix(), sandboxfusion_api.urls),
    path("account/tokens/", include("api.token_urls")),
    path("", home, name="home"),
    path("", include("problems.urls")),
    path("", include("generation.urls")),
    path("", include("review.urls")),
    path("", include("curation.urls")),
]


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """API clients get the API's JSON error shape for every unknown path, including paths the
    URL resolver cannot match at all (a pid with a newline); people get the site's 404 page."""
    if request.path.startswith("/api/"):
        return JsonResponse({"code": "not_found", "detail": "no such API path"}, status=404)
    return defaults.page_not_found(request, exception)


handler404 = not_found
# The 500 page keeps the fields of the form that failed (hardtests_web.views.server_error).
handler500 = "hardtests_web.views.server_error"
