"""Reading dataset files a few rows at a time: JSON lines, parquet and Hugging Face datasets.

Every source streams (memory does not grow with the file) and can be read twice, because an
import validates every row before it writes any. Sources that another file is joined to
(HardTests' tests, joined on ``pid``) also offer random access through a small index of
where each key is, not of the rows themselves.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from problems.importers.base import RowError

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
PARQUET_SUFFIXES = (".parquet",)


class SourceError(Exception):
    """A file or dataset that cannot be opened at all (the command exits with this message)."""


@dataclass(frozen=True)
class RawRow:
    where: str  # "file:row", 1-based
    data: dict[str, Any] | None
    error: str | None = None


class RowFile:
    name: str

    def rows(self) -> Iterator[RawRow]:
        raise NotImplementedError

    def columns(self) -> set[str]:
        raise NotImplementedError

    def count(self) -> int | None:
        return None

    def index(self, key: str) -> dict[Any, Any]:
        """Where each value of ``key`` is, for `get`; later rows win."""
        raise NotImplementedError

    def get(self, locator: Any) -> dict[str, Any]:
        raise NotImplementedError


class JsonlFile(RowFile):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = str(path)

    def _lines(self) -> Iterator[tuple[int, int, bytes]]:
        with self.path.open("rb") as handle:
            lineno = 0
            while True:
                offset = handle.tell()
                line = handle.readline()
                if not line:
                    return
                lineno += 1
                if line.strip():
                    yield lineno, offset, line

    def rows(self) -> Iterator[RawRow]:
        for lineno, _, line in self._lines():
            where = f"{self.name}:{lineno}"
            try:
                data = json.loads(line)
            except (ValueError, UnicodeDecodeError) as exc:
                yield RawRow(where, None, f"not valid JSON ({exc})")
                continue
            if not isinstance(data, dict):
                yield RawRow(where, None, f"a row must be a JSON object, got {type(data).__name__}")
                continue
            yield RawRow(where, data)

    def columns(self) -> set[str]:
        for row in self.rows():
            return set(row.data or {})
        return set()

    def index(self, key: str) -> dict[Any, Any]:
        found: dict[Any, Any] = {}
        for _, offset, line in self._lines():
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get(key), str | int):
                found[data[key]] = offset
        return found

    def get(self, locator: Any) -> dict[str, Any]:
        with self.path.open("rb") as handle:
            handle.seek(locator)
            row: dict[str, Any] = json.loads(handle.readline())
            return row


class ParquetFile(RowFile):
    BATCH = 256

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self.path = path
        self.name = str(path)
        try:
            self._file = pq.ParquetFile(path)
        except Exception as exc:  # pyarrow raises several types for a file that is not parquet
            raise SourceError(f"{path}: not a readable parquet file ({exc})") from None
        self._group: tuple[int, Any] | None = None

    def rows(self) -> Iterator[RawRow]:
        n = 0
        for batch in self._file.iter_batches(batch_size=self.BATCH):
            for data in batch.to_pylist():
                n += 1
                yield RawRow(f"{self.name}:{n}", data)

    def columns(self) -> set[str]:
        return set(self._file.schema_arrow.names)

    def count(self) -> int | None:
        rows: int = self._file.metadata.num_rows
        return rows

    def index(self, key: str) -> dict[Any, Any]:
        found: dict[Any, Any] = {}
        for group in range(self._file.num_row_groups):
            values = self._file.read_row_group(group, columns=[key]).column(key).to_pylist()
            for i, value in enumerate(values):
                found[value] = (group, i)
        return found

    def get(self, locator: Any) -> dict[str, Any]:
        group, i = locator
        # Joined files are usually in the same order, so one cached row group serves many rows.
        # It stays an Arrow table: HardTests tests rows reach tens of megabytes each, so only
        # the row asked for becomes Python objects.
        if self._group is None or self._group[0] != group:
            self._group = (group, self._file.read_row_group(group))
        row: dict[str, Any] = self._group[1].slice(i, 1).to_pylist()[0]
        return row


class HFDataset(RowFile):
    """A `datasets.Dataset` (memory-mapped Arrow), read a batch at a time."""

    def __init__(self, dataset: Any, name: str) -> None:
        self.dataset = dataset
        self.name = f"hf:{name}"

    def rows(self) -> Iterator[RawRow]:
        n = 0
        for batch in self.dataset.iter(batch_size=64):
            keys = list(batch)
            for values in zip(*(batch[k] for k in keys), strict=True):
                n += 1
                yield RawRow(f"{self.name}:{n}", dict(zip(keys, values, strict=True)))

    def columns(self) -> set[str]:
        return set(self.dataset.column_names)

    def count(self) -> int | None:
        return len(self.dataset)

    def index(self, key: str) -> dict[Any, Any]:
        found: dict[Any, Any] = {}
        for start in range(0, len(self.dataset), 10_000):
            for i, value in enumerate(self.dataset[start : start + 10_000][key]):
                found[value] = start + i
        return found

    def get(self, locator: Any) -> dict[str, Any]:
        row: dict[str, Any] = self.dataset[locator]
        return row


def files_open(paths: list[str]) -> list[RowFile]:
    """Files (a directory means the dataset files in it, sorted) as row sources."""
    opened: list[RowFile] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise SourceError(f"{raw}: no such file or directory")
        candidates = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        found = False
        for candidate in candidates:
            suffix = candidate.suffix.lower()
            if suffix in PARQUET_SUFFIXES:
                opened.append(ParquetFile(candidate))
            elif suffix in JSONL_SUFFIXES:
                opened.append(JsonlFile(candidate))
            elif not path.is_dir():
                raise SourceError(f"{raw}: unknown file type (expected {', '.join(JSONL_SUFFIXES + PARQUET_SUFFIXES)})")
            else:
                continue
            found = True
        if not found:
            raise SourceError(f"{raw}: no .jsonl or .parquet files in this directory")
    return opened


def hf_open(name: str, split: str = "train") -> RowFile:
    """A Hugging Face dataset by hub name, or a local copy (``save_to_disk`` folder, parquet/JSON files)."""
    try:
        import datasets
    except ImportError:
        raise SourceError("--hf needs the `datasets` package (pip install datasets)") from None
    path = Path(name)
    try:
        if path.is_dir() and any((path / f).exists() for f in ("state.json", "dataset_dict.json")):
            loaded = datasets.load_from_disk(str(path))
            if isinstance(loaded, datasets.DatasetDict):
                if split not in loaded:
                    raise SourceError(f"{name}: no split {split!r} (has {', '.join(loaded)})")
                loaded = loaded[split]
        elif path.exists():
            files = [str(p) for p in (sorted(path.rglob("*")) if path.is_dir() else [path]) if p.is_file()]
            builder = "parquet" if all(f.endswith(PARQUET_SUFFIXES) for f in files) else "json"
            loaded = datasets.load_dataset(builder, data_files=files, split=split)
        else:
            loaded = datasets.load_dataset(name, split=split)
    except SourceError:
        raise
    except (ConnectionError, OSError) as exc:
        raise SourceError(
            f"cannot load Hugging Face dataset {name!r}: the hub is unreachable from here "
            f"({str(exc).splitlines()[0][:200]}). Where there is a network, run "
            f"datasets.load_dataset({name!r}, split={split!r}).save_to_disk(DIR), copy DIR here and pass --hf DIR"
        ) from None
    except Exception as exc:  # datasets raises many types (DatasetNotFoundError, ValueError...)
        raise SourceError(f"cannot load Hugging Face dataset {name!r}: {type(exc).__name__}: {exc}") from None
    return HFDataset(loaded, name)


def row_require(data: dict[str, Any] | None, error: str | None) -> dict[str, Any]:
    if data is None:
        raise RowError(error or "unreadable row")
    return data
