"""Print a new API token for a user (the only time the secret is shown)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from api.tokens import token_create


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (shown once; only its hash is stored)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="cli", help="what the token is for (default: cli)")
        parser.add_argument("--rate-limit", type=int, default=None, help="requests per minute for this token")
        parser.add_argument("--json", action="store_true", help="print a JSON object instead of the bare token")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user named {options['username']!r}")
        if not user.is_active:
            raise CommandError(f"user {options['username']!r} is inactive")
        rate = options["rate_limit"]
        if rate is not None and rate < 1:
            raise CommandError("--rate-limit must be at least 1")
        new = token_create(user=user, name=options["name"], rate_limit_per_minute=rate)
        if options["json"]:
            payload = {"token": new.secret, "id": new.token.pk, "prefix": new.token.prefix, "user": user.get_username()}
            self.stdout.write(json.dumps(payload))
        else:
            # The bare token on stdout, so `TOKEN=$(manage.py create_api_token alice)` works.
            self.stdout.write(new.secret)
