"""Bench: wall time to materialise demo kits against the sandbox time they needed.

    .venv/bin/python bench/pipeline.py [SLUG ...] [--threads N]

Uses a throwaway HARDTESTS_VAR_DIR (its own SQLite database and media), so the
development database is never touched. For each demo problem it prints the wall time of
`materialise_kit` (generators, validator, oracles; no LLM), the sum of the CPU times the
sandbox reported for every run it made, and their ratio: above 1 the sandbox work
overlapped (threads), below 1 the overhead (process starts, namespaces, the database)
dominated.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("slugs", nargs="*", help="demo folder names (default: all)")
    parser.add_argument("--threads", type=int, default=None, help="materialisation threads (default: settings)")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory(prefix="hardtests-bench-")
    os.environ["HARDTESTS_VAR_DIR"] = scratch.name
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    if args.threads:
        settings.HARDTESTS_MATERIALISE_THREADS = args.threads
    call_command("migrate", verbosity=0)
    from generation.materialise import MaterialiseError, materialise_kit
    from problems.demo import demo_folders, demo_load
    from problems.models import Problem

    class Stages:
        """Wall seconds per materialisation stage."""

        def __init__(self) -> None:
            self.seconds: dict[str, float] = {}
            self.current: str | None = None
            self.since = time.monotonic()

        def stage(self, name: str) -> None:
            self.close()
            self.current, self.since = name, time.monotonic()

        def close(self) -> None:
            if self.current:
                self.seconds[self.current] = self.seconds.get(self.current, 0.0) + time.monotonic() - self.since
                self.current = None

        def log(self, message: str) -> None:
            pass

        def check_cancel(self) -> None:
            pass

        def counts(self, counts: dict) -> None:
            pass

    demo_load()
    wanted = set(args.slugs)
    pids = [f"demo/{p.name}" for p in demo_folders() if not wanted or p.name in wanted]
    print(f"{'problem':32} {'tests':>5} {'wall s':>8} {'sandbox s':>10} {'runs':>5} {'ratio':>6} "
          f"{'gen s':>6} {'valid s':>7} {'oracle s':>8}")
    total_wall = total_sandbox = 0.0
    for pid in pids:
        problem = Problem.objects.get(source="demo", pid=pid)
        kit = problem.kits.order_by("-version").first()
        if kit is None:
            print(f"{pid:32} (no kit)")
            continue
        started = time.monotonic()
        stages = Stages()
        try:
            result = materialise_kit(kit=kit, progress=stages)
        except MaterialiseError as exc:
            print(f"{pid:32} failed: {exc.reason}: {exc}")
            continue
        wall = time.monotonic() - started
        stages.close()
        per_stage = [stages.seconds.get(name, 0.0) for name in ("generating", "validating", "oracles")]
        sandbox_s = result.sandbox_ms / 1000
        total_wall += wall
        total_sandbox += sandbox_s
        print(f"{pid:32} {len(result.tests):5d} {wall:8.2f} {sandbox_s:10.2f} {result.sandbox_runs:5d} "
              f"{sandbox_s / wall if wall else 0:6.2f} {per_stage[0]:6.2f} {per_stage[1]:7.2f} {per_stage[2]:8.2f}")
    if total_wall:
        print(f"{'total':32} {'':5} {total_wall:8.2f} {total_sandbox:10.2f} {'':5} {total_sandbox / total_wall:6.2f}")
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
