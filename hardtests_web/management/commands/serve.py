"""Start everything `make run` needs in one foreground process tree, and keep it running.

The embedded Redis (unless REDIS_URL is set), RQ workers for the generation, verification and
judging queues, the LLM stage of campaigns (`llm_worker`), the janitor, and the web server.

A supervisor: a child that exits is started again with backoff (1 s, doubling to 30 s; back to
1 s once it has stayed up a minute), and the reason is logged. A dead worker is taken off RQ's
lists at once and its job queued again; a restarted embedded Redis gets the unfinished judging
tasks queued again. Only Ctrl-C or SIGTERM stops the stack, in the order that loses nothing:
the web server first (it stops accepting, answers what it holds; workers still run so in-flight
verifications finish), then the workers (each finishes its job; one that overstays is killed
and its job queued again), the LLM stage and the janitor, then Redis. A second signal hurries it.

Every child has its own session (so a terminal's Ctrl-C reaches only this process) and dies
with it (PR_SET_PDEATHSIG): a `serve` killed with SIGKILL leaves nothing running, and the next
one finds its port free.

`--role verify` starts only what the verification API needs: the web server and the sandbox
workers (taking only verifications), against the embedded Redis or REDIS_URL: no generation or
LLM workers, no janitor, no demo (a reward node beside a training job; docs/deployment.md).

Exit status: 0 stopped by a signal and everything stopped in time; 1 could not start;
3 stopped by a signal but a child had to be killed.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from core.config_registry import read_int
from core.embedded import (
    die_with_parent,
    embedded_redis_answers,
    embedded_redis_enabled,
    ensure_redis,
    stop_redis,
)
from core.queues import DEFAULT_QUEUE, GENERATION_QUEUE, JUDGING_QUEUE, VERIFICATION_QUEUE
from hardtests_web.ops.process import exit_fast, exit_fast_enabled

BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 30.0
STABLE_AFTER_S = 60.0  # up this long: the next exit starts the backoff afresh
DEMO_CHECK_S = 5.0  # how often a first run asks whether the demo's suites are built
WORKER_STOP_GRACE_S = 60  # a worker's running job gets this long to finish on shutdown
OTHER_STOP_GRACE_S = 20
EXIT_FORCED = 3
VERIFY_WEB_WORKERS = 2  # gunicorn processes of `serve --role verify` (HARDTESTS_WEB_WORKERS overrides)


@dataclass
class Child:
    name: str
    command: list[str]
    kind: str  # web, worker, other
    proc: subprocess.Popen[bytes] | None = None
    worker_name: str | None = None
    started_at: float = 0.0
    failures: int = 0
    restart_at: float | None = None
    restarts: int = field(default=0)


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class Command(BaseCommand):
    help = "Run Redis (embedded), the RQ workers, the LLM worker, the janitor and the web server until Ctrl-C."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=None, help="web port (default: $PORT or 8000)")
        parser.add_argument("--host", default="127.0.0.1", help="web address to bind (default 127.0.0.1)")
        parser.add_argument("--no-web", action="store_true", help="workers only (for extra worker machines)")
        parser.add_argument("--role", choices=("full", "verify"), default="full",
                            help="full: everything (default); verify: only the web server and sandbox workers "
                                 "taking verifications (no generation or LLM workers, no janitor, no demo)")
        parser.add_argument("--dev", action="store_true",
                            help="Django's development server instead of gunicorn")
        demo = parser.add_mutually_exclusive_group()
        demo.add_argument("--load-demo", action="store_true",
                          help="load the bundled demo problems first and build their suites")
        demo.add_argument("--no-demo", action="store_true",
                          help="do not queue work for demo problems even when they are loaded")

    def execute(self, *args: Any, **options: Any) -> Any:
        if options.get("role") == "verify":
            # Django's system checks import every view, the admin and the LLM client (openai,
            # numpy, ninja): 60 MiB a process that judges or supervises and serves no page
            options["skip_checks"] = True
        return super().execute(*args, **options)

    def handle(self, *args: Any, **options: Any) -> None:
        self.children: list[Child] = []
        self.redis_child: subprocess.Popen[bytes] | None = None
        self.own_redis = False
        self.redis_restart_at: float | None = None
        self.redis_failures = 0
        self.signals = 0
        self.forced = False
        self.manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        self.env = dict(os.environ, HARDTESTS_EMBEDDED_REDIS_SUPERVISED="1", PYTHONUNBUFFERED="1")
        if options["dev"]:
            # Debug pages only where asked for (Django's development server); the children inherit it.
            self.env["DEBUG"] = "1"
        self.host = options["host"]
        self.verify_only = options["role"] == "verify"
        if self.verify_only and options["load_demo"]:
            raise CommandError("--role verify loads no demo: drop --load-demo")
        if self.verify_only:
            options["no_demo"] = True
            # the web side of a verification waits on a sandbox worker, on threads: two processes
            # (one serves while the other is recycled) rather than one per CPU, unless set
            self.env.setdefault("HARDTESTS_WEB_WORKERS", str(VERIFY_WEB_WORKERS))
        port = options["port"] or read_int("PORT")
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)
        try:
            try:
                self._start(port, options)
            except Exception as exc:
                reason = str(exc) if isinstance(exc, CommandError) else f"{type(exc).__name__}: {exc}"
                raise CommandError(f"serve could not start: {reason}") from exc
            if not self.signals:
                self.startup_summary(port=port, web=not options["no_web"])
                self._supervise()
        finally:
            self._stop_all()
        if self.forced:
            self.stderr.write("stopped, but a child had to be killed")
            sys.exit(EXIT_FORCED)
        if exit_fast_enabled():
            exit_fast(0)  # everything is stopped: the interpreter's teardown would only cost seconds

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.signals += 1
        if self.signals > 1:
            self.hurry = True

    hurry = False

    def log(self, message: str) -> None:
        self.stdout.write(f"serve: {message}")
        self.stdout.flush()

    # -- starting ---------------------------------------------------------------------------

    def _start(self, port: int, options: dict[str, Any]) -> None:
        self.redis_child = ensure_redis(supervisor=True)
        self.own_redis = embedded_redis_enabled() and self.redis_child is not None
        if embedded_redis_enabled():
            self.stdout.write(f"redis: embedded at {settings.EMBEDDED_REDIS_SOCKET}")
        if self.own_redis:
            self._requeue_orphans()
        # This process's client, made while Redis answers (made later, during an outage, it
        # would try to start an embedded server of its own).
        from core.queues import redis_connection

        redis_connection()
        worker = "hardtests_web.ops.worker."
        # This process ran Django's system checks (or skipped them: execute()); a child running
        # them again would import every view, the admin and the LLM client for nothing: 0.9 s
        # of CPU at each start and their memory for as long as it lives. Not the generation
        # worker: it forks a work horse per job, which inherits what the checks imported (without
        # them, every job would import the pipeline again).
        checks = ["--skip-checks"]
        for i in range(0 if self.verify_only else settings.HARDTESTS_GENERATION_WORKERS):
            # Records a run as failed the moment its work horse is killed; checks its storage.
            self._add(f"generation-worker-{i}", ["rqworker", "--worker-class", worker + "CheckedGenerationWorker",
                                                 GENERATION_QUEUE, DEFAULT_QUEUE], kind="worker")
        sandbox_workers = settings.HARDTESTS_SANDBOX_WORKERS
        reserved = min(settings.HARDTESTS_API_RESERVED_WORKERS, sandbox_workers - 1) if sandbox_workers > 1 else 0
        for i in range(sandbox_workers):
            # No fork per job (a warm suite cache), and no job while it cannot read the storage.
            # The first `reserved` take only verifications: one never waits behind a bulk job.
            # `default` holds jobs that wait for judging tasks (an evaluation, the curation demo): on
            # a judging worker such a job waits for the very worker it occupies, so it goes to the
            # generation workers when there are any.
            shared = [JUDGING_QUEUE] if settings.HARDTESTS_GENERATION_WORKERS else [JUDGING_QUEUE, DEFAULT_QUEUE]
            queues = [VERIFICATION_QUEUE] if i < reserved or self.verify_only else [VERIFICATION_QUEUE, *shared]
            self._add(f"sandbox-worker-{i}", ["rqworker", *checks, "--worker-class", worker + "CheckedWorker", *queues],
                      kind="worker")
        for i in range(0 if self.verify_only else settings.HARDTESTS_LLM_WORKERS):
            # Without one, a campaign started from this deployment never leaves the LLM stage.
            self._add(f"llm-worker-{i}", ["llm_worker", *checks])
        if not self.verify_only:
            self._add("janitor", ["janitor", *checks])
        self._queue_demo(load=options["load_demo"], skip=options["no_demo"])
        if not options["no_web"]:
            host = options["host"]
            port_free_check(host, port)
            if options["dev"]:
                self._add("web", [*self.manage, "runserver", "--noreload", f"{host}:{port}"], kind="web", manage=False)
            else:
                # One line per request would bury the summary block: the access log goes to a file.
                self.access_log = Path(settings.VAR_DIR) / "log" / "access.log"
                self.access_log.parent.mkdir(parents=True, exist_ok=True)
                self._add("web", [sys.executable, "-m", "gunicorn", "-c", "python:hardtests_web.ops.gunicorn",
                                  "--access-logfile", str(self.access_log),
                                  "--bind", f"{host}:{port}", "hardtests_web.wsgi"], kind="web", manage=False)
        for child in self.children:
            self._launch(child)

    def _add(self, name: str, argv: list[str], *, kind: str = "other", manage: bool = True) -> None:
        self.children.append(Child(name, [*self.manage, *argv] if manage else argv, kind))

    def _launch(self, child: Child) -> None:
        command = child.command
        if child.kind == "worker":
            # A fresh name each start: the dead one's registration never blocks the new one.
            child.worker_name = f"{socket.gethostname()}.{child.name}.{uuid.uuid4().hex[:8]}"
            command = [*command[:3], "--name", child.worker_name, *command[3:]]
        child.proc = subprocess.Popen(command, cwd=settings.BASE_DIR, env=self.env,  # noqa: PLW1509
                                      preexec_fn=die_with_parent())
        child.started_at = time.monotonic()
        child.restart_at = None
        self.stdout.write(f"started {child.name} (pid {child.proc.pid})")
        self.stdout.flush()

    def _requeue_orphans(self) -> None:
        # A fresh embedded Redis holds no jobs: queue again what the last run left unfinished.
        from problems.jobs import judging_requeue_orphans

        requeued = judging_requeue_orphans()
        if requeued:
            self.log(f"judging: queued again {requeued} task{'s' if requeued != 1 else ''} left unfinished")

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
        if web and getattr(self, "verify_only", False):
            self.url = f"http://{self.host}:{port}/"
            self.stdout.write(self.style.SUCCESS(f"web: {self.url}api/v1/verify  (verification node; Ctrl-C stops it)"))
        elif web:
            from problems.demo import demo_build_status, first_run_summary

            self.url = f"http://{self.host}:{port}/"
            self.stdout.write(self.style.SUCCESS(f"web: {self.url}  (Ctrl-C stops everything)"))
            if getattr(self, "access_log", None):
                self.stdout.write(f"web: requests are logged to {self.access_log}")
            self.stdout.write(first_run_summary(self.url))
            # While the demo's suites are built, the block is printed again once they are done.
            self.demo_pending = self._quietly(lambda: demo_build_status(cached=False)) is not None
        else:
            self.stdout.write(self.style.SUCCESS("workers running (Ctrl-C stops everything)"))
        self.stdout.flush()

    # -- supervising ------------------------------------------------------------------------

    @staticmethod
    def _backoff(failures: int) -> float:
        return min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2.0 ** max(0, failures - 1))

    def _quietly(self, read: Any) -> Any:
        try:
            return read()
        except Exception:  # a database outage must not stop the supervisor; ask again later
            return "unknown"

    def _demo_ready_check(self, now: float) -> None:
        """Once the first run's demo suites are built, say so with the URL and the logins again."""
        if not getattr(self, "demo_pending", False) or now < getattr(self, "demo_check_at", 0.0):
            return
        self.demo_check_at = now + DEMO_CHECK_S
        from problems.demo import demo_build_status, first_run_summary

        if self._quietly(lambda: demo_build_status(cached=False)) is None:
            self.demo_pending = False
            self.stdout.write(self.style.SUCCESS("demo: every demo suite is built; the site is ready."))
            self.stdout.write(first_run_summary(self.url))
            self.stdout.flush()

    def _supervise(self) -> None:
        while not self.signals:
            now = time.monotonic()
            self._watch_redis(now)
            self._demo_ready_check(now)
            for child in self.children:
                if child.proc is not None and child.proc.poll() is not None:
                    self._on_exit(child, now)
                if child.proc is None and child.restart_at is not None and now >= child.restart_at:
                    if self.own_redis and self.redis_restart_at is not None:
                        continue  # Redis first
                    child.restarts += 1
                    self._launch(child)
            time.sleep(0.2)

    def _on_exit(self, child: Child, now: float) -> None:
        assert child.proc is not None
        uptime = now - child.started_at
        child.failures = child.failures + 1 if uptime < STABLE_AFTER_S else 1
        delay = self._backoff(child.failures)
        self.stderr.write(f"serve: {child.name} (pid {child.proc.pid}) exited with {describe_exit(child.proc.returncode)} "
                          f"after {uptime:.1f} s; starting it again in {delay:g} s")
        self.stderr.flush()
        how = describe_exit(child.proc.returncode)
        child.proc = None
        child.restart_at = now + delay
        if child.worker_name:
            self._reap(child.worker_name, reason=f"its process exited with {how}")

    def _reap(self, worker_name: str, *, reason: str) -> None:
        try:
            from core.queues import redis_connection
            from hardtests_web.ops.reaper import worker_reap

            outcome = worker_reap(redis_connection(), worker_name, reason=reason)
            if outcome:
                self.log(f"{worker_name}'s job: {outcome}")
        except Exception as exc:  # Redis away: the janitor does it later
            self.log(f"could not clear {worker_name} from Redis now ({type(exc).__name__}); the janitor will")

    def _watch_redis(self, now: float) -> None:
        if not self.own_redis:
            self._adopt_redis(now)
            return
        if self.redis_child is not None and self.redis_child.poll() is not None:
            uptime = now - getattr(self, "_redis_started", 0.0)
            self.redis_failures = self.redis_failures + 1 if uptime < STABLE_AFTER_S else 1
            delay = self._backoff(self.redis_failures)
            self.stderr.write(f"serve: the embedded Redis exited with {describe_exit(self.redis_child.returncode)}; "
                              f"starting it again in {delay:g} s")
            self.stderr.flush()
            self.redis_child = None
            self.redis_restart_at = now + delay
        if self.redis_child is None and self.redis_restart_at is not None and now >= self.redis_restart_at:
            try:
                self.redis_child = ensure_redis(supervisor=True)
                self._redis_started = time.monotonic()
                self.redis_restart_at = None
                self.log("the embedded Redis is back")
                self._requeue_orphans()
            except Exception as exc:
                self.redis_failures += 1
                delay = self._backoff(self.redis_failures)
                self.stderr.write(f"serve: could not start the embedded Redis ({exc}); again in {delay:g} s")
                self.redis_restart_at = now + delay

    def _adopt_redis(self, now: float) -> None:
        """An embedded Redis this serve found running belongs to the process that started it (a
        one-off command), which stops it as it exits: then this serve starts its own."""
        if not embedded_redis_enabled() or now < getattr(self, "_adopt_check_at", 0.0):
            return
        self._adopt_check_at = now + 1.0
        if embedded_redis_answers():
            return
        try:
            self.redis_child = ensure_redis(supervisor=True)
        except Exception as exc:
            self.stderr.write(f"serve: could not start the embedded Redis ({exc}); trying again")
            return
        if self.redis_child is not None:
            self.own_redis = True
            self._redis_started = time.monotonic()
            self.log("the embedded Redis it shared has stopped; this serve runs its own now")
            self._requeue_orphans()

    # -- stopping ---------------------------------------------------------------------------

    def _stop(self, children: list[Child], grace_s: float, *, grace_of: dict[str, float] | None = None) -> None:
        running = [c for c in children if c.proc is not None and c.proc.poll() is None]
        for child in running:
            assert child.proc is not None
            # Only the process itself: gunicorn and RQ stop their own children in order.
            child.proc.send_signal(signal.SIGTERM)
        began = time.monotonic()
        for child in running:
            assert child.proc is not None
            deadline = began + (grace_of or {}).get(child.kind, grace_s)
            while child.proc.poll() is None and time.monotonic() < deadline and not self.hurry:
                time.sleep(0.05)
            if child.proc.poll() is not None:
                self.log(f"{child.name} stopped ({time.monotonic() - began:.1f} s)")
            if child.proc.poll() is None:
                self.forced = True
                self.stderr.write(f"serve: {child.name} did not stop in time; killing it")
                os.killpg(child.proc.pid, signal.SIGKILL)
                child.proc.wait(timeout=10)
                if child.worker_name:
                    self._reap(child.worker_name, reason="killed at shutdown")
            else:
                try:
                    # Its own session: whatever it left behind (a work horse, a sandbox) goes too.
                    os.killpg(child.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def _stop_all(self) -> None:
        if self.children:
            self.log("stopping: the web server first, then the workers, then Redis")
        web_grace = settings.HARDTESTS_API_SYNC_TIMEOUT_S + 20
        self._stop([c for c in self.children if c.kind == "web"], web_grace)
        # Then the workers and the rest together (the janitor and the LLM stage wait for nobody).
        self._stop([c for c in self.children if c.kind != "web"], WORKER_STOP_GRACE_S,
                   grace_of={"other": OTHER_STOP_GRACE_S})
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
            self.stdout.flush()


def port_free_check(host: str, port: int) -> None:
    """Refuse a port something else already listens on, before the web server fails on it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise CommandError(f"port {port} is already in use on {host} ({exc.strerror})") from exc
