"""Held-out rows for the --hf importers: values of types a parquet file or a Hugging Face dataset
carries that JSON lacks (timestamps, dates, decimals, bytes) in known and unknown columns, and
memory limits written in decimal or binary units."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from problems.importers.runner import dataset_import
from problems.models import Problem
from tests.problems.fixtures import rows

pytest.importorskip("datasets")
pytestmark = pytest.mark.django_db

ODD = {"crawled_at": datetime.datetime(2023, 5, 6, 7, 8, 9, tzinfo=datetime.UTC),
       "release": datetime.date(2019, 1, 2), "price": decimal.Decimal("1.50"), "blob": b"\x00\xff"}


@pytest.mark.parametrize("name", ["taco.jsonl", "codecontests.jsonl", "klear_handwritten.jsonl"])
def test_rows_with_non_json_values_import(tmp_path, name):
    data = [{**row, **ODD} for row in rows(name)[:1]]
    if name == "taco.jsonl":
        for row in data:
            row["date"] = datetime.date(2011, 4, 5)
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(data), path)
    summary = dataset_import(format_name=name.split(".")[0].split("_")[0], hf=[str(path)])
    assert summary["created"] >= 1, summary


def test_hardtests_pair_with_non_json_values(tmp_path):
    problems, tests = tmp_path / "problems.parquet", tmp_path / "tests.parquet"
    pq.write_table(pa.Table.from_pylist([{**r, **ODD} for r in rows("hardtests_problems.jsonl")[:2]]), problems)
    pq.write_table(pa.Table.from_pylist([{**r, **ODD} for r in rows("hardtests_tests.jsonl")]), tests)
    assert dataset_import(format_name="hardtests", hf=[str(problems), str(tests)])["created"] == 2


@pytest.mark.parametrize(("limit", "mb"), [(512000000, 512), (536870912, 512), (128000000, 128),
                                           (1000000000, 1000), (262144000, 250)])
def test_codecontests_memory(tmp_path, limit, mb):
    row = {**rows("codecontests.jsonl")[0], "memory_limit_bytes": limit}
    path = tmp_path / "cc.parquet"
    pq.write_table(pa.Table.from_pylist([row]), path)
    dataset_import(format_name="codecontests", hf=[str(path)])
    assert Problem.objects.get().memory_limit_mb == mb


def test_a_bad_test_cases_blob_in_a_parquet_pair_names_the_tests_file(tmp_path):
    from problems.importers.runner import ImportAborted

    problems, tests = tmp_path / "hard_problems.parquet", tmp_path / "hard_tests.parquet"
    pq.write_table(pa.Table.from_pylist(rows("hardtests_problems.jsonl")[:2]), problems)
    broken = rows("hardtests_tests.jsonl")
    broken[0]["test_cases"] = "eJzLSM3JyVcozy/KSQEAGgQEXQ=="  # zlib of text, not a pickle
    pq.write_table(pa.Table.from_pylist(broken), tests)
    for given in ([str(problems), str(tests)], [str(tests), str(problems)]):
        with pytest.raises(ImportAborted) as caught:
            dataset_import(format_name="hardtests", hf=given)
        # The joined row's place, then the file the bad value is in.
        assert f"in hf:{tests} (the row of pid 'atcoder_abc100_a'): test_cases" in str(caught.value)
