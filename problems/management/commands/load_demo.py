from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from problems.demo import demo_load, demo_users_ensure


class Command(BaseCommand):
    help = "Load the bundled demo problems and demo users (idempotent). Prints a JSON summary."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--no-users", action="store_true", help="do not create the demo logins")

    def handle(self, *args: Any, **options: Any) -> None:
        summary: dict[str, Any] = demo_load()
        # Production sets HARDTESTS_DEMO=0: demo problems may be wanted there, known passwords never.
        if not options["no_users"] and settings.HARDTESTS_DEMO:
            summary["users"] = [{"username": u, "password": p, "role": r} for u, p, r in demo_users_ensure()]
        self.stdout.write(json.dumps(summary))
