"""Content-addressed storage of test bodies.

Each body is stored once, zlib-compressed, and recorded by a Blob row keyed by its SHA-256,
so existence checks are one indexed query instead of a storage round trip. Where the
compressed body is small (at most ``HARDTESTS_BLOB_INLINE_MAX`` bytes) the row itself holds
it in ``data``; larger bodies live in Django's default storage (local disk by default, S3
through django-storages in production) under blobs/<aa>/<bb>/<sha256>.z. Most test bodies
are small, and creating one file each made the kernel the bottleneck of imports.

Readers never need to know which kind a body is: a row without ``data`` (a large body, or
one stored before bodies went inline) is read from its file.
"""

from __future__ import annotations

import hashlib
import itertools
import zlib
from collections.abc import Iterable, Iterator

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from core.storage import storage_describe
from problems.models import Blob

# Level 1: test data is mostly digits and whitespace, which compresses well even at the
# fastest level, and imports write hundreds of thousands of bodies.
_LEVEL = 1
# Inline bodies fetched per query by `blobs_iter` (at most 200 x the inline limit in memory).
_READ_CHUNK = 200


def as_bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def blob_sha256(data: str | bytes) -> str:
    return hashlib.sha256(as_bytes(data)).hexdigest()


def blob_path(sha256: str) -> str:
    return f"blobs/{sha256[:2]}/{sha256[2:4]}/{sha256}.z"


def is_inline(packed: bytes) -> bool:
    """Whether a compressed body is small enough to live in its Blob row."""
    return len(packed) <= settings.HARDTESTS_BLOB_INLINE_MAX


def stored_keys(keys: list[str], *, chunk: int = 500) -> set[str]:
    """Which of ``keys`` have a Blob row already, ``chunk`` keys per query."""
    existing: set[str] = set()
    for start in range(0, len(keys), chunk):
        existing.update(
            Blob.objects.filter(sha256__in=keys[start : start + chunk]).values_list("sha256", flat=True)
        )
    return existing


def blobs_put(bodies: Iterable[str | bytes]) -> list[tuple[str, int]]:
    """Store bodies that are not stored yet; return (sha256, size) for each, in order."""
    encoded = [as_bytes(body) for body in bodies]
    keys = [hashlib.sha256(body).hexdigest() for body in encoded]
    wanted = dict(zip(keys, encoded, strict=True))
    existing = stored_keys(list(wanted))
    rows = []
    for sha, body in wanted.items():
        if sha in existing:
            continue
        packed = zlib.compress(body, _LEVEL)
        inline = is_inline(packed)
        if not inline:
            path = blob_path(sha)
            # Another worker may have written the same body a moment ago; identical content,
            # so skipping is correct.
            if not default_storage.exists(path):
                default_storage.save(path, ContentFile(packed))
        rows.append(
            Blob(sha256=sha, size=len(body), stored_size=len(packed), data=packed if inline else None)
        )
    # A concurrent writer of the same body inserts the same row (same content, same
    # compression, same inline decision): whichever lands first is kept.
    Blob.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)
    return [(key, len(body)) for key, body in zip(keys, encoded, strict=True)]


def blob_put(data: str | bytes) -> tuple[str, int]:
    return blobs_put([data])[0]


class BlobUnavailable(RuntimeError):
    """A body recorded in the database could not be read from storage: an infrastructure
    failure (storage down, not shared between machines, incomplete copy), never bad input."""


def _file_get(sha256: str) -> bytes:
    try:
        with default_storage.open(blob_path(sha256), "rb") as handle:
            return zlib.decompress(handle.read())
    except Exception as exc:
        where = storage_describe(settings.HARDTESTS_STORAGE_URL)
        raise BlobUnavailable(
            f"test storage ({where}) could not give body {sha256[:16]}: {type(exc).__name__}: {exc}"[:800]
        ) from exc


def blobs_iter(sha256s: Iterable[str], *, chunk: int = _READ_CHUNK) -> Iterator[bytes]:
    """The bodies of ``sha256s``, in order, lazily.

    Inline bodies come ``chunk`` keys per query; a body without inline data is read from its
    file only when reached, so streaming callers (zip downloads, exports) keep memory flat.
    """
    keys = iter(sha256s)
    while batch := list(itertools.islice(keys, chunk)):
        inline = dict(
            Blob.objects.filter(sha256__in=set(batch), data__isnull=False).values_list("sha256", "data")
        )
        for sha in batch:
            packed = inline.get(sha)
            yield zlib.decompress(packed) if packed is not None else _file_get(sha)


def blob_pairs(pairs: Iterable[tuple[str, str]]) -> Iterator[tuple[bytes, bytes]]:
    """(input, output) bodies of tests given as (input_sha256, output_sha256), in order and
    batched like `blobs_iter`."""
    pairs = list(pairs)
    bodies = blobs_iter(sha for pair in pairs for sha in pair)
    for _ in pairs:
        yield next(bodies), next(bodies)


def blobs_get(sha256s: Iterable[str]) -> list[bytes]:
    return list(blobs_iter(sha256s))


def blob_get(sha256: str) -> bytes:
    return next(blobs_iter([sha256]))


def blob_text(sha256: str) -> str:
    return blob_get(sha256).decode("utf-8", errors="replace")


def preview(data: str | bytes, limit: int = 200) -> str:
    """A bounded, printable start of a body for pages that must not load the whole thing."""
    text = as_bytes(data)[: limit * 4].decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[: limit - 1] + "…"
