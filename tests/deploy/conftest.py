"""Helpers of the deployment tests: free ports, waiting for HTTP, finding a serve's processes."""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method: str, url: str, body: Any = None, *, token: str | None = None,
         timeout: float = 120) -> tuple[int, Any]:
    """(status, parsed JSON or text) of one request; HTTP errors are answers, not exceptions."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode("utf-8", "replace")


def wait_http(url: str, *, timeout: float = 120, alive: Any = None) -> None:
    """Wait until url answers at all (any status); `alive()` False means give up at once."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if alive is not None and not alive():
            raise RuntimeError(f"the server exited before {url} answered")
        try:
            urllib.request.urlopen(url, timeout=5).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


def pid_alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def processes_mentioning(path: Path) -> list[int]:
    """Live processes whose environment or command line mentions `path` (a directory unique to
    a test). Both: redis-server rewrites its process title over its environment."""
    needle = str(path).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            text = (entry / "environ").read_bytes() + b"\0" + (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in text and pid_alive(int(entry.name)):
            found.append(int(entry.name))
    return found
