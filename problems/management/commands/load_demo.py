from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand

from problems.demo import demo_load, demo_users_ensure


class Command(BaseCommand):
    help = "Load the bundled demo problems and demo users (idempotent). Prints a JSON summary."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--no-users", action="store_true", help="do not create the demo logins")

    def handle(self, *args: Any, **options: Any) -> None:
        summary: dict[str, Any] = demo_load()
        if not options["no_users"]:
            summary["users"] = [{"username": u, "password": p, "role": r} for u, p, r in demo_users_ensure()]
        self.stdout.write(json.dumps(summary))
