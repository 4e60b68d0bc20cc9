from __future__ import annotations

from django.urls import path

from problems import views

urlpatterns = [
    path("", views.home, name="home"),
    path("problems/", views.problem_list, name="problem_list"),
    path("problems/<int:pk>/", views.problem_detail, name="problem_detail"),
]
