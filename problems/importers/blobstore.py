"""Storing hundreds of thousands of test bodies fast: the import path of problems.blobs.

Same layout and encoding as `problems.blobs.blobs_put` (zlib at the same level, a Blob row
per body, the compressed body inline in the row when it is at most
``HARDTESTS_BLOB_INLINE_MAX`` bytes, else a file ``blobs/aa/bb/<sha256>.z``), but built for
batches: existence is one query per 900 keys, rows go in with one ``executemany``, and on
local disk (the default storage) the few large files are written with plain ``os`` calls,
each directory created once per process. Django's storage API costs about ten system calls
per file (name validation, ``exists``, ``makedirs``, ``chmod``). Other storages (S3) go
through `blobs_put` unchanged.

Inside `background_writes` the files are written by one thread while the import goes on
parsing and inserting the next chunk; the import waits for it (and fails if it failed)
before it commits. One thread, not many: parallel file creation on one file system
contends on its journal and was slower than one writer in measurements.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import sys
import threading
import zlib
from collections.abc import Iterator, Sequence

from django.core.files.storage import FileSystemStorage, storages
from django.db import connection
from django.utils import timezone

from problems.blobs import _LEVEL, blob_path, blobs_put, is_inline, stored_keys
from problems.models import Blob

_LOOKUP = 900  # below SQLite's historical 999-variable limit
_made_dirs: set[str] = set()
_current: threading.local = threading.local()


def _write(path: str, packed: bytes, mode: int) -> None:
    folder = os.path.dirname(path)
    if folder not in _made_dirs:
        os.makedirs(folder, exist_ok=True)
        _made_dirs.add(folder)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        # Written by another import, or left half-written by one that crashed: same content
        # either way once complete, so only a file of the wrong size is replaced.
        if os.stat(path).st_size == len(packed):
            return
        partial = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(partial, "wb") as handle:
            handle.write(packed)
        os.replace(partial, path)
        return
    try:
        view = memoryview(packed)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


class _Writer:
    """One thread writing (path, packed) pairs from a bounded queue."""

    def __init__(self, mode: int) -> None:
        self.mode = mode
        self.queue: queue.Queue[list[tuple[str, bytes]] | None] = queue.Queue(maxsize=8)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="blob-writer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (batch := self.queue.get()) is not None:
            if self.error is None:
                try:
                    for path, packed in batch:
                        _write(path, packed, self.mode)
                except BaseException as exc:  # reported to the import by `finish`
                    self.error = exc

    def put(self, batch: list[tuple[str, bytes]]) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(batch)  # blocks when 8 batches wait: memory stays bounded

    def finish(self) -> None:
        self.queue.put(None)
        self.thread.join()
        if self.error is not None:
            raise self.error


@contextlib.contextmanager
def background_writes() -> Iterator[None]:
    """Blob files of `blobs_store` calls inside are written by one background thread."""
    storage = storages["default"]
    if not isinstance(storage, FileSystemStorage) or getattr(_current, "writer", None) is not None:
        yield
        return
    writer = _Writer(storage.file_permissions_mode or 0o644)
    _current.writer = writer
    # Each system call of the writer releases the GIL and must win it back from the import's
    # CPU-bound thread, which by default keeps it for 5 ms: a short interval lets file writes
    # and parsing really overlap.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)
    try:
        yield
    except BaseException:
        _current.writer = None
        with contextlib.suppress(BaseException):
            writer.finish()
        raise
    finally:
        sys.setswitchinterval(interval)
    _current.writer = None
    writer.finish()


def blobs_store(bodies: Sequence[bytes]) -> list[tuple[str, int]]:
    """Store bodies not stored yet; (sha256, size) for each, in order. Call inside the import's transaction."""
    storage = storages["default"]
    if not isinstance(storage, FileSystemStorage):
        return blobs_put(bodies)
    keys = [hashlib.sha256(body).hexdigest() for body in bodies]
    wanted = dict(zip(keys, bodies, strict=True))
    existing = stored_keys(list(wanted), chunk=_LOOKUP)
    new = [(sha, body) for sha, body in wanted.items() if sha not in existing]
    if new:
        packed = [zlib.compress(body, _LEVEL) for _, body in new]
        inline = [is_inline(p) for p in packed]
        root = storage.location
        files = [
            (os.path.join(root, blob_path(sha)), p)
            for (sha, _), p, small in zip(new, packed, inline, strict=True)
            if not small
        ]
        if files:
            writer: _Writer | None = getattr(_current, "writer", None)
            if writer is not None:
                writer.put(files)
            else:
                mode = storage.file_permissions_mode or 0o644
                for path, data in files:
                    _write(path, data, mode)
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with connection.cursor() as cursor:
            # Same body, same row: a concurrent import of it inserts an identical one.
            cursor.executemany(
                f"INSERT INTO {Blob._meta.db_table} (sha256, size, stored_size, data, created_at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (sha256) DO NOTHING",
                [
                    (sha, len(body), len(p), p if small else None, now)
                    for (sha, body), p, small in zip(new, packed, inline, strict=True)
                ],
            )
    return [(key, len(body)) for key, body in zip(keys, bodies, strict=True)]
