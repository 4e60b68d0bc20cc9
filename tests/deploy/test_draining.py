"""gunicorn's worker answers every connection it has taken, and every one waiting in its accept
queue, before it exits on SIGTERM (hardtests_web.ops.draining): none is reset without an answer.
And a connection that comes after the worker has drained is refused, not completed by the kernel
and then reset as the socket closes (the arbiter closes the door first).

Deterministic: the worker is stopped (SIGSTOP) while clients connect and send their requests, so
they wait in the listening socket's accept queue when the worker, continued, meets its SIGTERM;
a worker that pauses between its drain and the close of its socket holds the window open.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.deploy.conftest import free_port

pytestmark = [pytest.mark.slow]

APP = '''
import os, time
from hardtests_web.ops.draining import DrainingWorker

def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]

class PausingWorker(DrainingWorker):
    """Drains, says so, and waits 2 s before the worker closes its listening socket."""
    def drain(self):
        drained = self._drained
        super().drain()
        if not drained and self._drained:
            open(os.environ["DRAIN_MARKER"], "w").close()
            time.sleep(2)
'''


def _started(master: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as probe:
                probe.sendall(b"GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                if probe.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        assert master.poll() is None and time.monotonic() < deadline, "gunicorn did not start"
        time.sleep(0.2)


def _worker_of(master: int) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == master:
                    return int(entry.name)
            except (OSError, IndexError, ValueError):
                continue
    raise AssertionError("gunicorn has no worker")


def _answer(client: socket.socket) -> str:
    try:
        data = b""
        while chunk := client.recv(4096):
            data += chunk
        return data.split(b"\r\n", 1)[0].decode() or "closed without an answer"
    except ConnectionResetError:
        return "reset"
    finally:
        client.close()


@pytest.mark.parametrize("worker_class", ["hardtests_web.ops.draining.DrainingWorker"])
def test_connections_waiting_when_sigterm_comes_are_answered_not_reset(tmp_path: Path, worker_class: str) -> None:
    (tmp_path / "drainapp.py").write_text(APP)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    master = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-k", worker_class, "-w", "1", "--threads", "2",
         "-b", f"127.0.0.1:{port}", "--graceful-timeout", "20", "drainapp:app"],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _started(master, port)
        worker = _worker_of(master.pid)
        os.kill(worker, signal.SIGSTOP)
        clients = []
        for _ in range(6):
            client = socket.create_connection(("127.0.0.1", port), timeout=30)  # completed by the kernel
            client.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
            clients.append(client)
        master.send_signal(signal.SIGTERM)
        time.sleep(1)  # the master has closed its copy of the socket and signalled the worker
        os.kill(worker, signal.SIGCONT)
        answers = [_answer(client) for client in clients]
        assert master.wait(timeout=60) == 0
    finally:
        if master.poll() is None:
            master.kill()
            master.wait()
    assert answers == ["HTTP/1.1 200 OK"] * len(clients), answers


def test_a_connection_after_the_drain_is_refused_never_completed_and_reset(tmp_path: Path) -> None:
    """Run with the project's own gunicorn settings (their `on_starting` closes the door)."""
    (tmp_path / "drainapp.py").write_text(APP)
    marker = tmp_path / "drained"
    port = free_port()
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}", "DRAIN_MARKER": str(marker)}
    master = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "python:hardtests_web.ops.gunicorn", "-k", "drainapp.PausingWorker",
         "-w", "1", "--threads", "2", "-b", f"127.0.0.1:{port}", "--graceful-timeout", "20", "drainapp:app"],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _started(master, port)
        master.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert time.monotonic() < deadline, "the worker did not drain"
            time.sleep(0.02)
        # the worker has taken its last connections and holds the socket open for 2 s more
        started = time.monotonic()
        try:
            # (a dropped SYN is sent again after 1, 3, 7, 15 and 31 s: room for a slow close)
            client = socket.create_connection(("127.0.0.1", port), timeout=45)
        except ConnectionRefusedError:
            outcome = "refused"
        else:
            client.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
            outcome = _answer(client)
        waited = time.monotonic() - started
        assert master.wait(timeout=60) == 0
    finally:
        if master.poll() is None:
            master.kill()
            master.wait()
    # refused: the client knows the server never saw it (its SYN was dropped, then the socket
    # closed); without the door the kernel completes it, and the close resets it
    assert outcome == "refused", outcome
    assert waited >= 1.0, f"refused after {waited:.2f} s: the SYN was not dropped but met a closed socket"
