"""Curation against a problem whose only suite is oracle-free (a held-out problem of
tests/oracle_free_heldout.py): the time-only test is judged on exit and time, and the exported
dataset says which suite origin its pass fractions come from."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from curation.models import Completion, CurationJob
from curation.services import curation_job_import, curation_job_verify_here, selection_apply, selection_export
from problems.models import TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.oracle_free_heldout import OCC

pytestmark = pytest.mark.django_db

BIG = "a" * 200000 + "\n" + "a" * 100000 + "\n"


def test_curation_judges_the_time_only_test_and_its_export_names_the_origin(tmp_path: Path) -> None:
    problem = OCC.make("hd/occ-cur")
    suite = suite_create(problem=problem, origin=TestSuite.Origin.ORACLE_FREE, unverified=True,
                         trust={"method": "hardtests_a7"})
    suite_add_tests(suite=suite, tests=[
        *[NewTest(input=s["input"], output=s["output"], kind="public", output_origin="statement")
          for s in OCC.samples],
        NewTest(input="aaaa\naa\n", output="3\n", kind="edge", output_origin="brute_force"),
        NewTest(input=BIG, output=b"", kind="time_only", output_origin="none")])
    suite_activate(suite=suite)
    programs = {name: code for name, (_, code, _) in OCC.candidates.items()}
    rows = [{"problem_id": problem.pid, "model": "m", "sample_index": i,
             "completion": f"```python\n{programs[name]}```\n"} for i, name in enumerate(sorted(programs))]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    job = curation_job_verify_here(job=curation_job_import(path=path))
    assert job.status == CurationJob.Status.VERIFIED
    verdicts = {sorted(programs)[c.sample_index]: (c.verdict, c.passed, c.total)
                for c in Completion.objects.filter(job=job)}
    assert verdicts == {"kmp": ("AC", 4, 4), "z_function": ("AC", 4, 4), "count_method": ("WA", 2, 4),
                        "char_loop": ("TLE", 3, 4), "find_loop": ("TLE", 3, 4), "recursive": ("RE", 3, 4)}, verdicts
    folder = selection_export(selection=selection_apply(job=job, rule={"rule": "tau", "tau": 1.0}),
                              out_dir=tmp_path / "out")
    [table] = [pq.read_table(p).to_pylist() for p in (folder / "data").glob("*.parquet")]
    assert sorted(r["code"] == programs["kmp"] or r["code"] == programs["z_function"] for r in table) == [True, True]
    assert {r["suite_origin"] for r in table} == {"oracle_free"}
