"""`llm_worker [--in-flight N] [--threads N] [--burst]`: the LLM stage of campaigns, many calls in flight.

Run one or more per machine next to the RQ workers of the `sandbox` queue (which
materialise the kits it saves). SIGTERM/SIGINT stop it warmly: calls in flight finish.
"""

from __future__ import annotations

import json
import signal
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from generation.campaigns.llmworker import LLMStageWorker


class Command(BaseCommand):
    help = "Run the LLM stage of generation campaigns (HARDTESTS_LLM_IN_FLIGHT calls at once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--in-flight", type=int, default=None,
                            help="LLM calls in flight (default: HARDTESTS_LLM_IN_FLIGHT)")
        parser.add_argument("--threads", type=int, default=None,
                            help="run threads, at least --in-flight (default: HARDTESTS_LLM_STAGE_THREADS, "
                                 "0 = twice --in-flight)")
        parser.add_argument("--burst", action="store_true", help="quit when no campaign run waits for the LLM")

    def handle(self, *args: Any, **options: Any) -> None:
        in_flight = options["in_flight"] or settings.HARDTESTS_LLM_IN_FLIGHT
        if in_flight < 1:
            raise CommandError("--in-flight must be at least 1")
        threads = options["threads"] if options["threads"] is not None else settings.HARDTESTS_LLM_STAGE_THREADS
        worker = LLMStageWorker(in_flight=in_flight, threads=threads)

        def stop(signum: int, frame: Any) -> None:
            worker.stop.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        self.stderr.write(f"llm_worker {worker.token}: {in_flight} in flight on {worker.threads} threads")
        done = worker.run(burst=options["burst"])
        self.stdout.write(json.dumps({"worker": worker.token, "outcomes": done}))
