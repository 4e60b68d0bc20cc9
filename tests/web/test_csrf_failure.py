"""The site's CSRF failure page (hardtests_web.views.csrf_failure): what happened, the typed
fields kept, offered again only to a form from this site, never a password echoed; htmx gets a
short plain answer; the 403/404 pages reached from a form show its fields to copy."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import maintainer

pytestmark = pytest.mark.django_db

FIELDS = {"name": "my <b>token</b>", "notes": "line one\nline two", "password": "hunter2",
          "csrfmiddlewaretoken": "stale"}


def _client() -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(maintainer("m"))
    client.get("/account/tokens/")  # a CSRF cookie, as a browser that opened the page has
    return client


def test_a_stale_token_from_this_site_lands_on_the_site_page_with_the_fields_to_send_again() -> None:
    response = _client().post("/account/tokens/new/", FIELDS, HTTP_SEC_FETCH_SITE="same-origin")
    html = response.content.decode()
    assert response.status_code == 403
    assert "This form had expired" in html and 'class="site-header"' in html
    assert "CSRF verification failed" not in html
    assert '<form method="post" action="/account/tokens/new/" class="kept-resend">' in html
    assert 'name="name" value="my &lt;b&gt;token&lt;/b&gt;"' in html  # escaped, kept
    assert ">line one\nline two</textarea>" in html
    assert "hunter2" not in html and 'type="password" name="password"' in html
    assert html.count('name="csrfmiddlewaretoken"') >= 1 and 'value="stale"' not in html


def test_a_form_from_another_site_is_shown_but_never_offered_again() -> None:
    response = _client().post("/account/tokens/new/", FIELDS, HTTP_ORIGIN="https://elsewhere.example",
                              HTTP_SEC_FETCH_SITE="cross-site")
    html = response.content.decode()
    assert response.status_code == 403 and "kept-resend" not in html
    assert "not sent again from here" in html


def test_htmx_gets_a_short_plain_answer() -> None:
    response = _client().post("/account/tokens/new/", FIELDS, HTTP_HX_REQUEST="true",
                              HTTP_SEC_FETCH_SITE="same-origin")
    assert response.status_code == 403 and response["Content-Type"].startswith("text/plain")
    assert response.content.decode().startswith("This form was opened before your session changed")


def test_a_404_reached_from_a_form_shows_what_was_typed_to_copy(maintainer_client: Client) -> None:
    response = maintainer_client.post("/studies/999999/items/1/label/", {"comment": "a long careful comment"})
    html = response.content.decode()
    assert response.status_code == 404
    assert "What you typed is kept" in html and ">a long careful comment</textarea>" in html
    assert "kept-resend" not in html  # sent again it would be refused the same way


def test_the_500_page_shows_the_failed_forms_fields_to_copy() -> None:
    from django.test import RequestFactory

    from hardtests_web.urls import handler500
    from hardtests_web.views import server_error

    assert handler500 == "hardtests_web.views.server_error"
    request = RequestFactory().post("/studies/1/items/1/label/", {"comment": "typed before the crash",
                                                                   "password": "hunter2"})
    response = server_error(request)
    html = response.content.decode()
    assert response.status_code == 500 and "Something went wrong on our side" in html
    assert ">typed before the crash</textarea>" in html and "hunter2" not in html
