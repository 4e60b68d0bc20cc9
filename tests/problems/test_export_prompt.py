"""The prompt of the `training` and `verl` exports states each sample once: a statement that
shows its samples (the demo problems' "## Samples") gets no second copy as "Example N"."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from problems.exporters.prompt import answer_prompt
from problems.exporters.training import training_export
from problems.exporters.verl import verl_export
from problems.models import Problem
from problems.services import NewTest
from tests.api.conftest import make_suite
from tests.conftest import REPO
from tests.factories import ProblemFactory

pytestmark = pytest.mark.django_db


def test_samples_the_statement_shows_are_not_repeated(tmp_path):
    folder = REPO / "problems" / "demo_data" / "isqrt"
    meta = json.loads((folder / "problem.json").read_text())
    problem = ProblemFactory(pid="demo/isqrt", statement=(folder / "statement.md").read_text(),
                             samples=meta["samples"])
    make_suite(problem, [NewTest(input=s["input"], output=s["output"], kind="direct") for s in meta["samples"]])
    assert "## Samples" in problem.statement and problem.samples
    problems = Problem.objects.filter(pk=problem.pk)
    training_export(problems=problems, out=tmp_path / "training")
    verl_export(problems=problems, out=tmp_path / "verl")
    [training] = pq.read_table(tmp_path / "training" / "train.parquet").to_pylist()
    [verl] = pq.read_table(tmp_path / "verl" / "train.parquet").to_pylist()
    prompts = [training["prompt"], verl["prompt"][-1]["content"]]
    for prompt in prompts:
        assert prompt.count("## Samples") == 1 and "Example 1" not in prompt
        # the sample's input appears once, in the statement's own block
        assert prompt.count("1000000000000000000\n") == 1, prompt


def test_samples_missing_from_the_statement_are_given_once_each():
    problem = ProblemFactory(statement="Print the sum of two numbers.\n\n## Samples\n\nInput:\n```\n1 2\n```\n"
                                       "Output:\n```\n3\n```\n",
                             samples=[{"input": "1 2\n", "output": "3\n"}, {"input": "40 2\n", "output": "42\n"}])
    prompt = answer_prompt(problem)
    assert prompt.count("1 2") == 1 and prompt.count("40 2") == 1
    assert "Example 1 input:\n```\n40 2\n```" in prompt and "Example 2" not in prompt
    bare = ProblemFactory(statement="Print the sum.", samples=[{"input": "1 2\n", "output": "3\n"}])
    assert "Example 1 input:\n```\n1 2\n```\nExample 1 output:\n```\n3\n```" in answer_prompt(bare)
