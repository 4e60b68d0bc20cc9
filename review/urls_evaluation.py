from __future__ import annotations

from django.urls import path

from review.evaluation import views

app_name = "evaluation"
urlpatterns = [
    path("", views.evaluation_page, name="page"),
    path("run/", views.evaluation_run, name="run"),
    path("runs/<int:pk>/status/", views.evaluation_status, name="status"),
    path("runs/<int:pk>/tables/<slug:name>.<slug:fmt>", views.evaluation_table_export, name="table_export"),
]
