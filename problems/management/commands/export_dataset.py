from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from problems.exporters import EXPORTERS
from problems.exporters.bundles import FILTER_KEYS, FilterError, problems_select


class Command(BaseCommand):
    help = (
        "Export problems: native (OUT is a .jsonl file; lossless), hardtests (OUT folder: a parquet pair with "
        "HardTests' schema), training (OUT folder: train.parquet and train.jsonl) or icpc (OUT folder: one "
        "problem package per problem). Prints a JSON summary."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("format", choices=sorted(EXPORTERS))
        parser.add_argument("out", metavar="OUT")
        parser.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                            help=f"keys: {', '.join(FILTER_KEYS)} (e.g. source=hardtests, tag=dp, "
                                 "difficulty=codeforces:1600, suite=generated, has_kit, limit=100)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            problems, limit = problems_select(options["filter"])
        except FilterError as exc:
            raise CommandError(str(exc)) from None
        out = Path(options["out"])
        if options["format"] != "native" and out.exists() and not out.is_dir():
            raise CommandError(f"{out}: exists and is not a folder")
        started = time.monotonic()
        summary = EXPORTERS[options["format"]](problems=problems, out=out, limit=limit)
        summary = {"format": options["format"], "out": str(out), **summary,
                   "seconds": round(time.monotonic() - started, 3)}
        self.stdout.write(json.dumps(summary, ensure_ascii=False))
