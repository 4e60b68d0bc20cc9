"""The verification API (/api/v1/): a django-ninja NinjaAPI with bearer-token auth.

The OpenAPI schema is served at /api/v1/openapi.json. No interactive docs page: ninja's
Swagger UI loads scripts from a CDN, which the site's Content-Security-Policy forbids.
"""

from __future__ import annotations

from ninja import NinjaAPI

from api.auth import TokenAuth
from api.endpoints import router
from api.errors import install_error_handlers
from api.openrlhf import router as openrlhf_router

api = NinjaAPI(
    title="HardTests verification API",
    version="1",
    description="Rewards for RL training loops: judge programs against HardTests suites.",
    auth=TokenAuth(),
    urls_namespace="api-v1",
    docs_url=None,
)
install_error_handlers(api)
# Before "", whose last operation answers 404 for every path nothing else matched.
api.add_router("openrlhf", openrlhf_router)
api.add_router("", router)

__all__ = ["api"]
