from __future__ import annotations

from django.urls import path

from problems import views

urlpatterns = [
    path("problems/", views.problem_list, name="problem_list"),
    path("demo/status/", views.demo_build, name="demo_build"),
    path("problems/<int:pk>/", views.problem_detail, name="problem_detail"),
    path("problems/<int:pk>/suite/", views.problem_suite, name="problem_suite"),
    path("problems/<int:pk>/suite/compare/", views.suite_compare, name="suite_compare"),
    path("problems/<int:pk>/suites/<int:suite_id>.zip", views.suite_download, name="suite_download"),
    path("problems/<int:pk>/tests/<int:test_id>/<str:part>/", views.test_download, name="test_download"),
    path("problems/<int:pk>/kit/", views.problem_kit, name="problem_kit"),
    path("problems/<int:pk>/solutions/", views.problem_solutions_tab, name="problem_solutions"),
    path("problems/<int:pk>/solutions/<int:solution_id>/", views.solution_code, name="solution_code"),
    path("problems/<int:pk>/verdicts/", views.problem_matrix, name="problem_matrix"),
    path("problems/<int:pk>/verdicts/<int:suite_id>/<int:solution_id>/<int:ordinal>/", views.verdict_cell_detail,
         name="verdict_cell"),
    path("problems/<int:pk>/verdicts/<int:suite_id>/<int:solution_id>/<int:ordinal>/output/", views.verdict_output,
         name="verdict_output"),
    path("problems/<int:pk>/verdicts/judge/", views.problem_judge_all, name="problem_judge_all"),
]
