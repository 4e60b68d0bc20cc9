"""Where large test bodies live, chosen by one URL (HARDTESTS_STORAGE_URL).

- empty (the default): files under MEDIA_ROOT on this machine's disk. Fine for one machine;
  workers on other machines cannot read them.
- ``file:///path`` (or a plain absolute path): files under that directory, e.g. a shared mount.
- ``s3://bucket/prefix``: an S3-compatible object store through django-storages and boto3.
  Endpoint, credentials and region come from the environment: AWS_S3_ENDPOINT_URL (MinIO,
  Ceph, moto...; unset for AWS), AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (unset: boto3's
  own chain, e.g. an instance role), AWS_S3_REGION_NAME (or AWS_DEFAULT_REGION),
  AWS_S3_ADDRESSING_STYLE (``path`` for most self-hosted servers).

This module imports nothing of Django's settings, so settings.py can call it.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

# Seconds and attempts of one S3 call: a storage that is down must surface as an error in
# seconds (the API then answers 503), not after botocore's default minute of retries.
S3_CONNECT_TIMEOUT_S = 5
S3_READ_TIMEOUT_S = 30
S3_MAX_ATTEMPTS = 3


def storage_backend(url: str) -> dict[str, Any]:
    """The STORAGES["default"] entry for a storage URL (see the module docstring)."""
    url = url.strip()
    if not url:
        # No location: FileSystemStorage follows settings.MEDIA_ROOT, also when tests change it.
        return {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    parsed = urlparse(url)
    if parsed.scheme in ("", "file"):
        path = unquote(parsed.path if parsed.scheme else url)
        if not path.startswith("/"):
            raise ImproperlyConfigured(f"HARDTESTS_STORAGE_URL: a directory must be absolute, got {url!r}")
        return {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": path}}
    if parsed.scheme == "s3":
        if not parsed.netloc:
            raise ImproperlyConfigured(f"HARDTESTS_STORAGE_URL: no bucket in {url!r} (s3://bucket/prefix)")
        from botocore.config import Config

        env = os.environ
        options: dict[str, Any] = {
            "bucket_name": parsed.netloc,
            "location": parsed.path.strip("/"),
            "endpoint_url": env.get("AWS_S3_ENDPOINT_URL") or None,
            "region_name": env.get("AWS_S3_REGION_NAME") or env.get("AWS_DEFAULT_REGION") or None,
            "access_key": env.get("AWS_ACCESS_KEY_ID") or None,
            "secret_key": env.get("AWS_SECRET_ACCESS_KEY") or None,
            "addressing_style": env.get("AWS_S3_ADDRESSING_STYLE") or None,
            # Bodies are content-addressed: the same name is the same content, never a rename.
            "file_overwrite": True,
            "default_acl": None,
            "querystring_auth": True,
            "client_config": Config(
                connect_timeout=S3_CONNECT_TIMEOUT_S,
                read_timeout=S3_READ_TIMEOUT_S,
                retries={"max_attempts": S3_MAX_ATTEMPTS, "mode": "standard"},
            ),
        }
        return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options}
    raise ImproperlyConfigured(
        f"HARDTESTS_STORAGE_URL: unknown scheme {parsed.scheme!r} in {url!r} (use a directory or s3://bucket/prefix)"
    )


def storage_open(url: str) -> Any:
    """A storage instance for a URL (`migrate_storage` copies between two of them)."""
    from django.utils.module_loading import import_string

    config = storage_backend(url)
    return import_string(config["BACKEND"])(**config.get("OPTIONS", {}))


def storage_describe(url: str) -> str:
    """The URL without credentials, for health pages and error messages."""
    url = url.strip()
    if not url:
        return "local directory (MEDIA_ROOT)"
    parsed = urlparse(url)
    return parsed._replace(netloc=parsed.hostname or parsed.netloc).geturl() if parsed.password else url
