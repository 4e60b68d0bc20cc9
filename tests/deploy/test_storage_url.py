"""HARDTESTS_STORAGE_URL -> Django's STORAGES["default"]."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from core.storage import storage_backend, storage_describe


def test_empty_url_follows_media_root() -> None:
    assert storage_backend("") == {"BACKEND": "django.core.files.storage.FileSystemStorage"}


@pytest.mark.parametrize("url", ["/srv/bodies", "file:///srv/bodies"])
def test_a_directory(url: str) -> None:
    assert storage_backend(url)["OPTIONS"] == {"location": "/srv/bodies"}


def test_s3_takes_endpoint_credentials_and_region_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_S3_ENDPOINT_URL", "http://minio:9000")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "id")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_S3_REGION_NAME", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    config = storage_backend("s3://bucket/some/prefix/")
    options = config["OPTIONS"]
    assert config["BACKEND"] == "storages.backends.s3.S3Storage"
    assert (options["bucket_name"], options["location"], options["endpoint_url"]) == ("bucket", "some/prefix",
                                                                                      "http://minio:9000")
    assert (options["access_key"], options["secret_key"], options["region_name"]) == ("id", "secret", "eu-west-3")
    # A storage that is down must fail in seconds, not after botocore's default retries.
    assert options["client_config"].connect_timeout <= 5


@pytest.mark.parametrize("url", ["s3:///nobucket", "ftp://host/x", "relative/dir"])
def test_bad_urls_are_refused_at_start(url: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="HARDTESTS_STORAGE_URL"):
        storage_backend(url)


def test_describe_hides_a_password() -> None:
    assert "pw" not in storage_describe("s3://user:pw@bucket/x")
