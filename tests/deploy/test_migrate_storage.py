"""migrate_storage copies file bodies from the local disk into S3 (moto's server) and resumes."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from django.test import override_settings

from tests.deploy.services import MotoS3

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[MotoS3]:
    moto = MotoS3()
    moto.start()
    moto.client().create_bucket(Bucket="moved")
    for key, value in {"AWS_S3_ENDPOINT_URL": moto.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                       "AWS_SECRET_ACCESS_KEY": "testing", "AWS_S3_REGION_NAME": "us-east-1",
                       "AWS_S3_ADDRESSING_STYLE": "path"}.items():
        monkeypatch.setenv(key, value)
    yield moto
    moto.close()


def _run(*args: str) -> dict:
    out = StringIO()
    call_command("migrate_storage", *args, stdout=out)
    return json.loads(out.getvalue())


def test_bodies_move_to_s3_checked_and_resumable(s3: MotoS3, tmp_path: Path) -> None:
    from problems.blobs import blob_path, blobs_put

    bodies = [f"{i} ".encode() * 5000 + bytes(range(256)) * (i + 1) for i in range(5)]
    with override_settings(HARDTESTS_BLOB_INLINE_MAX=0):
        keys = [sha for sha, _ in blobs_put(bodies)]
    # One body lost from the local disk: reported, the others still copied.
    default_storage.delete(blob_path(keys[0]))
    with pytest.raises(CommandError, match="1 body could not be copied"):
        _run("--from", "", "--to", "s3://moved/x")
    client = s3.client()
    stored = {o["Key"]: o for o in client.list_objects_v2(Bucket="moved")["Contents"]}
    assert set(stored) == {f"x/{blob_path(k)}" for k in keys[1:]}
    for key, body in zip(keys[1:], bodies[1:], strict=True):
        packed = client.get_object(Bucket="moved", Key=f"x/{blob_path(key)}")["Body"].read()
        assert zlib.decompress(packed) == body
    # Put back and run again: only the missing one is copied.
    with override_settings(HARDTESTS_BLOB_INLINE_MAX=0):
        from problems.models import Blob

        Blob.objects.filter(sha256=keys[0]).delete()
        blobs_put([bodies[0]])
    summary = _run("--from", "", "--to", "s3://moved/x")
    assert (summary["copied"], summary["already_there"], summary["failed"]) == (1, 4, 0)
