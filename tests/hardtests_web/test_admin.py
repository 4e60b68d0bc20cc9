from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import reverse

from tests.factories import ProblemFactory, SolutionFactory

PROJECT_APPS = ("problems", "generation", "review", "hardtests_web")


def test_every_model_has_an_admin_page():
    missing = [
        m.__name__ for m in apps.get_models() if m._meta.app_label in PROJECT_APPS and m not in admin.site._registry
    ]
    assert missing == []


@pytest.mark.django_db
def test_admin_changelists_and_change_pages_load_for_staff(admin_client):
    SolutionFactory(problem=ProblemFactory())
    for model in admin.site._registry:
        if model._meta.app_label not in PROJECT_APPS:
            continue
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        assert admin_client.get(url).status_code == 200, url
        obj = model.objects.first()
        if obj is not None:
            url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[obj.pk])
            assert admin_client.get(url).status_code == 200, url
