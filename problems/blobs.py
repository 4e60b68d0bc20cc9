"""Content-addressed storage of test bodies.

Each body is stored once, compressed, under blobs/<aa>/<bb>/<sha256>.z in Django's default
storage (local disk by default, S3 through django-storages in production). A Blob row
records it, so existence checks are one indexed query instead of a storage round trip.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from problems.models import Blob

# Level 1: test data is mostly digits and whitespace, which compresses well even at the
# fastest level, and imports write hundreds of thousands of bodies.
_LEVEL = 1


def as_bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def blob_sha256(data: str | bytes) -> str:
    return hashlib.sha256(as_bytes(data)).hexdigest()


def blob_path(sha256: str) -> str:
    return f"blobs/{sha256[:2]}/{sha256[2:4]}/{sha256}.z"


def blobs_put(bodies: Iterable[str | bytes]) -> list[tuple[str, int]]:
    """Store bodies that are not stored yet; return (sha256, size) for each, in order."""
    encoded = [as_bytes(body) for body in bodies]
    keys = [hashlib.sha256(body).hexdigest() for body in encoded]
    wanted = dict(zip(keys, encoded, strict=True))
    existing: set[str] = set()
    key_list = list(wanted)
    for start in range(0, len(key_list), 500):
        chunk = key_list[start : start + 500]
        existing.update(Blob.objects.filter(sha256__in=chunk).values_list("sha256", flat=True))
    rows = []
    for sha, body in wanted.items():
        if sha in existing:
            continue
        packed = zlib.compress(body, _LEVEL)
        path = blob_path(sha)
        # Another worker may have written the same body a moment ago; identical content,
        # so skipping is correct.
        if not default_storage.exists(path):
            default_storage.save(path, ContentFile(packed))
        rows.append(Blob(sha256=sha, size=len(body), stored_size=len(packed)))
    Blob.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)
    return [(key, len(body)) for key, body in zip(keys, encoded, strict=True)]


def blob_put(data: str | bytes) -> tuple[str, int]:
    return blobs_put([data])[0]


def blob_get(sha256: str) -> bytes:
    with default_storage.open(blob_path(sha256), "rb") as handle:
        return zlib.decompress(handle.read())


def blob_text(sha256: str) -> str:
    return blob_get(sha256).decode("utf-8", errors="replace")


def preview(data: str | bytes, limit: int = 200) -> str:
    """A bounded, printable start of a body for pages that must not load the whole thing."""
    text = as_bytes(data)[: limit * 4].decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[: limit - 1] + "…"
