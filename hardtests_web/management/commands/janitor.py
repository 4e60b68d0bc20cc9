"""`janitor [--once]`: sweep dead runs and judging tasks and expired jobs, every period.

One janitor per deployment is enough (two are harmless: every sweep is a conditional
update). `serve` starts one; the compose file and the systemd units run it as its own process.
"""

from __future__ import annotations

import json
import signal
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from hardtests_web.ops.janitor import JanitorSchedule, janitor_pass
from hardtests_web.ops.process import exit_fast, exit_fast_enabled


class Command(BaseCommand):
    help = "Record dead generation runs and judging tasks as failed and drop expired jobs, periodically."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="one pass, print it as JSON, exit")
        parser.add_argument("--period", type=float, default=None,
                            help="seconds between passes (default: HARDTESTS_JANITOR_PERIOD_S)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["once"]:
            self.stdout.write(json.dumps(janitor_pass()))
            return
        period = options["period"] or settings.HARDTESTS_JANITOR_PERIOD_S
        stopping = False

        def stop(signum: int, frame: Any) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        self.stdout.write(f"janitor: a pass every {period:g} s")
        self.stdout.flush()
        schedule = JanitorSchedule(period_s=period, fast_s=settings.HARDTESTS_JANITOR_FAST_S, now=time.monotonic())
        while not stopping:
            kind = schedule.due(time.monotonic())
            if kind is not None:
                record = janitor_pass(kind=kind)
                if any(record["counts"].values()) or record["errors"]:
                    self.stdout.write(f"janitor: {json.dumps(record)}")
                    self.stdout.flush()
            # short sleeps: a SIGTERM is answered within half a second
            time.sleep(min(0.5, schedule.wait_s(time.monotonic())) or 0.05)
        if exit_fast_enabled():
            exit_fast(0)
