"""Test bodies inline in their Blob row when small, in a file when large, readable either way."""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.test import override_settings

from problems import blobs
from problems.blobs import (
    blob_get,
    blob_path,
    blob_put,
    blob_sha256,
    blob_text,
    blobs_get,
    blobs_iter,
    blobs_put,
)
from problems.importers import blobstore
from problems.importers.blobstore import background_writes, blobs_store
from problems.models import Blob
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

LIMIT = 256
SMALL = b"3\n1 2 3\n" * 20  # compresses far below LIMIT
# Random bytes do not compress: the stored body is larger than LIMIT.
LARGE = random.Random(7).randbytes(4 * LIMIT)


def _file(sha: str) -> Path:
    return Path(settings.MEDIA_ROOT) / blob_path(sha)


def _data(sha: str) -> bytes | None:
    data = Blob.objects.values_list("data", flat=True).get(sha256=sha)
    return None if data is None else bytes(data)


@pytest.fixture(autouse=True)
def _inline_limit():
    with override_settings(HARDTESTS_BLOB_INLINE_MAX=LIMIT):
        yield


@pytest.mark.parametrize("put", ["blobs_put", "blobs_store"])
def test_small_bodies_go_in_the_row_and_large_ones_in_a_file(put):
    store = blobs_put if put == "blobs_put" else blobs_store
    with transaction.atomic():
        (small, small_size), (large, large_size) = store([SMALL, LARGE])
    assert (small_size, large_size) == (len(SMALL), len(LARGE))
    assert _data(small) == zlib.compress(SMALL, 1) and not _file(small).exists()
    assert _data(large) is None and _file(large).exists()
    row = Blob.objects.get(sha256=large)
    assert row.size == len(LARGE) and row.stored_size == _file(large).stat().st_size > LIMIT
    assert blob_get(small) == SMALL and blob_get(large) == LARGE
    assert blob_text(small) == SMALL.decode()


def test_the_limit_is_on_the_compressed_size_and_inclusive():
    body = random.Random(1).randbytes(200)
    packed = zlib.compress(body, 1)
    with override_settings(HARDTESTS_BLOB_INLINE_MAX=len(packed)):
        sha, _ = blob_put(body)
    assert _data(sha) == packed and not _file(sha).exists()
    Blob.objects.all().delete()
    with override_settings(HARDTESTS_BLOB_INLINE_MAX=len(packed) - 1):
        sha, _ = blob_put(body)
    assert _data(sha) is None and _file(sha).exists()
    assert blob_get(sha) == body


def test_a_limit_of_zero_keeps_every_body_in_a_file():
    with override_settings(HARDTESTS_BLOB_INLINE_MAX=0), transaction.atomic():
        shas = [sha for sha, _ in blobs_put([b"", b"1\n"])] + [sha for sha, _ in blobs_store([b"2\n"])]
    assert Blob.objects.filter(data__isnull=False).count() == 0
    assert all(_file(sha).exists() for sha in shas)
    assert blobs_get(shas) == [b"", b"1\n", b"2\n"]


def test_mixed_reads_keep_order_and_duplicates_across_chunks():
    bodies = [f"{i}\n".encode() for i in range(7)] + [LARGE]
    shas = [sha for sha, _ in blobs_put(bodies)]
    wanted = [shas[7], shas[0], shas[3], shas[7], shas[0], *shas[1:7]]
    expected = [bodies[shas.index(sha)] for sha in wanted]
    assert blobs_get(wanted) == expected
    assert list(blobs_iter(wanted, chunk=2)) == expected
    assert list(blobs_iter(iter(wanted), chunk=3)) == expected
    assert blobs_get([]) == []


def test_inline_bodies_are_read_a_chunk_per_query(django_assert_num_queries):
    shas = [sha for sha, _ in blobs_put([f"{i}\n" for i in range(10)])]
    with django_assert_num_queries(3):
        assert len(list(blobs_iter(shas, chunk=4))) == 10


def test_putting_a_body_again_changes_nothing():
    with transaction.atomic():
        first = blobs_put([SMALL, LARGE])
    rows = list(
        Blob.objects.order_by("sha256").values_list("sha256", "size", "stored_size", "data", "created_at")
    )
    mtime = _file(first[1][0]).stat().st_mtime_ns
    with transaction.atomic():
        again = blobs_put([SMALL, LARGE, SMALL])
        stored = blobs_store([LARGE, SMALL])
    assert again == [first[0], first[1], first[0]] and stored == [first[1], first[0]]
    assert (
        list(
            Blob.objects.order_by("sha256").values_list("sha256", "size", "stored_size", "data", "created_at")
        )
        == rows
    )
    assert _file(first[1][0]).stat().st_mtime_ns == mtime


@pytest.mark.parametrize("put", ["blobs_put", "blobs_store"])
def test_a_concurrent_writer_of_the_same_bodies_is_not_an_error(put, monkeypatch):
    # Another worker stored the bodies after this one looked them up: the insert must skip
    # the rows it finds, and the file write must accept the file it finds.
    sha_small, sha_large = blob_sha256(SMALL), blob_sha256(LARGE)
    blobs_put([SMALL, LARGE])
    monkeypatch.setattr(blobs, "stored_keys", lambda keys, **_: set())
    monkeypatch.setattr(blobstore, "stored_keys", lambda keys, **_: set())
    store = blobs_put if put == "blobs_put" else blobs_store
    with transaction.atomic():
        assert store([SMALL, LARGE]) == [(sha_small, len(SMALL)), (sha_large, len(LARGE))]
    assert Blob.objects.count() == 2
    assert blobs_get([sha_small, sha_large]) == [SMALL, LARGE]


def test_blobs_stored_before_inline_data_are_read_from_their_files():
    # Rows written before the data column existed have no data, however small the body.
    sha = blob_sha256(SMALL)
    default_storage.save(blob_path(sha), ContentFile(zlib.compress(SMALL, 1)))
    Blob.objects.create(sha256=sha, size=len(SMALL), stored_size=30)
    new, _ = blob_put(b"42\n")
    assert blob_get(sha) == SMALL
    assert blobs_get([new, sha, new]) == [b"42\n", SMALL, b"42\n"]
    # Putting it again leaves it a file: nothing rewrites stored bodies.
    blob_put(SMALL)
    assert _data(sha) is None


def test_a_body_without_a_row_is_still_read_from_its_file():
    # Files written by a worker whose transaction rolled back, or copied in by hand.
    sha = blob_sha256(LARGE)
    default_storage.save(blob_path(sha), ContentFile(zlib.compress(LARGE, 1)))
    assert blob_get(sha) == LARGE


def test_import_writes_only_large_bodies_to_files_in_the_background():
    bodies = [f"{i} {i}\n".encode() for i in range(50)] + [LARGE, random.Random(8).randbytes(2 * LIMIT)]
    with transaction.atomic(), background_writes():
        stored = blobs_store(bodies)
    files = [sha for sha, _ in stored if _file(sha).exists()]
    assert files == [stored[50][0], stored[51][0]]
    assert Blob.objects.filter(data__isnull=False).count() == 50
    assert blobs_get(sha for sha, _ in stored) == bodies


def test_admin_lists_blobs_with_their_kind_without_loading_bodies(client):
    blobs_put([SMALL, LARGE])
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = client.get("/admin/problems/blob/")
    assert page.status_code == 200
    assert page.context["cl"].result_list.query.deferred_loading == ({"data"}, True)
    assert b"icon-yes.svg" in page.content and b"icon-no.svg" in page.content
    assert client.get(f"/admin/problems/blob/{blob_sha256(SMALL)}/change/").status_code == 200
