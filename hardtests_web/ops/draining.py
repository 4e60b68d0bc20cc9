"""gunicorn's threaded worker, made to answer every connection it has taken before it exits.

gunicorn's `gthread` worker, on SIGTERM (or after `max_requests`), leaves its loop and closes
its listening sockets. Two kinds of connection were then closed without a response:

- those it had accepted whose request it had not read yet (a connection is read only once the
  poller says it is readable, on the next pass of the loop: a pass the worker no longer makes);
- those the kernel had completed in the listening socket's accept queue, reset when the last
  process holding the socket closes it.

A client cannot tell either from a crash in the middle of its request. Here, as the worker
stops (its thread pool is shut down right after the loop), it takes every connection still in
the accept queue and hands those and the unread ones to its threads before closing: each gets
an answer (a request read after SIGTERM is answered 503 `shutting_down` with Retry-After by the
API, core.lifecycle). Idle keep-alive connections are closed, as HTTP allows, unless a request
is already waiting on one.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import selectors
import socket
import struct
import sys
from concurrent import futures
from functools import partial
from typing import Any

from gunicorn import util as gunicorn_util
from gunicorn.workers.gthread import TConn, ThreadWorker

# Classic BPF, run by the kernel on each TCP segment a listening socket receives (the data
# starts at the TCP header): a segment with SYN set and ACK clear (a new connection) is dropped,
# any other kept whole. A handshake already under way still completes and is drained.
_SO_ATTACH_FILTER = getattr(socket, "SO_ATTACH_FILTER", 26) if sys.platform.startswith("linux") else None
_NO_NEW_CONNECTIONS = (
    (0x30, 0, 0, 13),          # ldb [13]        the TCP flags byte
    (0x54, 0, 0, 0x12),        # and #SYN|ACK
    (0x15, 0, 1, 0x02),        # jeq #SYN        a bare SYN: drop, else keep
    (0x06, 0, 0, 0),           # ret #0          drop
    (0x06, 0, 0, 0xFFFFFFFF),  # ret #-1         keep
)


def door_close(listener: socket.socket) -> bool:
    """Make the kernel drop new connections to `listener` (their SYN) while keeping those whose
    handshake is done or under way, so draining can take every connection the socket will ever
    complete before it is closed. Without it, one completed between the workers' last accept and
    the close of the socket is reset: a client cannot tell that from a crash in its request. A
    client whose SYN is dropped sends it again after a second, and is refused (the socket is
    closed by then) or taken by the next server on the port. False where the kernel refuses."""
    if _SO_ATTACH_FILTER is None:
        return False
    code = b"".join(struct.pack("HBBI", *insn) for insn in _NO_NEW_CONNECTIONS)
    buffer = ctypes.create_string_buffer(code)
    program = struct.pack("HL", len(_NO_NEW_CONNECTIONS), ctypes.addressof(buffer))
    try:
        listener.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER, program)
    except OSError:
        return False
    return True


def door_close_on_stop(server: Any) -> None:
    """gunicorn's `on_starting` hook (hardtests_web.ops.gunicorn): as the arbiter stops (SIGTERM,
    SIGINT, SIGQUIT), close the door of its listening sockets before it closes its own copies
    and signals the workers, which then drain (DrainingWorker) what the sockets completed.

    Not when the socket outlives this server: systemd's socket activation holds it for the next
    start, and during a USR2 upgrade the other master shares it."""
    stop = server.stop

    def stop_with_the_door_closed(graceful: bool = True) -> None:
        if server.reexec_pid == 0 and server.master_pid == 0 and not server.systemd:
            for listener in server.LISTENERS:
                with contextlib.suppress(OSError, AttributeError):
                    if listener.sock.type == socket.SOCK_STREAM and listener.sock.family != socket.AF_UNIX:
                        door_close(listener.sock)
        stop(graceful)

    server.stop = stop_with_the_door_closed


# A connection taken while draining whose client sends nothing holds a thread this long at most.
DRAIN_READ_TIMEOUT_S = 5.0


class _DrainingPool(futures.ThreadPoolExecutor):
    """The worker's thread pool; shutting it down (what the worker does as its loop ends) first
    hands the worker's last connections to the threads."""

    def __init__(self, worker: DrainingWorker, max_workers: int) -> None:
        super().__init__(max_workers=max_workers)
        self.worker = worker

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.worker.drain()
        super().shutdown(wait, cancel_futures=cancel_futures)


def _request_waiting(sock: socket.socket) -> bool:
    try:
        return bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except OSError:  # nothing yet (EAGAIN), or the client has gone
        return False


class DrainingWorker(ThreadWorker):  # type: ignore[misc]
    """`worker_class = "hardtests_web.ops.draining.DrainingWorker"` (hardtests_web.ops.gunicorn)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._unread: dict[int, TConn] = {}  # accepted, request not read yet
        self._drained = False

    def get_thread_pool(self) -> futures.ThreadPoolExecutor:
        return _DrainingPool(self, self.cfg.threads)

    def accept(self, server: Any, listener: Any) -> bool:
        # gthread's own, which also remembers the connection until its request is read
        try:
            sock, client = listener.accept()
        except OSError:
            return False
        conn = TConn(self.cfg, sock, client, server)
        self.nr_conns += 1
        with self._lock:
            self._unread[id(conn)] = conn
            self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_client_socket_readable, conn))
        return True

    def on_client_socket_readable(self, conn: TConn, client: Any) -> None:
        self._unread.pop(id(conn), None)
        super().on_client_socket_readable(conn, client)

    def drain(self) -> None:
        """Hand every connection this worker still holds, and every one waiting in its listening
        sockets' accept queue, to the threads (once, as the worker stops)."""
        if self._drained or self.alive:
            return
        self._drained = True
        last = list(self._unread.values())
        self._unread.clear()
        with self._lock:
            idle = list(self._keep)
            self._keep.clear()
        for conn in idle:
            if _request_waiting(conn.sock):
                last.append(conn)
            else:
                self.nr_conns -= 1
                conn.close()
        for listener in self.sockets:
            while True:
                try:
                    sock, client = listener.accept()
                except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                    break
                except OSError:
                    break
                self.nr_conns += 1
                last.append(TConn(self.cfg, sock, client, listener.getsockname()))
        for conn in last:
            with self._lock, contextlib.suppress(KeyError, ValueError, OSError):
                self.poller.unregister(conn.sock)
            try:
                conn.init()
                conn.sock.settimeout(DRAIN_READ_TIMEOUT_S)
            except OSError:
                self.nr_conns -= 1
                conn.close()
                continue
            self._wrap_future(self.tpool.submit(self.handle, conn), conn)
        if last:
            self.log.info("draining: answering %d connection(s) taken before stopping", len(last))


# gunicorn's own refusals (a request line over limit_request_line, too many or too large
# headers, a malformed request), answered before the application sees the request: in the API's
# JSON shape {"code", "detail"} instead of gunicorn's HTML page, so a client parses every error
# the same way.
_GUNICORN_CODES = {400: "bad_request", 403: "forbidden", 431: "headers_too_large", 500: "internal",
                   501: "not_implemented"}


def json_error_write(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    code = _GUNICORN_CODES.get(status_int, "bad_request")
    if "Request Line is too large" in mesg:
        code = "request_line_too_long"
    detail = f"{reason}: {mesg}" if mesg else reason
    body = json.dumps({"code": code, "detail": detail[:500]}).encode()
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1")
    gunicorn_util.write_nonblock(sock, head + body)


def json_errors_install() -> None:
    """Make gunicorn write its refusals as JSON (hardtests_web.ops.gunicorn calls it at load)."""
    gunicorn_util.write_error = json_error_write
