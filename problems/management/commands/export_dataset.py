from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from problems.exporters import EXPORTERS
from problems.exporters.bundles import FILTER_KEYS, FilterError, problems_select
from problems.exporters.hub import HubError, hub_push

# Folder exports with a dataset card, which the Hub can take as they are.
HUB_FORMATS = ("hardtests", "training", "verl")


class Command(BaseCommand):
    help = (
        "Export problems: native (OUT is a .jsonl file; lossless), hardtests (OUT folder: a parquet pair with "
        "HardTests' schema), training (OUT folder: train.parquet and train.jsonl), verl (OUT folder: train.parquet "
        "with verl's columns) or icpc (OUT folder: one problem package per problem). Folder exports get a dataset "
        "card (README.md). Prints a JSON summary."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("format", choices=sorted(EXPORTERS))
        parser.add_argument("out", metavar="OUT")
        parser.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                            help=f"keys: {', '.join(FILTER_KEYS)} (e.g. source=hardtests, tag=dp, "
                                 "difficulty=codeforces:1600, suite=generated, has_kit, limit=100)")
        parser.add_argument("--push-to-hub", metavar="REPO", default="",
                            help=f"then upload OUT to this Hugging Face dataset repo ({', '.join(HUB_FORMATS)}; "
                                 "token from $HF_TOKEN, Hub address from $HF_ENDPOINT)")
        parser.add_argument("--private", action="store_true", help="create the Hub repo private")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            problems, limit = problems_select(options["filter"])
        except FilterError as exc:
            raise CommandError(str(exc)) from None
        out = Path(options["out"])
        if options["format"] != "native" and out.exists() and not out.is_dir():
            raise CommandError(f"{out}: exists and is not a folder")
        if options["push_to_hub"] and options["format"] not in HUB_FORMATS:
            raise CommandError(f"--push-to-hub takes the folder formats {', '.join(HUB_FORMATS)}")
        started = time.monotonic()
        summary = EXPORTERS[options["format"]](problems=problems, out=out, limit=limit)
        summary = {"format": options["format"], "out": str(out), **summary,
                   "seconds": round(time.monotonic() - started, 3)}
        if options["push_to_hub"]:
            try:
                summary["hub_commit"] = hub_push(folder=out, repo=options["push_to_hub"], private=options["private"],
                                                 message=f"hardtests_web {options['format']} export")
            except HubError as exc:
                raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(summary, ensure_ascii=False))
