from __future__ import annotations

from django.urls import path

from generation import campaign_views, views

app_name = "generation"
urlpatterns = [
    path("problems/<int:pk>/runs/", views.problem_runs, name="problem_runs"),
    path("problems/<int:pk>/regenerate/", views.regenerate, name="regenerate"),
    path("problems/<int:pk>/kit/edit/", views.kit_edit, name="kit_edit"),
    path("problems/<int:pk>/kit/revert/<int:version>/", views.kit_revert, name="kit_revert"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/progress/", views.run_progress, name="run_progress"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/calls/<int:call_id>/", views.llm_call_detail, name="llm_call"),
    path("campaigns/", campaign_views.campaign_list, name="campaign_list"),
    path("campaigns/<int:pk>/", campaign_views.campaign_detail, name="campaign_detail"),
    path("campaigns/<int:pk>/<str:action>/", campaign_views.campaign_action, name="campaign_action"),
]
