"""--hf: Hugging Face datasets through the same row mappers; no network here, so local copies."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from problems.importers.runner import ImportAborted, dataset_import
from problems.models import Problem
from tests.problems.fixtures import rows

datasets = pytest.importorskip("datasets")

pytestmark = pytest.mark.django_db


def test_a_dataset_saved_to_disk_imports_through_the_same_mapper(tmp_path):
    folder = tmp_path / "taco"
    datasets.DatasetDict({"train": datasets.Dataset.from_list(rows("taco.jsonl"))}).save_to_disk(str(folder))
    summary = dataset_import(format_name="taco", hf=[str(folder)])
    assert summary["inputs"] == [f"hf:{folder}"]
    assert (summary["created"], summary["skipped"]["total"]) == (2, 1)
    assert Problem.objects.get(platform="codeforces").suites.get().test_count == 2


def test_hardtests_pair_from_two_datasets_is_joined_on_pid(tmp_path):
    problems, tests = tmp_path / "problems", tmp_path / "tests"
    datasets.Dataset.from_list(rows("hardtests_problems.jsonl")[:2]).save_to_disk(str(problems))
    datasets.Dataset.from_list(rows("hardtests_tests.jsonl")).save_to_disk(str(tests))
    summary = dataset_import(format_name="hardtests", hf=[str(problems), str(tests)])
    assert summary["created"] == 2
    kit = Problem.objects.get(pid="atcoder_abc100_a").kits.get()
    assert kit.direct_inputs == ["5 4\n", "8 8\n"]


def test_a_local_parquet_file_loads_through_datasets(tmp_path):
    path = tmp_path / "cc.parquet"
    pq.write_table(pa.Table.from_pylist(rows("codecontests.jsonl")[:1]), path)
    summary = dataset_import(format_name="codecontests", hf=[str(path)])
    assert summary["created"] == 1
    assert Problem.objects.get().platform_id == "codeforces:4A"


def test_an_unreachable_hub_is_a_clear_error(monkeypatch):
    # What datasets does without a network, without its retries: offline mode.
    import huggingface_hub.constants

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ImportAborted) as caught:
        dataset_import(format_name="taco", hf=["BAAI/TACO"])
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("cannot load Hugging Face dataset 'BAAI/TACO': the hub is unreachable from here")
    assert "save_to_disk(DIR)" in message and "--hf DIR" in message


def test_taco_from_a_local_parquet_file_with_real_dates(tmp_path):
    # Read through datasets, TACO's date is a timestamp, not a string; extra is JSON.
    import datetime

    taco = rows("taco.jsonl")
    for row in taco:
        row["date"] = datetime.datetime(2010, 3, 1, 12, 30)
    path = tmp_path / "taco.parquet"
    pq.write_table(pa.Table.from_pylist(taco), path)
    summary = dataset_import(format_name="taco", hf=[str(path)])
    assert summary["created"] == 2
    problem = Problem.objects.get(platform="codeforces")
    assert problem.extra["taco"]["date"] == "2010-03-01T12:30:00"


@pytest.mark.parametrize(("limit_bytes", "mb"), [(256000000, 256), (268435456, 256), (64000000, 64),
                                                 (67108864, 64), (1073741824, 1024)])
def test_codecontests_memory_limits_are_the_judges(tmp_path, limit_bytes, mb):
    row = rows("codecontests.jsonl")[0]
    row["memory_limit_bytes"] = limit_bytes
    path = tmp_path / "cc.parquet"
    pq.write_table(pa.Table.from_pylist([row]), path)
    dataset_import(format_name="codecontests", hf=[str(path)])
    assert Problem.objects.get().memory_limit_mb == mb


def test_a_bad_hardtests_test_cases_error_names_the_tests_file(tmp_path):
    import json

    problems, tests = tmp_path / "problems.jsonl", tmp_path / "tests.jsonl"
    problems.write_text("".join(json.dumps(r) + "\n" for r in rows("hardtests_problems.jsonl")[:2]))
    broken = rows("hardtests_tests.jsonl")
    broken[0]["test_cases"] = "not base64 zlib pickle"
    tests.write_text("".join(json.dumps(r) + "\n" for r in broken))
    with pytest.raises(ImportAborted) as caught:
        dataset_import(format_name="hardtests", paths=[str(problems), str(tests)])
    message = str(caught.value)
    assert "tests.jsonl" in message and "test_cases" in message, message
