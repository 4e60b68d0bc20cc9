"""`migrate_storage --to URL [--from URL]`: copy the stored test bodies to another storage.

Moving from one machine's disk to S3 (or between buckets): copy with this command, then set
HARDTESTS_STORAGE_URL to the destination and restart. Only bodies kept as files are copied
(inline ones live in the database). Each body is checked against its SHA-256 on the way, one
already at the destination is skipped, so an interrupted copy is resumed by running it again.
Prints a JSON summary; exits non-zero when a body is missing or damaged at the source.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.management.base import BaseCommand, CommandError

from core.storage import storage_describe, storage_open
from problems.blobs import blob_path
from problems.models import Blob


class Command(BaseCommand):
    help = "Copy the test bodies stored as files from one storage (URL) to another."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--from", dest="source", default=None,
                            help="source storage URL (default: HARDTESTS_STORAGE_URL; '' is MEDIA_ROOT)")
        parser.add_argument("--to", dest="target", required=True, help="destination storage URL")
        parser.add_argument("--dry-run", action="store_true", help="count what would be copied, copy nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        source_url = settings.HARDTESTS_STORAGE_URL if options["source"] is None else options["source"]
        target_url = options["target"]
        if source_url.strip() == target_url.strip():
            raise CommandError("--from and --to name the same storage")
        source, target = storage_open(source_url), storage_open(target_url)
        for url, storage in ((source_url, source), (target_url, target)):
            _reachable_check(url, storage)
        copied = present = 0
        problems: list[str] = []
        shas = Blob.objects.filter(data__isnull=True).values_list("sha256", flat=True).order_by("sha256")
        for sha in shas.iterator(chunk_size=2000):
            path = blob_path(sha)
            if target.exists(path):
                present += 1
                continue
            try:
                with source.open(path, "rb") as handle:
                    packed = handle.read()
                if hashlib.sha256(zlib.decompress(packed)).hexdigest() != sha:
                    raise ValueError("content does not match its SHA-256")
            except Exception as exc:
                problems.append(f"{sha}: {type(exc).__name__}: {exc}"[:300])
                continue
            if not options["dry_run"]:
                target.save(path, ContentFile(packed))
            copied += 1
        summary = {
            "from": storage_describe(source_url), "to": storage_describe(target_url), "dry_run": options["dry_run"],
            "copied": copied, "already_there": present, "failed": len(problems), "failures": problems[:50],
        }
        self.stdout.write(json.dumps(summary))
        if problems:
            raise CommandError(f"{len(problems)} bod{'y' if len(problems) == 1 else 'ies'} could not be copied "
                               f"(first: {problems[0]})")


def _reachable_check(url: str, storage: Any) -> None:
    """One request to each storage first, so missing credentials or an unreachable endpoint end
    the command with one line saying which and why, not a traceback from the middle of the copy."""
    try:
        storage.exists(blob_path("0" * 64))
    except Exception as exc:
        name = type(exc).__name__
        hint = " (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile)" if "Credentials" in name else ""
        raise CommandError(f"storage {storage_describe(url)} is not usable: {name}: {exc}{hint}"[:500]) from None
