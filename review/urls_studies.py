from __future__ import annotations

from django.urls import path

from review.studies import views, views_review

app_name = "studies"
urlpatterns = [
    path("", views.study_list, name="list"),
    path("new/", views.study_create, name="create"),
    path("queue/", views.my_queue, name="queue"),
    path("<int:pk>/", views.study_detail, name="detail"),
    path("<int:pk>/edit/", views.study_edit, name="edit"),
    path("<int:pk>/open/", views.study_open, name="open"),
    path("<int:pk>/close/", views.study_close, name="close"),
    path("<int:pk>/delete/", views.study_delete, name="delete"),
    path("<int:pk>/results-visibility/", views.study_results_visibility, name="results_visibility"),
    path("<int:pk>/release-idle/", views.study_release_idle, name="release_idle"),
    path("<int:pk>/next/", views.item_next, name="next"),
    path("<int:pk>/results/", views_review.study_results, name="results"),
    path("<int:pk>/export.csv", views_review.export_csv, name="export_csv"),
    path("<int:pk>/export.jsonl", views_review.export_jsonl, name="export_jsonl"),
    path("<int:pk>/items/<int:item_pk>/", views.annotate, name="annotate"),
    path("<int:pk>/items/<int:item_pk>/label/", views.label, name="label"),
    path("<int:pk>/items/<int:item_pk>/skip/", views.skip, name="skip"),
    path("<int:pk>/items/<int:item_pk>/draft/", views.draft, name="draft"),
    path("<int:pk>/items/<int:item_pk>/tests/", views.item_tests, name="item_tests"),
    path("<int:pk>/items/<int:item_pk>/resume/", views.resume, name="resume"),
    path("<int:pk>/items/<int:item_pk>/try/", views.trial_start, name="try"),
    path("<int:pk>/items/<int:item_pk>/review/", views_review.review_item, name="review_item"),
    path("<int:pk>/items/<int:item_pk>/adjudicate/", views_review.adjudicate, name="adjudicate"),
    path("<int:pk>/items/<int:item_pk>/validator/", views_review.validator_edit, name="validator_edit"),
    path("<int:pk>/items/<int:item_pk>/add-test/", views_review.suite_addition_start, name="add_test"),
    path("trials/<int:trial_pk>/", views.trial_status, name="trial"),
    path("additions/<int:addition_pk>/", views_review.suite_addition_status, name="addition"),
]
