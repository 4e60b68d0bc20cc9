from __future__ import annotations

from django.urls import include, path

urlpatterns = [
    path("studies/", include("review.urls_studies")),
    path("evaluation/", include("review.urls_evaluation")),
]
