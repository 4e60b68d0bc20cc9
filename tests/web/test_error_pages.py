"""Refusals are pages of the site: branded 404 and 405 (never Django's debug page), JSON for the
API, and a log line without a traceback."""

from __future__ import annotations

import logging

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_missing_page_is_the_site_404_without_url_patterns(user_client: Client) -> None:
    response = user_client.get("/problems/99999/")
    html = response.content.decode()
    assert response.status_code == 404 and "Nothing here" in html
    assert "URLconf" not in html and "urlpatterns" not in html.lower() and "Traceback" not in html
    api = Client().get("/api/v1/no-such-endpoint")
    assert api.status_code == 404 and api.json()["code"] == "not_found"


def test_another_method_on_a_form_address_is_the_site_405(user_client: Client) -> None:
    response = user_client.put("/account/tokens/new/")
    html = response.content.decode()
    assert response.status_code == 405 and "This address takes a form, not a visit" in html
    assert response["Allow"] == "POST"


def test_a_refusal_is_logged_in_one_line_without_a_traceback(annotator_client: Client, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert annotator_client.post("/evaluation/run/").status_code == 403
    records = [r for r in caplog.records if r.name == "django.request"]
    assert records and all(r.exc_info is None for r in records)
    assert "Forbidden" in records[0].getMessage()
