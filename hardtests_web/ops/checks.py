"""Can this process reach what it serves from? The database and the test-body storage.

Workers run these at start and periodically (hardtests_web/ops/worker.py); /healthz/deep
runs them too. Each check returns None when fine, else a one-line reason naming the part.
"""

from __future__ import annotations

import time
import uuid

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection

from core.storage import storage_describe

# A body known to live in storage (not inline), found once per process: reading it proves
# this machine sees the same storage as the machines that wrote the bodies.
_sample: dict[str, str | None] = {}


def database_check() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return None
    except Exception as exc:
        # A broken connection is dropped so the next check connects afresh.
        connection.close()
        return f"database: {type(exc).__name__}: {exc}"[:500]


def _storage_name() -> str:
    return f"storage {storage_describe(settings.HARDTESTS_STORAGE_URL)}"


def storage_read_check() -> str | None:
    """Read one stored body (or, before any exists, ask the storage about a key)."""
    from problems.blobs import BlobUnavailable, blob_get, blob_path
    from problems.models import Blob

    try:
        if _sample.get("sha") is None:
            # Looked up again until a body stored as a file exists (one cheap indexed query):
            # a worker started on an empty storage must prove it reads the first real body.
            _sample["sha"] = Blob.objects.filter(data__isnull=True).values_list("sha256", flat=True).first()
    except Exception as exc:
        connection.close()
        return f"database: {type(exc).__name__}: {exc}"[:500]
    try:
        if _sample["sha"] is not None:
            blob_get(_sample["sha"])
        else:
            default_storage.exists(blob_path("0" * 64))
        return None
    except BlobUnavailable as exc:
        # Pick another sample next time, in case this body was deliberately removed.
        _sample.pop("sha", None)
        return f"{_storage_name()}: {exc}"[:500]
    except Exception as exc:
        return f"{_storage_name()}: {type(exc).__name__}: {exc}"[:500]


def storage_write_check() -> str | None:
    """Write, read back and delete a small probe object (deep health)."""
    name = f"health/probe-{uuid.uuid4().hex}"
    payload = f"hardtests health probe {time.time()}".encode()
    try:
        saved = default_storage.save(name, ContentFile(payload))
        try:
            with default_storage.open(saved, "rb") as handle:
                if handle.read() != payload:
                    return f"{_storage_name()}: the probe read back differs from what was written"
        finally:
            default_storage.delete(saved)
        return None
    except Exception as exc:
        return f"{_storage_name()}: {type(exc).__name__}: {exc}"[:500]


def worker_checks() -> list[str]:
    """What a worker needs: the database answers and the storage gives its bodies."""
    problem = database_check()
    if problem:
        return [problem]
    problem = storage_read_check()
    return [problem] if problem else []
