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
