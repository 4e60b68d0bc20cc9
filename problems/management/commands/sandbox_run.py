"""`sandbox_run SOURCE --language L [--input FILE ...]`: a thin wrapper over `sandbox.cli.main`."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Compile a program and run it in the sandbox on input files; one JSON object per input."

    def run_from_argv(self, argv: list[str]) -> None:
        # The sandbox CLI owns its arguments (and its --help); Django's parser would reject them.
        from sandbox.cli import main

        sys.exit(main(argv[2:]))

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("args", nargs="*")

    def handle(self, *args: Any, **options: Any) -> None:
        from sandbox.cli import main

        code = main(list(args))
        if code:
            sys.exit(code)
