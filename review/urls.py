from __future__ import annotations

from django.urls import URLPattern

app_name = "review"
urlpatterns: list[URLPattern] = []
