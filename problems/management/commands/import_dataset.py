from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from problems.importers.registry import PACKAGE_FORMATS, formats
from problems.importers.runner import ImportAborted, dataset_import
from problems.packages.importer import PackageImportAborted, packages_import


class Command(BaseCommand):
    help = (
        "Import a dataset: hardtests, codecontests, taco, klear or native; or problem packages: icpc "
        "or polygon (package folders, folders of them, .zip; see docs/packages.md). Every row is checked before "
        "anything is written; the first malformed row aborts the import (file:row and the reason) unless "
        "--skip-invalid. Re-importing is idempotent. Prints a JSON summary on stdout, progress on stderr."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("format", choices=sorted(formats()) + sorted(PACKAGE_FORMATS))
        parser.add_argument("paths", nargs="*", metavar="PATH", help=".jsonl / .parquet files or folders of them")
        parser.add_argument("--hf", action="append", default=[], metavar="NAME",
                            help="a Hugging Face dataset (hub name, save_to_disk folder or data files); repeatable")
        parser.add_argument("--hf-split", default="train")
        parser.add_argument("--skip-invalid", action="store_true",
                            help="import the valid rows and write a report of the others")
        parser.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N rows")
        parser.add_argument("--report", default=None, metavar="FILE", help="where to write the invalid-row report")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["limit"] is not None and options["limit"] < 0:
            raise CommandError("--limit must be zero or more")
        if options["format"] in PACKAGE_FORMATS:
            self._packages(options)
            return
        progress, stop = _progress(enabled=not options["no_progress"])
        try:
            summary = dataset_import(
                format_name=options["format"], paths=options["paths"], hf=options["hf"],
                hf_split=options["hf_split"], skip_invalid=options["skip_invalid"], limit=options["limit"],
                report_path=options["report"], progress=progress,
            )
        except ImportAborted as exc:
            raise CommandError(str(exc)) from None
        finally:
            stop()
        self.stdout.write(json.dumps(summary, ensure_ascii=False))

    def _packages(self, options: dict[str, Any]) -> None:
        if options["hf"]:
            raise CommandError("--hf is for datasets; a package is a folder or a .zip")
        try:
            summary = packages_import(options["paths"], fmt=options["format"])
        except PackageImportAborted as exc:
            raise CommandError(f"{exc} (nothing was imported)") from None
        self.stdout.write(json.dumps(summary, ensure_ascii=False))


def _progress(*, enabled: bool) -> tuple[Any, Any]:
    """A rich progress bar on stderr when it is a terminal; silent otherwise (JSON goes to stdout)."""
    if not enabled or not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=Console(stderr=True), transient=False)
    tasks: dict[str, Any] = {}
    bar.start()

    def update(phase: str, done: int, total: int | None) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task("checking rows" if phase == "validate" else "writing", total=total)
        bar.update(tasks[phase], completed=done, total=total)

    return update, bar.stop
