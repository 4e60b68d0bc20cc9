"""Start everything `make run` needs in one foreground process tree.

The embedded Redis (unless REDIS_URL is set), RQ workers for the generation, sandbox and
default queues, and the web server. Ctrl-C (or SIGTERM) stops all of it: workers get a
warm shutdown so a running job finishes its bookkeeping, then Redis shuts down.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand

from hardtests_web.embedded import embedded_redis_enabled, ensure_redis, stop_redis

JANITOR_PERIOD_S = 60


class Command(BaseCommand):
    help = "Run Redis (embedded), the RQ workers and the web server until Ctrl-C."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=None, help="web port (default: $PORT or 8000)")
        parser.add_argument("--no-web", action="store_true", help="workers only (for extra worker machines)")

    def handle(self, *args: Any, **options: Any) -> None:
        import os

        port = options["port"] or int(os.environ.get("PORT", "8000"))
        children: list[tuple[str, subprocess.Popen[bytes]]] = []
        redis_child = ensure_redis(daemonize=False)
        own_redis = embedded_redis_enabled() and redis_child is not None
        if embedded_redis_enabled():
            self.stdout.write(f"redis: embedded at {settings.EMBEDDED_REDIS_SOCKET}")
        if own_redis:
            # A fresh embedded Redis holds no jobs: queue again what the last run left unfinished.
            from problems.jobs import judging_requeue_orphans

            requeued = judging_requeue_orphans()
            if requeued:
                self.stdout.write(f"judging: queued again {requeued} task(s) left unfinished last time")
        manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]

        def spawn(name: str, argv: list[str]) -> None:
            # Own session: a terminal's Ctrl-C reaches only this supervisor, which then stops
            # the children once and in order (a second signal would make RQ kill running jobs).
            children.append((name, subprocess.Popen([*manage, *argv], start_new_session=True)))

        for i in range(settings.HARDTESTS_GENERATION_WORKERS):
            # GenerationWorker records a run as failed the moment its work horse is killed.
            spawn(f"generation-worker-{i}",
                  ["rqworker", "--worker-class", "generation.worker.GenerationWorker", "generation", "default"])
        for i in range(settings.HARDTESTS_SANDBOX_WORKERS):
            # SimpleWorker: no fork per job, so the imported judging code and its cache of suite
            # bodies stay warm (the programs themselves always run in the sandbox).
            spawn(f"sandbox-worker-{i}",
                  ["rqworker", "--worker-class", "rq.worker.SimpleWorker", "api", "sandbox", "default"])
        if "demo_materialise" in get_commands():
            # Queue demo kits that have no active generated suite yet; the workers build them.
            call_command("demo_materialise", "--enqueue")
        if not options["no_web"]:
            spawn("web", ["runserver", "--noreload", f"127.0.0.1:{port}"])
            self.stdout.write(self.style.SUCCESS(f"web: http://127.0.0.1:{port}/  (Ctrl-C stops everything)"))
            from problems.demo import first_run_summary

            self.stdout.write(first_run_summary(f"http://127.0.0.1:{port}/"))

        stopping = False

        def stop(signum: int, frame: Any) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        next_sweep = time.monotonic() + JANITOR_PERIOD_S
        try:
            while not stopping:
                for name, child in children:
                    if child.poll() is not None:
                        self.stderr.write(f"{name} exited with {child.returncode}; stopping everything")
                        stopping = True
                if time.monotonic() > next_sweep:
                    next_sweep = time.monotonic() + JANITOR_PERIOD_S
                    self._sweep()
                time.sleep(0.5)
        finally:
            for _, child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 15
            for _, child in children:
                try:
                    child.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    child.kill()
            if own_redis:
                stop_redis()
                if redis_child is not None:
                    redis_child.wait(timeout=10)
            self.stdout.write("stopped")

    def _sweep(self) -> None:
        """Record as failed the runs and judging tasks whose worker died (killed, OOM), so no
        page waits on them forever."""
        from generation.services import sweep_stale_runs
        from problems.jobs import judging_sweep_dead

        try:
            runs, tasks = sweep_stale_runs(), judging_sweep_dead()
        except Exception as exc:  # the supervisor must outlive a database or Redis hiccup
            self.stderr.write(f"janitor: {exc}")
            return
        if runs or tasks:
            self.stdout.write(f"janitor: recorded {runs} dead run(s) and {tasks} dead judging task(s)")
