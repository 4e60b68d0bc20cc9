"""Exports as the ecosystem reads them: Hugging Face `datasets` (every export, explicit features,
dataset cards), verl's columns, the Hub upload (against a local stand-in of the Hub's HTTP API),
and a HardTests round trip that keeps ranks, generator names and call numbers."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from django.core.management import call_command

from problems.demo import demo_load
from problems.exporters.bundles import problems_select
from problems.exporters.hardtests import hardtests_export
from problems.exporters.native import native_export
from problems.exporters.training import SCHEMA as TRAINING_SCHEMA
from problems.exporters.training import training_export
from problems.exporters.verl import SCHEMA as VERL_SCHEMA
from problems.exporters.verl import verl_export
from problems.importers.runner import dataset_import
from problems.models import Problem, Solution, TestKit
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.problems.fixtures import catalogue_clear
from tests.problems.test_export import _catalogue

datasets = pytest.importorskip("datasets")
pytestmark = pytest.mark.django_db


def _load(path: Path, kind: str = "parquet", **kwargs):
    return datasets.load_dataset(kind, data_files={"train": str(path)}, split="train", **kwargs)


def _card(folder: Path) -> dict:
    text = (folder / "README.md").read_text()
    return yaml.safe_load(text.split("---\n")[1])


def test_every_export_loads_with_datasets(tmp_path):
    _catalogue()  # every importer's rows: varied kinds, judges, binary tests, missing fields
    everything = problems_select([])[0]
    total = Problem.objects.count()

    native = native_export(problems=everything, out=tmp_path / "native.jsonl")
    assert len(_load(tmp_path / "native.jsonl", "json")) == native["problems"] == total

    training = training_export(problems=everything, out=tmp_path / "training")
    rows = _load(tmp_path / "training" / "train.parquet")
    assert len(rows) == training["problems"] == total - 1
    # The JSON lines load with the same explicit features, every row having every key.
    features = datasets.Features.from_arrow_schema(TRAINING_SCHEMA)
    lines = _load(tmp_path / "training" / "train.jsonl", "json", features=features)
    assert lines.features == rows.features == features
    assert [set(json.loads(x)) for x in (tmp_path / "training" / "train.jsonl").read_text().splitlines()] == [
        set(TRAINING_SCHEMA.names)] * training["problems"]
    kinds = {r["id"]: r["metadata"]["test_kinds"] for r in rows}
    assert kinds["codecontests:4_A. Watermelon"] == [{"kind": "direct", "count": 1}, {"kind": "stratified", "count": 2}]
    assert "demo:demo/isqrt" in kinds and not any(i.startswith("demo/demo/") for i in kinds)

    verl = verl_export(problems=everything, out=tmp_path / "verl")
    loaded = datasets.load_dataset(str(tmp_path / "verl"), split="train")  # through the card
    assert len(loaded) == verl["problems"] == total - 1
    assert loaded.features == datasets.Features.from_arrow_schema(VERL_SCHEMA)

    hardtests_export(problems=everything, out=tmp_path / "hardtests")
    assert len(datasets.load_dataset(str(tmp_path / "hardtests"), "problems", split="train")) == total
    assert len(datasets.load_dataset(str(tmp_path / "hardtests"), "tests", split="train")) >= 1

    for folder, schema in ((tmp_path / "training", TRAINING_SCHEMA), (tmp_path / "verl", VERL_SCHEMA)):
        card = _card(folder)
        assert card["license"] == "other"
        [info] = card["dataset_info"]
        # The card's features are exactly the file's: a loader never guesses a type.
        assert datasets.Features._from_yaml_list(info["features"]) == datasets.Features.from_arrow_schema(schema)
        [split] = info["splits"]
        assert (split["name"], split["num_examples"]) == ("train", total - 1)
        # Sizes as datasets records them: the rows' uncompressed bytes, the files' bytes.
        parquet = pq.ParquetFile(folder / "train.parquet").metadata
        assert split["num_bytes"] == info["dataset_size"] == sum(
            parquet.row_group(i).total_byte_size for i in range(parquet.num_row_groups)) > 0
        assert info["download_size"] == (folder / "train.parquet").stat().st_size
        assert "## How it was made" in (folder / "README.md").read_text()


def test_verl_rows_have_verls_columns(tmp_path):
    demo_load()
    summary = verl_export(problems=problems_select(["source=demo"])[0], out=tmp_path)
    table = pq.read_table(tmp_path / "train.parquet")
    assert table.column_names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    rows = table.to_pylist()
    assert len(rows) == summary["problems"] == 12
    isqrt = next(r for r in rows if r["reward_model"]["ground_truth"] == "demo:demo/isqrt")
    assert isqrt["data_source"] == "hardtests_web" and isqrt["ability"] == "code"
    assert isqrt["reward_model"]["style"] == "rule"
    [message] = isqrt["prompt"]
    problem = Problem.objects.get(pid="demo/isqrt")
    assert message["role"] == "user" and problem.statement.strip()[:200] in message["content"]
    assert problem.samples[0]["input"] in message["content"] and "```python" in message["content"]
    assert isqrt["extra_info"]["time_limit_ms"] == problem.time_limit_ms
    assert [r["extra_info"]["index"] for r in rows] == list(range(12))


def test_hardtests_round_trip_keeps_ranks_generator_names_and_call_numbers(tmp_path):
    demo_load()
    problem = Problem.objects.get(pid="demo/two-sum-any")
    tests = [  # calls that were dropped (invalid, duplicate) leave gaps in the numbering
        NewTest(input="1\n", output="1\n", kind="direct", generator="LLMGen_input", call_number=1),
        NewTest(input="2\n", output="2\n", kind="direct", generator="LLMGen_input", call_number=3),
        NewTest(input="3\n", output="3\n", kind="stratified", generator="gen_stratified_input_none", call_number=2),
        NewTest(input="4\n", output="4\n", kind="stratified", generator="gen_stratified_input_none", call_number=3),
        NewTest(input="5\n", output="5\n", kind="hacking", generator="gen_hacking_input_no_pair_max", call_number=1),
        NewTest(input="6\n", output="6\n", kind="hacking", generator="gen_hacking_input_huge_sum", call_number=2),
    ]
    suite = suite_create(problem=problem, origin="generated")
    suite_add_tests(suite=suite, tests=tests)
    suite_activate(suite=suite)
    ranks = sorted(problem.solutions.filter(role="oracle").values_list("language", "reliability"))
    assert sorted(r for _, r in ranks) == [1, 2]

    summary = hardtests_export(problems=problems_select(["pid=demo/two-sum-any"])[0], out=tmp_path)
    catalogue_clear()
    dataset_import(format_name="hardtests", paths=summary["files"])
    again = Problem.objects.get(source="hardtests", pid="demo/two-sum-any")
    back = again.suites.get(origin="generated").tests.order_by("ordinal")
    assert [(t.kind, t.generator, t.call_number) for t in back] == [
        (t.kind, t.generator, t.call_number) for t in tests]
    assert sorted(again.solutions.filter(role=Solution.Role.ORACLE).values_list("language", "reliability")) == ranks
    kit = TestKit.objects.get(problem=again)
    assert "gen_stratified_input_found" in kit.regular_generator  # the kit itself is whole

    # Exported again, the same mapping and names come out.
    second = hardtests_export(problems=problems_select(["pid=demo/two-sum-any"])[0], out=tmp_path / "again")
    first_row = pq.read_table(summary["files"][1]).to_pylist()[0]
    second_row = pq.read_table(second["files"][1]).to_pylist()[0]
    assert first_row["mapping"] == second_row["mapping"] == {
        "LLMGen": [0, None, 1], "RPGen": [], "SPGen": [[None, 2, 3]], "HackGen": [[4], [None, 5]]}


class _Hub(BaseHTTPRequestHandler):
    """The few endpoints of the Hub's HTTP API that huggingface_hub's upload_folder calls."""

    repos: list[dict] = []
    files: dict[str, bytes] = {}

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        base = f"http://127.0.0.1:{self.server.server_port}"
        if self.headers.get("Authorization") != "Bearer hf_test_token":
            return self._send(401, {"error": "Invalid credentials"})
        if self.path == "/api/repos/create":
            repo = json.loads(body)
            self.repos.append(repo)
            return self._send(200, {"url": f"{base}/datasets/{repo['organization']}/{repo['name']}"})
        if self.path == "/api/validate-yaml":
            # As the Hub does: the card's header must be YAML whose features datasets can read.
            meta = yaml.safe_load(json.loads(body)["content"].split("---\n")[1])
            for info in meta["dataset_info"]:
                datasets.Features._from_yaml_list(info["features"])
            return self._send(200, {"errors": [], "warnings": []})
        if "/preupload/" in self.path:
            paths = [f["path"] for f in json.loads(body)["files"]]
            return self._send(200, {"files": [{"path": p, "uploadMode": "regular", "shouldIgnore": False}
                                              for p in paths]})
        if "/commit/" in self.path:
            for line in body.decode().splitlines():
                op = json.loads(line)
                if op["key"] == "file":
                    self.files[op["value"]["path"]] = base64.b64decode(op["value"]["content"])
            return self._send(200, {"commitUrl": f"{base}/datasets/me/hardtests/commit/{'0' * 40}",
                                    "commitOid": "0" * 40})
        self._send(404, {"error": f"no {self.path}"})

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hub(monkeypatch) -> Iterator[type[_Hub]]:
    _Hub.repos, _Hub.files = [], {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    yield _Hub
    server.shutdown()


def test_push_to_hub_uploads_the_folder_and_its_card(tmp_path, hub, capsys):
    demo_load()
    call_command("export_dataset", "verl", str(tmp_path / "out"), "--push-to-hub", "me/hardtests")
    summary = json.loads(capsys.readouterr().out)
    assert summary["hub_commit"].endswith("/datasets/me/hardtests/commit/" + "0" * 40)
    assert [(r["name"], r["organization"], r["type"]) for r in hub.repos] == [("hardtests", "me", "dataset")]
    assert sorted(hub.files) == ["README.md", "train.parquet"]
    # What reached the Hub is the export, byte for byte, and loads as a dataset.
    pulled = tmp_path / "pulled"
    pulled.mkdir()
    for name, data in hub.files.items():
        assert data == (tmp_path / "out" / name).read_bytes()
        (pulled / name).write_bytes(data)
    assert len(datasets.load_dataset(str(pulled), split="train")) == summary["problems"] == 12


def test_push_to_hub_refuses_formats_without_a_folder(tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--push-to-hub takes"):
        call_command("export_dataset", "native", str(tmp_path / "x.jsonl"), "--push-to-hub", "me/x")


def test_training_rows_carry_a_prompt_that_says_how_to_answer(tmp_path):
    demo_load()
    training_export(problems=problems_select(["source=demo"])[0], out=tmp_path)
    rows = pq.read_table(tmp_path / "train.parquet").to_pylist()
    assert rows and all(r["statement"].strip()[:40] in r["prompt"] for r in rows)
    assert all("single fenced code block labelled with its language" in r["prompt"] for r in rows)


def test_verl_sandbox_fusion_rows_carry_verls_test_cases(tmp_path):
    from problems.exporters.verl import verl_sandbox_fusion_export

    demo_load()
    summary = verl_sandbox_fusion_export(problems=problems_select(["source=demo"])[0], out=tmp_path)
    rows = pq.read_table(tmp_path / "train.parquet").to_pylist()
    assert len(rows) == summary["problems"] > 0
    assert summary["problems"] + summary["needs_output_judge"] + summary["binary_tests"] + summary[
        "without_suite"] == 12
    for row in rows:
        assert row["data_source"] == "codecontests"  # verl's default_compute_score sends it to sandbox_fusion
        cases = json.loads(row["reward_model"]["ground_truth"])
        assert len(cases["inputs"]) == len(cases["outputs"]) == row["extra_info"]["test_count"] > 0
        assert cases["problem"] == row["extra_info"]["problem"]
    assert "verl-sandbox-fusion" in (tmp_path / "README.md").read_text()


def test_verl_sandbox_fusion_rows_list_the_tests_that_kill_first(tmp_path, settings):
    """verl's built-in scores the pass rate of the first 10 tests: they are the judge's first ten
    (the kill order, then hacking tests first), not the suite's storage order."""
    from problems.exporters.verl import verl_sandbox_fusion_export

    settings.HARDTESTS_KILL_ORDER = True
    catalogue_clear()
    problem = Problem.objects.create(source="t", pid="order/x", title="x", statement="s")
    suite = suite_create(problem=problem, origin="generated")
    direct = [NewTest(input=f"{i}\n", output=f"{i}\n", kind="direct") for i in range(12)]
    suite_add_tests(suite=suite, tests=[*direct, NewTest(input="h1\n", output="h1\n", kind="hacking"),
                                        NewTest(input="h2\n", output="h2\n", kind="hacking")])
    suite_activate(suite=suite)
    verl_sandbox_fusion_export(problems=Problem.objects.filter(pk=problem.pk), out=tmp_path / "kind")
    [row] = pq.read_table(tmp_path / "kind" / "train.parquet").to_pylist()
    assert json.loads(row["reward_model"]["ground_truth"])["inputs"][:3] == ["h1\n", "h2\n", "0\n"]
    # A stored kill order comes first; the tests it does not name follow in kind order.
    ordinals = {t.input_preview: t.ordinal for t in suite.tests.all()}
    suite.judge_order = [ordinals["7\n"], ordinals["h2\n"]]
    suite.save(update_fields=["judge_order"])
    verl_sandbox_fusion_export(problems=Problem.objects.filter(pk=problem.pk), out=tmp_path / "kill")
    [row] = pq.read_table(tmp_path / "kill" / "train.parquet").to_pylist()
    cases = json.loads(row["reward_model"]["ground_truth"])
    assert cases["inputs"][:4] == ["7\n", "h2\n", "h1\n", "0\n"] and len(cases["inputs"]) == 14
    assert [cases["outputs"][cases["inputs"].index(i)] for i in ("7\n", "h1\n")] == ["7\n", "h1\n"]


def test_verl_sandbox_fusion_leaves_out_suites_with_time_only_tests(tmp_path):
    """A time-only test has no expected output: verl would compare stdout with nothing."""
    from problems.exporters.verl import verl_sandbox_fusion_export

    catalogue_clear()
    problem = Problem.objects.create(source="t", pid="free/x", title="x", statement="s")
    suite = suite_create(problem=problem, origin="oracle_free")
    suite_add_tests(suite=suite, tests=[NewTest(input="1\n", output="1\n", kind="edge"),
                                        NewTest(input="9" * 50 + "\n", output="", kind="time_only")])
    suite_activate(suite=suite)
    summary = verl_sandbox_fusion_export(problems=Problem.objects.filter(pk=problem.pk), out=tmp_path)
    assert (summary["problems"], summary["time_only_tests"]) == (0, 1)
