from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from core.embedded import stop_redis


class Command(BaseCommand):
    help = "Stop the embedded Redis server if one is running (for example one a command started)."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write("stopped" if stop_redis() else "not running")
