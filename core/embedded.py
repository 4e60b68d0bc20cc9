"""The embedded Redis server used when REDIS_URL is unset.

A real redis-server (Debian's package, installed by `make run`) listens on a unix socket
under var/redis/, so the web process, the RQ workers and management commands share it
without a port. The first process that needs it starts it (under a file lock, so two
workers starting together do not race) and stops it as it exits: `serve` on Ctrl-C, a one-off
command when it is done; a process that finds one running uses it and leaves it be.
"""

from __future__ import annotations

import atexit
import ctypes
import fcntl
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry


class EmbeddedRedisError(RuntimeError):
    pass


def _client(socket: Path) -> redis.Redis:
    # No retries: the callers poll on their own, and redis-py's default retries (with backoff)
    # after SHUTDOWN closes the connection held every stop of `serve` up by about 11 s.
    return redis.Redis(unix_socket_path=str(socket), socket_connect_timeout=1, socket_timeout=5,
                       retry=Retry(NoBackoff(), 0))


def _answers(socket: Path) -> bool:
    if not socket.exists():
        return False
    try:
        return bool(_client(socket).ping())
    except redis.RedisError:
        return False


_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def parent_death_kills_me(parent: int) -> None:
    """In a child just forked or started by `parent`: SIGKILL this process the moment its parent
    dies (PR_SET_PDEATHSIG; a fork does not inherit it), or at once if it already has."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl: no signal would come
        os._exit(1)


def die_with_parent() -> Callable[[], None]:
    """A Popen preexec_fn: the child gets a session of its own (a terminal's Ctrl-C reaches only
    the supervisor, which stops children once and in order) and SIGKILL the moment its parent
    dies (PR_SET_PDEATHSIG), so a supervisor killed with SIGKILL leaves nothing running."""
    parent = os.getpid()

    def setup() -> None:
        os.setsid()
        parent_death_kills_me(parent)

    return setup


def embedded_redis_enabled() -> bool:
    return not settings.REDIS_URL_FROM_ENV


def start_redis_server(directory: Path, *, daemonize: bool, die_with_me: bool = True) -> subprocess.Popen[bytes] | None:
    """Start redis-server on directory/redis.sock; return the child when not daemonized.
    die_with_me: PR_SET_PDEATHSIG, which fires when the *thread* that started it ends, so only
    from a thread that lives as long as the process."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise EmbeddedRedisError(
            "redis-server is not installed: run `make run` as root (it installs the Debian package "
            "redis-server), or `apt-get install redis-server`, or set REDIS_URL to an existing Redis."
        )
    directory.mkdir(parents=True, exist_ok=True)
    socket = directory / "redis.sock"
    # No TCP port and no persistence: the database, not Redis, is the record of every run.
    args = [
        binary,
        "--port", "0",
        "--unixsocket", str(socket),
        "--unixsocketperm", "700",
        "--dir", str(directory),
        "--save", "",
        "--appendonly", "no",
        "--pidfile", str(directory / "redis.pid"),
        "--logfile", str(directory / "redis.log"),
        "--daemonize", "yes" if daemonize else "no",
    ]
    if daemonize:
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        child = None
    else:
        # Own session, so a terminal's Ctrl-C does not stop Redis before the workers are done;
        # and it dies with whoever started it.
        if die_with_me:
            child = subprocess.Popen(args, stdout=subprocess.DEVNULL, preexec_fn=die_with_parent())  # noqa: PLW1509
        else:
            child = subprocess.Popen(args, stdout=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 10
    while not _answers(socket):
        if time.monotonic() > deadline:
            if child is not None:
                # Nobody else knows about this server: do not leave it running.
                child.kill()
                child.wait(timeout=10)
            raise EmbeddedRedisError(f"redis-server did not answer on {socket}; see {directory / 'redis.log'}")
        if child is not None and child.poll() is not None:
            raise EmbeddedRedisError(f"redis-server exited with {child.returncode}; see {directory / 'redis.log'}")
        time.sleep(0.02)
    return child


def ensure_redis(*, supervisor: bool = False) -> subprocess.Popen[bytes] | None:
    """Make sure the configured Redis answers, starting the embedded one if needed.

    Nothing outlives what started it. The process that starts the embedded server owns it:
    `serve` (supervisor=True) gets the child to watch, restart and stop; any other process (a
    one-off command: generate_tests --sync, judge, evaluate, curate ...) stops it as it exits
    (atexit, and PR_SET_PDEATHSIG for a kill; a server found running 24 minutes after such a
    command was a leak). A process that finds one answering attaches and leaves it be."""
    if not embedded_redis_enabled():
        return None
    directory = Path(settings.EMBEDDED_REDIS_DIR)
    socket = Path(settings.EMBEDDED_REDIS_SOCKET)
    if _answers(socket):
        return None
    if settings.EMBEDDED_REDIS_SUPERVISED:
        # Under `serve`, which restarts its Redis: a server started here would outlive serve.
        return None
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "start.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _answers(socket):
            return None
        socket.unlink(missing_ok=True)
        main = threading.current_thread() is threading.main_thread()
        child = start_redis_server(directory, daemonize=False, die_with_me=main or supervisor)
        assert child is not None
        if not supervisor:
            atexit.register(_stop_owned, child, socket)
        return child


def _stop_owned(child: subprocess.Popen[bytes], socket: Path) -> None:
    """At the exit of the process that started the embedded Redis (not `serve`): stop it."""
    if child.poll() is not None:
        return
    try:
        _client(socket).shutdown(nosave=True)
    except redis.RedisError:
        pass  # shutdown closes the connection under us; a server that did not answer is killed below
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait(timeout=5)


def embedded_redis_answers() -> bool:
    return embedded_redis_enabled() and _answers(Path(settings.EMBEDDED_REDIS_SOCKET))


def stop_redis() -> bool:
    """Shut the embedded server down; True when one was running."""
    if not embedded_redis_enabled():
        return False
    socket = Path(settings.EMBEDDED_REDIS_SOCKET)
    if not _answers(socket):
        return False
    try:
        _client(socket).shutdown(nosave=True)
    except redis.ConnectionError:
        pass  # shutdown closes the connection under us: that is success
    return True
