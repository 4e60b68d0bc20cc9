"""Running an import: validate every row, then write them all in one transaction.

Two streaming passes keep both promises at once. Pass 1 maps and checks every row and keeps
nothing, so memory does not grow with the file; by default the first malformed row stops
the import with ``file:row: reason`` before anything (not even a test body) is written.
Pass 2 reads the files again and writes chunk by chunk inside one transaction, so a failure
there (a database error) rolls everything back too. With ``skip_invalid`` pass 1 writes each
bad row to a report and pass 2 skips it.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import reset_queries, transaction
from django.utils import timezone

from problems.importers.base import FormatCounters, RowError, RowSkipped
from problems.importers.blobstore import background_writes
from problems.importers.formats import DatasetFormat, Reader
from problems.importers.native import NativeRow, native_row_parse
from problems.importers.registry import formats
from problems.importers.sources import RawRow, RowFile, SourceError, files_open, hf_open
from problems.importers.writer import rows_write

CHUNK = 500

# progress(phase, done, total): phase is "validate" or "write"; total may be None.
Progress = Callable[[str, int, int | None], None]


class ImportAborted(Exception):
    """The import stopped; nothing was written. The message is one line for the user."""


@dataclass
class _Tally:
    rows: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    invalid: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)


def _parse(fmt: DatasetFormat, raw: RawRow, counters: FormatCounters) -> NativeRow:
    if raw.data is None:
        raise RowError(raw.error or "unreadable row")
    return native_row_parse(fmt.map_row(raw.data, counters))


def _limited(rows: Iterator[RawRow], limit: int | None) -> Iterator[RawRow]:
    return itertools.islice(rows, limit) if limit is not None else rows


def _report_path(fmt: str) -> Path:
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    folder = Path(settings.VAR_DIR) / "import-reports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{fmt}-{stamp}.jsonl"


def _row_pid(raw: RawRow) -> Any:
    data = raw.data or {}
    return data.get("pid") or data.get("custom_id") or data.get("name")


def _validate(fmt: DatasetFormat, reader: Reader, *, limit: int | None, skip_invalid: bool, report: IO[str] | None,
              tally: _Tally, counters: FormatCounters, progress: Progress | None) -> None:
    for raw in _limited(reader.rows(), limit):
        tally.rows += 1
        try:
            parsed = _parse(fmt, raw, counters)
        except RowSkipped as skip:
            tally.skipped[skip.reason] += 1
        except (RowError, RecursionError) as exc:
            if not skip_invalid:
                raise ImportAborted(f"{raw.where}: {exc} (nothing was imported)") from None
            tally.invalid += 1
            if report is not None:
                report.write(json.dumps({"where": raw.where, "pid": _row_pid(raw), "reason": str(exc)},
                                        ensure_ascii=False, default=str) + "\n")
        else:
            counters.add("solutions", len(parsed.data["solutions"]))
            counters.add("tests", sum(len(s["tests"]) for s in parsed.suites))
        if progress and tally.rows % 100 == 0:
            progress("validate", tally.rows, None)


def _write(fmt: DatasetFormat, reader: Reader, *, limit: int | None, tally: _Tally, total: int,
           progress: Progress | None) -> None:
    scratch = FormatCounters()
    done = 0
    chunk: list[NativeRow] = []

    def flush() -> None:
        # With DEBUG on, Django keeps the last 9000 statements (megabytes of bulk inserts each).
        reset_queries()
        for outcome in rows_write(chunk):
            tally.outcomes[outcome.status] += 1
            for key, n in outcome.counts.items():
                tally.outcomes[f"written_{key}"] += n
        chunk.clear()

    # The blob writer is joined (and its errors raised) before the transaction commits.
    with transaction.atomic(), background_writes():
        for raw in _limited(reader.rows(), limit):
            done += 1
            try:
                chunk.append(_parse(fmt, raw, scratch))
            except (RowSkipped, RowError, RecursionError):
                continue  # counted in pass 1
            if len(chunk) >= CHUNK:
                flush()
                if progress:
                    progress("write", done, total)
        if chunk:
            flush()
    if progress:
        progress("write", done, total)


def dataset_import(
    *,
    format_name: str,
    paths: list[str] | None = None,
    hf: list[str] | None = None,
    hf_split: str = "train",
    skip_invalid: bool = False,
    limit: int | None = None,
    report_path: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Import dataset files (or Hugging Face datasets) of one format; returns the summary."""
    known = formats()
    if format_name not in known:
        raise ImportAborted(f"unknown format {format_name!r} (one of: {', '.join(sorted(known))})")
    fmt = known[format_name]
    try:
        files: list[RowFile] = files_open(list(paths or []))
        files += [hf_open(name, hf_split) for name in hf or []]
        if not files:
            raise ImportAborted("nothing to import: give a PATH or --hf NAME")
        reader = fmt.reader(files)
    except SourceError as exc:
        raise ImportAborted(str(exc)) from None
    started = time.monotonic()
    tally = _Tally()
    counters = FormatCounters()
    report = Path(report_path) if report_path else (_report_path(fmt.name) if skip_invalid else None)
    handle = report.open("w", encoding="utf-8") if report else None
    try:
        _validate(fmt, reader, limit=limit, skip_invalid=skip_invalid, report=handle, tally=tally,
                  counters=counters, progress=progress)
    finally:
        if handle:
            handle.close()
    validated = time.monotonic()
    _write(fmt, reader, limit=limit, tally=tally, total=tally.rows, progress=progress)
    seconds = time.monotonic() - started
    imported = sum(tally.outcomes[s] for s in ("created", "updated", "unchanged", "merged"))
    written = {k.removeprefix("written_"): v for k, v in sorted(tally.outcomes.items()) if k.startswith("written_")}
    return {
        "format": fmt.name,
        "inputs": [f.name for f in files],
        "rows": tally.rows,
        "imported": imported,
        "created": tally.outcomes["created"],
        "updated": tally.outcomes["updated"],
        "unchanged": tally.outcomes["unchanged"],
        "merged_into_existing": tally.outcomes["merged"],
        "skipped": {"total": sum(tally.skipped.values()), "reasons": dict(sorted(tally.skipped.items()))},
        "invalid": {"total": tally.invalid, "report": str(report) if report else None},
        "counts": dict(sorted(counters.counts.items())) | reader.notes(),
        "written": written,
        "seconds": round(seconds, 3),
        "validate_seconds": round(validated - started, 3),
        "problems_per_second": round(imported / seconds, 1) if seconds > 0 else None,
    }
