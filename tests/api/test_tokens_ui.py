"""Token management: the pages (own tokens only, POST + CSRF), the command, the admin."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from api.models import ApiToken
from api.tokens import token_authenticate, token_create
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice():
    return UserFactory(username="alice")


@pytest.fixture
def alice_client(alice):
    client = Client()
    client.force_login(alice)
    return client


def test_create_shows_the_secret_once_and_stores_only_its_hash(alice_client):
    # Post/redirect/get: the secret crosses the redirect in a signed cookie read once.
    response = alice_client.post(reverse("token_create"), {"name": "rl-cluster"}, follow=True)
    assert response.redirect_chain == [(reverse("token_list"), 303)]
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    secret = re.search(r"htk_[0-9a-f]{12}_[A-Za-z0-9_-]+", response.content.decode()).group(0)
    token = ApiToken.objects.get(user__username="alice")
    assert token.name == "rl-cluster" and token_authenticate(secret) == token
    assert 'data-copy="#new-token"' in response.content.decode()
    listing = alice_client.get(reverse("token_list")).content.decode()
    assert "rl-cluster" in listing and token.prefix in listing and secret not in listing
    # The secret is not kept anywhere on the server side in clear.
    from django.contrib.sessions.models import Session

    assert not any(secret in str(s.get_decoded()) for s in Session.objects.all())


def test_list_shows_only_my_tokens(alice, alice_client):
    token_create(user=UserFactory(username="bob"), name="bobs-token")
    token_create(user=alice, name="alices-token")
    page = alice_client.get(reverse("token_list")).content.decode()
    assert "alices-token" in page and "bobs-token" not in page


def test_revoke_my_token(alice, alice_client):
    new = token_create(user=alice, name="t")
    response = alice_client.post(reverse("token_revoke", args=[new.token.pk]))
    assert response.status_code == 302
    assert token_authenticate(new.secret) is None
    assert Client().get("/api/v1/problems", HTTP_AUTHORIZATION=f"Bearer {new.secret}").status_code == 401


def test_cannot_revoke_someone_elses_token(alice_client):
    bob = token_create(user=UserFactory(username="bob"), name="t")
    assert alice_client.post(reverse("token_revoke", args=[bob.token.pk])).status_code == 404
    assert token_authenticate(bob.secret) is not None


def test_get_cannot_create_or_revoke(alice, alice_client):
    new = token_create(user=alice, name="t")
    # The address typed again is sent to the page the form belongs to, and changes nothing.
    for url in (reverse("token_create"), reverse("token_revoke", args=[new.token.pk])):
        response = alice_client.get(url)
        assert response.status_code == 303 and response["Location"] == reverse("token_list")
    assert ApiToken.objects.count() == 1 and token_authenticate(new.secret) is not None


def test_post_without_csrf_token_is_refused():
    client = Client(enforce_csrf_checks=True)
    client.force_login(UserFactory(username="alice"))
    assert client.post(reverse("token_create"), {"name": "x"}).status_code == 403
    assert ApiToken.objects.count() == 0


def test_anonymous_users_are_sent_to_login():
    for response in (Client().get(reverse("token_list")), Client().post(reverse("token_create"), {"name": "x"})):
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert ApiToken.objects.count() == 0


def test_empty_name_is_refused_and_the_browser_lands_on_the_list(alice_client):
    response = alice_client.post(reverse("token_create"), {"name": ""}, follow=True)
    assert response.redirect_chain == [(reverse("token_list"), 303)]
    assert "This field is required." in response.content.decode()
    assert ApiToken.objects.count() == 0
    # Shown once: a reload is the plain page again.
    assert "This field is required." not in alice_client.get(reverse("token_list")).content.decode()


def _command(*args: str) -> str:
    out = io.StringIO()
    call_command("create_api_token", *args, stdout=out)
    return out.getvalue()


def test_create_api_token_command_prints_a_working_token():
    UserFactory(username="carol")
    secret = _command("carol").strip()
    assert token_authenticate(secret).user.username == "carol"
    data = json.loads(_command("carol", "--name", "ci", "--json"))
    assert data["user"] == "carol" and token_authenticate(data["token"]).name == "ci"


def test_create_api_token_command_fails_for_unknown_user():
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        _command("nobody")


def test_admin_lists_and_revokes_tokens(admin_client):
    new = token_create(user=UserFactory(username="dave"), name="t")
    assert admin_client.get(reverse("admin:api_apitoken_changelist")).status_code == 200
    page = admin_client.get(reverse("admin:api_apitoken_change", args=[new.token.pk]))
    assert page.status_code == 200 and new.secret not in page.content.decode()
    admin_client.post(
        reverse("admin:api_apitoken_changelist"),
        {"action": "revoke", "_selected_action": [new.token.pk]},
    )
    assert token_authenticate(new.secret) is None
