from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import reverse
from django.utils.html import escape
from django.utils.text import Truncator

from tests.factories import ProblemFactory, SolutionFactory

PROJECT_APPS = ("problems", "generation", "review", "api")


def test_every_model_has_an_admin_page():
    missing = [
        m.__name__ for m in apps.get_models() if m._meta.app_label in PROJECT_APPS and m not in admin.site._registry
    ]
    assert missing == []


@pytest.mark.django_db
def test_admin_changelists_count_their_rows_and_change_pages_show_the_object(admin_client):
    SolutionFactory(problem=ProblemFactory())
    SolutionFactory(problem=ProblemFactory())
    checked = 0
    for model in admin.site._registry:
        if model._meta.app_label not in PROJECT_APPS:
            continue
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        page = admin_client.get(url)
        assert page.status_code == 200, url
        # The paginator line ("2 problems") proves the changelist ran its query over every row.
        count = model.objects.count()
        name = model._meta.verbose_name if count == 1 else model._meta.verbose_name_plural
        assert f"{count} {name}" in page.content.decode(), url
        obj = model.objects.first()
        if obj is not None:
            url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[obj.pk])
            page = admin_client.get(url)
            assert page.status_code == 200, url
            assert escape(Truncator(str(obj)).words(18, truncate="…")) in page.content.decode(), url
            checked += 1
    assert checked >= 2  # problems and solutions had rows to open


@pytest.mark.django_db
def test_admin_refuses_users_who_are_not_staff(client, django_user_model):
    user = django_user_model.objects.create_user("annotator", password="pw")
    client.force_login(user)
    page = client.get(reverse("admin:problems_problem_changelist"))
    assert page.status_code == 302 and "/login/" in page["Location"]
