"""Start everything `make run` needs in one foreground process tree.

The embedded Redis (unless REDIS_URL is set), RQ workers for the generation, sandbox and
default queues, the LLM stage of campaigns (`llm_worker`), the janitor, and the web server. Ctrl-C (or SIGTERM) stops all of it:
workers get a warm shutdown so a running job finishes its bookkeeping, then Redis shuts
down. A failure while starting stops whatever was already started, then exits non-zero
with the reason: nothing is left running that nobody will stop.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from core.embedded import embedded_redis_enabled, ensure_redis, stop_redis

STOP_GRACE_S = 15


class Command(BaseCommand):
    help = "Run Redis (embedded), the RQ workers, the LLM worker, the janitor and the web server until Ctrl-C."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=None, help="web port (default: $PORT or 8000)")
        parser.add_argument("--host", default="127.0.0.1", help="web address to bind (default 127.0.0.1)")
        parser.add_argument("--no-web", action="store_true", help="workers only (for extra worker machines)")
        parser.add_argument("--dev", action="store_true",
                            help="Django's development server instead of gunicorn")
        demo = parser.add_mutually_exclusive_group()
        demo.add_argument("--load-demo", action="store_true",
                          help="load the bundled demo problems first and build their suites")
        demo.add_argument("--no-demo", action="store_true",
                          help="do not queue work for demo problems even when they are loaded")

    def handle(self, *args: Any, **options: Any) -> None:
        self.children: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.redis_child: subprocess.Popen[bytes] | None = None
        self.own_redis = False
        self.manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        port = options["port"] or int(os.environ.get("PORT", "8000"))
        if options["dev"]:
            # Debug pages only where asked for; the children inherit it.
            os.environ["DEBUG"] = "1"
        self.host = options["host"]
        try:
            self._start(port, options)
            self.startup_summary(port=port, web=not options["no_web"])
            self._supervise()
        except Exception as exc:
            # Everything started so far is stopped in `finally`; say why we are leaving.
            reason = str(exc) if isinstance(exc, CommandError) else f"{type(exc).__name__}: {exc}"
            raise CommandError(f"serve could not start: {reason}") from exc
        finally:
            self._stop_all()

    # -- starting ---------------------------------------------------------------------------

    def _start(self, port: int, options: dict[str, Any]) -> None:
        self.redis_child = ensure_redis(daemonize=False)
        self.own_redis = embedded_redis_enabled() and self.redis_child is not None
        if embedded_redis_enabled():
            self.stdout.write(f"redis: embedded at {settings.EMBEDDED_REDIS_SOCKET}")
        if self.own_redis:
            # A fresh embedded Redis holds no jobs: queue again what the last run left unfinished.
            from problems.jobs import judging_requeue_orphans

            requeued = judging_requeue_orphans()
            if requeued:
                self.stdout.write(f"judging: queued again {requeued} task(s) left unfinished last time")
        for i in range(settings.HARDTESTS_GENERATION_WORKERS):
            # Records a run as failed the moment its work horse is killed; checks its storage.
            self._spawn(f"generation-worker-{i}", ["rqworker", "--worker-class",
                                                   "hardtests_web.ops.worker.CheckedGenerationWorker",
                                                   "generation", "default"])
        for i in range(settings.HARDTESTS_SANDBOX_WORKERS):
            # No fork per job (a warm suite cache), and no job while it cannot read the storage.
            self._spawn(f"sandbox-worker-{i}", ["rqworker", "--worker-class", "hardtests_web.ops.worker.CheckedWorker",
                                                "api", "sandbox", "default"])
        for i in range(settings.HARDTESTS_LLM_WORKERS):
            # Without one, a campaign started from this deployment never leaves the LLM stage.
            self._spawn(f"llm-worker-{i}", ["llm_worker"])
        self._spawn("janitor", ["janitor"])
        self._queue_demo(load=options["load_demo"], skip=options["no_demo"])
        if not options["no_web"]:
            host = options["host"]
            port_free_check(host, port)
            if options["dev"]:
                self._spawn("web", ["runserver", "--noreload", f"{host}:{port}"])
            else:
                self._spawn("web", ["-m", "gunicorn", "-c", "python:hardtests_web.gunicorn_conf",
                                    "--bind", f"{host}:{port}", "hardtests_web.wsgi"], manage=False)

    def _spawn(self, name: str, argv: list[str], *, manage: bool = True) -> None:
        # Own session: a terminal's Ctrl-C reaches only this supervisor, which then stops
        # the children once and in order (a second signal would make RQ kill running jobs).
        command = [*self.manage, *argv] if manage else [sys.executable, *argv]
        child = subprocess.Popen(command, start_new_session=True, cwd=settings.BASE_DIR)
        self.children.append((name, child))
        self.stdout.write(f"started {name} (pid {child.pid})")

    def _queue_demo(self, *, load: bool, skip: bool) -> None:
        """Queue the demo's suite building only where demo problems are loaded: a database of
        imported problems alone is a normal deployment, not an error."""
        if skip:
            return
        from problems.demo import DEMO_SOURCE
        from problems.models import Problem

        if load:
            call_command("load_demo", stdout=self.stdout)
        if Problem.objects.filter(source=DEMO_SOURCE).exists():
            call_command("demo_materialise", "--enqueue", stdout=self.stdout)

    def startup_summary(self, *, port: int, web: bool) -> None:
        """What the operator reads once everything is up (the hook for a first-run banner)."""
        if web:
            from problems.demo import first_run_summary

            self.stdout.write(self.style.SUCCESS(f"web: http://{self.host}:{port}/  (Ctrl-C stops everything)"))
            self.stdout.write(first_run_summary(f"http://{self.host}:{port}/"))
        else:
            self.stdout.write(self.style.SUCCESS("workers running (Ctrl-C stops everything)"))

    # -- running and stopping ---------------------------------------------------------------

    def _supervise(self) -> None:
        stopping = False

        def stop(signum: int, frame: Any) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        while not stopping:
            for name, child in self.children:
                if child.poll() is not None:
                    self.stderr.write(f"{name} exited with {child.returncode}; stopping everything")
                    stopping = True
            time.sleep(0.5)

    def _stop_all(self) -> None:
        for _, child in self.children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for _, child in self.children:
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                # The whole session: a worker's work horse and the programs it runs go too.
                os.killpg(child.pid, signal.SIGKILL)
                child.wait(timeout=10)
        if self.own_redis:
            stop_redis()
            if self.redis_child is not None:
                try:
                    self.redis_child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.redis_child.kill()
                    self.redis_child.wait(timeout=10)
        if self.children or self.own_redis:
            self.stdout.write("stopped")


def port_free_check(host: str, port: int) -> None:
    """Refuse a port something else already listens on, before the web server fails on it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise CommandError(f"port {port} is already in use on {host} ({exc.strerror})") from exc
