from __future__ import annotations

from django.urls import URLPattern

app_name = "studies"
urlpatterns: list[URLPattern] = []
