from django.urls import path

from curation import views

app_name = "curation"

urlpatterns = [
    path("curation/", views.curation_list, name="list"),
    path("curation/import", views.curation_import, name="import"),
    path("curation/demo", views.curation_demo, name="demo"),
    path("curation/<int:pk>/", views.curation_detail, name="detail"),
    path("curation/<int:pk>/status", views.curation_status, name="status"),
    path("curation/<int:pk>/verify", views.curation_verify, name="verify"),
    path("curation/<int:pk>/judge", views.curation_judge, name="judge"),
    path("curation/<int:pk>/select", views.curation_select, name="select"),
    path("curation/<int:pk>/selection/<int:sid>/download", views.curation_export_download, name="download"),
    path("curation/<int:pk>/table/<slug:name>.csv", views.curation_table_csv, name="table_csv"),
]
