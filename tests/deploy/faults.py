"""A `serve` stack under a bounded load, for the fault tests: start it, hurt it, read what the
clients got.

Every answer is recorded with its time. The checks are the operator's: no 500, no connection
closed without an answer while the server lives, a verdict only when it is the right one, every
refusal a 429/503 with Retry-After and a code, and a right answer again within 30 s of a fault's
end.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tests.deploy.conftest import free_port, pid_alive, processes_mentioning, wait_http

GOOD_PY = "a, b = map(int, input().split())\nprint(a + b)\n"
WRONG_PY = "a, b = map(int, input().split())\nprint(a - b)\n"
GOOD_CPP = "#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);}\n"
WRONG_CPP = GOOD_CPP.replace("a+b", "a-b")
# A program that takes a moment (CPU), so requests are in flight when a signal comes.
SLOW_PY = "s = 0\nfor i in range(3 * 10**6):\n    s += i\na, b = map(int, input().split())\nprint(a + b)\n"

SEED = """
from django.contrib.auth.models import User
from api.tokens import token_create
from problems.models import Problem
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
p = Problem.objects.create(source="fault", pid="ab", title="A+B", time_limit_ms=5000, memory_limit_mb=256)
s = suite_create(problem=p, origin="generated")
suite_add_tests(suite=s, tests=[NewTest(input="1 2\\n", output="3\\n", kind="direct"),
    NewTest(input="5 7\\n", output="12\\n", kind="regular"),
    NewTest(input="1000000000 1000000000\\n", output="2000000000\\n", kind="hacking")])
suite_activate(suite=s)
print("TOKEN", token_create(user=User.objects.create_user("trainer"), name="t", rate_limit_per_minute=100000).secret)
"""

# What a caller may be told instead of a verdict.
REFUSALS = {"no_workers", "workers_unhealthy", "redis_unavailable", "database_unavailable", "timeout",
            "judging_error", "shutting_down", "queue_full", "rate_limited"}


def stack_env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HARDTESTS_", "DATABASE_URL", "REDIS_URL", "AWS_", "DJANGO_"))}
    env.update(
        HARDTESTS_VAR_DIR=str(root / "var"), HARDTESTS_MEDIA_ROOT=str(root / "var" / "media"),
        HARDTESTS_SANDBOX_CACHE=str(root / "sandbox-cache"), DATABASE_URL=f"sqlite:///{root / 'db.sqlite3'}",
        DEBUG="0", SECRET_KEY="fault-test-key", PYTHONUNBUFFERED="1",
        HARDTESTS_SANDBOX_WORKERS="2", HARDTESTS_GENERATION_WORKERS="0", HARDTESTS_LLM_WORKERS="0",
        HARDTESTS_WEB_WORKERS="1", HARDTESTS_WEB_THREADS="16", HARDTESTS_API_SYNC_TIMEOUT_S="20",
        HARDTESTS_WORKER_BEAT_S="1", HARDTESTS_WORKER_DEAD_S="4", HARDTESTS_WORKER_CHECK_S="2",
        HARDTESTS_JANITOR_FAST_S="2", HARDTESTS_JANITOR_PERIOD_S="10", HARDTESTS_HEALTH_TOKEN="health",
    )
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str, timeout: float = 300) -> str:
    done = subprocess.run([sys.executable, str(REPO / "manage.py"), *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


_SQLITE_TEMPLATE: list[tuple[Path, str]] = []


def seed(env: dict[str, str]) -> str:
    """Migrate and seed the stack's database; its API token. A SQLite database is a copy of one
    migrated and seeded once per test session (migrating took 5-8 s of each test)."""
    url = env["DATABASE_URL"]
    if not url.startswith("sqlite:///"):
        manage(env, "migrate", "--noinput")
        return re.findall(r"TOKEN (\S+)", manage(env, "shell", "-c", SEED))[-1]
    if not _SQLITE_TEMPLATE:
        template = Path(tempfile.mkdtemp(prefix="hardtests-fault-template-"))
        atexit.register(shutil.rmtree, template, ignore_errors=True)
        template_env = stack_env(template)  # the same secret key: the token's hash holds in the copy
        manage(template_env, "migrate", "--noinput")
        token = re.findall(r"TOKEN (\S+)", manage(template_env, "shell", "-c", SEED))[-1]
        _SQLITE_TEMPLATE.append((template / "db.sqlite3", token))
    database, token = _SQLITE_TEMPLATE[0]
    target = Path(url.removeprefix("sqlite:///"))
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(database, target)
    return token


class Stack:
    """One `serve` (web + workers + janitor, and the embedded Redis unless REDIS_URL is set)."""

    def __init__(self, root: Path, env: dict[str, str], *, port: int | None = None) -> None:
        self.root, self.env = root, env
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = root / "serve.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.offset = 0
        self.token = ""

    def start(self) -> None:
        self.offset = self.log.stat().st_size if self.log.exists() else 0
        self.proc = subprocess.Popen(
            [sys.executable, str(REPO / "manage.py"), "serve", "--port", str(self.port), "--no-demo"],
            env=self.env, cwd=REPO, stdout=self.log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
        wait_http(f"{self.base}/healthz", timeout=180, alive=self.alive)
        self.wait_for(lambda: self.verify(GOOD_PY)[0] == 200, "a first verification", timeout=120)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def text(self) -> str:
        return self.log.read_text(errors="replace")[self.offset:]

    def pids(self) -> dict[str, int]:
        """The latest pid of each child this serve started."""
        return {name: int(pid) for name, pid in re.findall(r"started (\S+) \(pid (\d+)\)", self.text())}

    def verify(self, code: str, timeout: float = 60, language: str = "python3") -> tuple[int, dict[str, Any]]:
        return post(f"{self.base}/api/v1/verify", {"problem": "fault:ab", "language": language, "code": code},
                    self.token, timeout=timeout)

    def wait_for(self, predicate: Any, what: str, *, timeout: float = 60) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.alive(), f"serve exited while waiting for {what}: {self.text()[-4000:]}"
            try:
                if predicate():
                    return time.monotonic()
            except OSError:
                pass
            time.sleep(0.3)
        raise AssertionError(f"no {what} within {timeout} s: {self.text()[-4000:]}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 120) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
            raise

    def left_running(self, timeout: float = 15) -> list[int]:
        """Processes of this stack still alive after it ended (waits for them to go)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            left = processes_mentioning(self.root)
            if not left:
                return []
            time.sleep(0.2)
        return [pid for pid in processes_mentioning(self.root) if pid_alive(pid)]


def post(url: str, body: Any, token: str | None, *, timeout: float = 60) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {token}"} if token else {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw, status, headers = response.read(), response.status, response.headers
    except urllib.error.HTTPError as exc:
        raw, status, headers = exc.read(), exc.code, exc.headers
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = {"raw": raw[:300].decode("utf-8", "replace")}
    answer["_retry_after"] = headers.get("Retry-After")
    return status, answer


@dataclass
class Answer:
    at: float
    expected: str
    status: int | None  # None: no HTTP answer
    body: dict[str, Any] = field(default_factory=dict)
    failure: str = ""  # refused (nothing listening) or dropped (a connection closed without an answer)
    code: str = ""  # the program sent
    language: str = "python3"


class Load:
    """`clients` threads verifying a right and a wrong program in turn until stopped."""

    def __init__(self, stack: Stack, *, clients: int = 4, programs: tuple[tuple[str, str], ...] = (
            (GOOD_PY, "AC"), (WRONG_PY, "WA")), language: str = "python3", pause_s: float = 0.05) -> None:
        """Every request sends a program never seen before (a numbered comment): each one is
        judged and compiled, so neither the verdict cache nor the compile cache hides the
        machine's faults."""
        self.stack, self.token, self.clients, self.programs = stack, stack.token, clients, programs
        self.language, self.pause_s = language, pause_s
        self.answers: list[Answer] = []
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()

    def _client(self, index: int) -> None:
        n = index
        while not self.stopping.is_set():
            code, expected = self.programs[n % len(self.programs)]
            code += f"{'#' if self.language == 'python3' else '//'} fresh {id(self)} {index} {n}\n"
            n += 1
            started = time.monotonic()
            body = {"problem": "fault:ab", "language": self.language, "code": code}
            try:
                status, answer = post(f"{self.stack.base}/api/v1/verify", body, self.token, timeout=90)
                record = Answer(started, expected, status, answer)
            except urllib.error.URLError as exc:
                reason = exc.reason
                refused = isinstance(reason, ConnectionRefusedError)
                record = Answer(started, expected, None, failure="refused" if refused else f"dropped: {reason!r}")
            except (http.client.RemoteDisconnected, ConnectionResetError, http.client.IncompleteRead) as exc:
                record = Answer(started, expected, None, failure=f"dropped: {exc!r}")
            except TimeoutError as exc:
                record = Answer(started, expected, None, failure=f"no answer in 90 s: {exc!r}")
            record.code, record.language = code, self.language
            with self.lock:
                self.answers.append(record)
            if record.status != 200:
                time.sleep(0.3)  # as a client that reads Retry-After would, roughly
            self.stopping.wait(self.pause_s)

    def start(self) -> Load:
        for i in range(self.clients):
            thread = threading.Thread(target=self._client, args=(i,), daemon=True)
            thread.start()
            self.threads.append(thread)
        return self

    def stop(self) -> list[Answer]:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=120)
        return list(self.answers)

    def since(self, at: float) -> list[Answer]:
        with self.lock:
            return [a for a in self.answers if a.at >= at]

    def right_answer_after(self, at: float, *, within_s: float = 30) -> float:
        """Seconds from `at` to the first right 200 started after it (fails past within_s)."""
        deadline = at + within_s
        while time.monotonic() < deadline + 1:
            good = [a for a in self.since(at) if a.status == 200]
            if good:
                return min(a.at for a in good) - at
            time.sleep(0.2)
        raise AssertionError(f"no right answer within {within_s} s of the fault's end; since then: "
                             f"{summary(self.since(at))}; before: {summary([a for a in self.answers if a.at < at])}; "
                             f"serve's log: {self.stack.text()[-3000:]}")


def summary(answers: list[Answer]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for a in answers:
        key = f"{a.status} {a.body.get('code', a.body.get('verdict', ''))}" if a.status else a.failure[:60]
        counts[key] = counts.get(key, 0) + 1
    return counts


def assert_truthful(answers: list[Answer], *, refused_ok: bool = False, dropped_ok: bool = False) -> None:
    """No 500; every verdict right; every refusal a 429/503 with a code and Retry-After;
    no connection closed without an answer (unless the server itself was killed)."""
    assert answers, "the load made no request"
    problems = []
    for a in answers:
        if a.status is None:
            if a.failure == "refused" and refused_ok:
                continue
            if a.failure.startswith("dropped") and dropped_ok:
                continue
            problems.append(f"no answer: {a.failure}")
        elif a.status == 200:
            if a.body.get("verdict") != a.expected or a.body.get("reward") != (1 if a.expected == "AC" else 0):
                problems.append(f"wrong verdict: expected {a.expected}, got {a.body}")
        elif a.status in (429, 503):
            if a.body.get("code") not in REFUSALS or not a.body.get("_retry_after"):
                problems.append(f"{a.status} without a known code or Retry-After: {a.body}")
        else:
            problems.append(f"HTTP {a.status}: {a.body}")
    assert not problems, f"{len(problems)} bad answers of {len(answers)} ({summary(answers)}): {problems[:5]}"


def fill(path: Path) -> None:
    """Write `path` until its filesystem has not one byte left (smaller and smaller writes)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def stack_dir(prefix: str) -> Iterator[Path]:
    """A temporary folder for a stack's files (logs, `var/`, its sandbox cache), removed at the
    end unless HARDTESTS_KEEP_FAULT_DIRS is set. World-traversable: the sandbox runs programs as
    nobody from the stack's sandbox cache."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    try:
        yield path
    finally:
        if not os.environ.get("HARDTESTS_KEEP_FAULT_DIRS"):
            shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def small_disk(path: Path, size_mb: int = 48) -> Iterator[Path]:
    """A filesystem of its own (a tmpfs) at `path`, to fill; skips where none can be mounted."""
    import pytest

    path.mkdir(parents=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "tmpfs", str(path)]).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
