"""Verifying constructed completions of known correctness (real sandbox) gives the pass
fractions and kept sets a hand count gives, for every tau of the paper's grid and the subset
rules; the import refuses bad files whole; a resume picks up claims a crash left."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from curation.importing import CurationImportError
from curation.models import Completion, CurationJob, Selection
from curation.rules import TAU_GRID, RuleError, rule_parse
from curation.selectors import job_progress
from curation.services import (
    CurationRefused,
    curation_chunk_verify,
    curation_job_import,
    curation_job_resume,
    curation_job_start,
    curation_job_verify_here,
    selection_apply,
)
from tests.curation.helpers import KINDS, PUBLIC_INPUTS, build_world, known_completions, write_jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture
def verified(tmp_path: Path) -> tuple[CurationJob, dict[int, set[int]], dict[int, bool]]:
    """A verified job of 40 known completions: completion id -> right inputs, and whether it runs."""
    world = build_world()
    known = known_completions(world.problem.pid, 40)
    job = curation_job_import(path=write_jsonl(tmp_path / "c.jsonl", [k.row for k in known]),
                              suite_origin="generated", extra_origins=["public"])
    job = curation_job_verify_here(job=job, chunk=7)
    assert job.status == CurationJob.Status.VERIFIED
    by_index = {k.row["sample_index"]: k for k in known}
    rows = {c.pk: by_index[c.sample_index] for c in Completion.objects.filter(job=job)}
    return job, {pk: k.right for pk, k in rows.items()}, {pk: k.runs for pk, k in rows.items()}


def test_pass_fractions_and_kept_sets_equal_the_hand_count_for_every_tau(verified):
    """And the subset rules, programless completions, the cost counted, refusals of unusable rules."""
    job, right, runs = verified
    completions = {c.pk: c for c in Completion.objects.filter(job=job)}
    assert len(completions) == 40
    for pk, c in completions.items():
        assert c.status == Completion.Status.DONE, c.message
        assert (c.passed, c.total) == (len(right[pk]), 10), (c.sample_index, c.code)
        assert c.pass_fraction == pytest.approx(len(right[pk]) / 10)
    fractions = sorted({len(r) for r in right.values()})
    assert len(fractions) >= 6  # the constructed set spans the grid, boundaries included
    for tau in TAU_GRID:
        selection = selection_apply(job=job, rule={"rule": "tau", "tau": tau})
        # Exact, as fractions: 6 of 10 is kept at tau = 0.6 (no float rounding at the boundary).
        expected = {pk for pk, r in right.items() if len(r) >= round(tau * 10)}
        assert set(selection.kept_ids) == expected, tau
        assert selection.considered == 40
    check_subset_rules(job, right)
    check_programless_and_cost(job, runs)
    with pytest.raises(CurationRefused, match="not verified by this job"):
        selection_apply(job=job, rule=rule_parse("origin:official"))
    with pytest.raises(CurationRefused, match="judge"):
        selection_apply(job=job, rule=rule_parse("judge:nobody>=5"))


def check_subset_rules(job: CurationJob, right: dict[int, set[int]]) -> None:
    for k in (1, 2, 4):
        kept = set(selection_apply(job=job, rule=rule_parse(f"first:{k}")).kept_ids)
        assert kept == {pk for pk, r in right.items() if set(range(k)) <= r}, k
    hacking = {n for n in range(10) if KINDS[n] == "hacking"}
    kept = set(selection_apply(job=job, rule=rule_parse("kind:hacking")).kept_ids)
    assert kept == {pk for pk, r in right.items() if hacking <= r}
    kept = set(selection_apply(job=job, rule=rule_parse("origin:public")).kept_ids)
    assert kept == {pk for pk, r in right.items() if set(PUBLIC_INPUTS) <= r}
    combo = set(selection_apply(job=job, rule=rule_parse("tau>=0.6 & kind:hacking")).kept_ids)
    assert combo == {pk for pk, r in right.items() if len(r) >= 6 and hacking <= r}
    assert Selection.objects.filter(job=job).count() == len(TAU_GRID) + 6


def check_programless_and_cost(job: CurationJob, runs: dict[int, bool]) -> None:
    idle = [pk for pk, ok in runs.items() if not ok]
    assert len(idle) == 7  # indexes 5, 8, 11, 22, 25, 28, 39 of 40
    for c in Completion.objects.filter(pk__in=idle):
        assert (c.status, c.passed, c.total) == (Completion.Status.DONE, 0, 10)
        assert c.verdict == "CE"
    running = [pk for pk, ok in runs.items() if ok]
    rows = Completion.objects.filter(pk__in=running)
    # every test of both suites ran for every program verified (10 generated + 2 public); a
    # repeated program ran nothing (test_a_repeated_program_is_verified_once)
    assert {c.tests_run for c in rows if "same_as" not in c.results} == {12}
    assert all(len(c.results["by_origin"]["generated"]["tests"]) == 10 for c in rows)


def test_a_repeated_program_is_verified_once(verified):
    """Completions with the same program (problem, language, code) copy the first one's verdicts,
    in its chunk or a later one (chunks of 7 here), and run no test; with the copy switched off,
    every one runs."""
    job, _right, runs = verified
    rows = list(Completion.objects.filter(job=job, pk__in=[pk for pk, ok in runs.items() if ok]).order_by("id"))
    chunk_of = {c.pk: i // 7 for i, c in enumerate(Completion.objects.filter(job=job).order_by("id"))}
    groups: dict[tuple[str, str], list[Completion]] = {}
    for c in rows:
        groups.setdefault((c.language, c.code), []).append(c)
    repeated = [g for g in groups.values() if len(g) > 1]
    assert len(repeated) >= 2, "the constructed set has programs that repeat"
    across_chunks = 0
    for first, *copies in repeated:
        assert "same_as" not in first.results and first.tests_run == 12
        for c in copies:
            assert c.results["same_as"] == first.pk and (c.tests_run, c.cpu_ms) == (0, 0)
            assert (c.verdict, c.passed, c.total, c.pass_fraction) == (
                first.verdict, first.passed, first.total, first.pass_fraction)
            assert c.results["by_origin"] == first.results["by_origin"]
            across_chunks += chunk_of[c.pk] != chunk_of[first.pk]
    assert across_chunks >= 1
    assert sum(c.tests_run for c in rows) == 12 * len(groups)
    # and the ones that cannot run (a compile error, no language) repeat too, copied the same way
    every: dict[tuple[str, str], int] = {}
    for c in Completion.objects.filter(job=job):
        if c.code.strip():
            every[(c.language, c.code)] = every.get((c.language, c.code), 0) + 1
    assert job_progress(job)["reused"] == sum(n - 1 for n in every.values()) > sum(len(g) - 1 for g in repeated)


def test_with_the_copy_off_every_completion_runs(tmp_path: Path, settings):
    settings.HARDTESTS_CURATION_DEDUP = False
    world = build_world()
    known = [k for k in known_completions(world.problem.pid, 24) if k.runs]
    job = curation_job_import(path=write_jsonl(tmp_path / "c.jsonl", [k.row for k in known]),
                              suite_origin="generated")
    job = curation_job_verify_here(job=job, chunk=7)
    rows = Completion.objects.filter(job=job)
    assert len({(c.language, c.code) for c in rows}) < rows.count()  # repeats are there
    assert {c.tests_run for c in rows} == {10} and not any("same_as" in c.results for c in rows)


def test_rules_are_read_strictly():
    assert rule_parse("tau>=0.6&judge:gpt-4o>=7") == {"rule": "and", "rules": [
        {"rule": "tau", "tau": 0.6}, {"rule": "judge", "judge": "gpt-4o", "threshold": 7.0}]}
    for bad in ("tau>=1.5", "tau>=0", "first:0", "tau>=0.5 & first:1 | kind:direct", "pass>=1", ""):
        with pytest.raises(RuleError):
            rule_parse(bad)


def test_selecting_before_verification_is_refused(tmp_path: Path):
    world = build_world()
    other = curation_job_import(path=write_jsonl(tmp_path / "o.jsonl",
                                                 [known_completions(world.problem.pid, 1)[0].row]))
    with pytest.raises(CurationRefused, match="not verified"):
        selection_apply(job=other, rule=rule_parse("tau>=0.5"))


def test_a_bad_file_is_refused_whole_naming_each_bad_row(tmp_path: Path):
    world = build_world()
    pid = world.problem.pid
    good = {"problem_id": pid, "code": "print(1)\n", "language": "python3", "model": "m"}
    rows = [
        good,
        {**good, "problem_id": "nope/none"},
        {**good, "sample_index": -1},
        {"problem_id": pid, "model": "m", "sample_index": 9},
        {**good, "language": "brainfuck", "sample_index": 3},
        {**good, "completion": "x", "sample_index": 4},
        {**good, "sample_index": 0},
        {**good, "gold": "maybe", "sample_index": 5},
    ]
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with path.open("a") as handle:
        handle.write("{not json\n")
    with pytest.raises(CurationImportError) as caught:
        curation_job_import(path=path)
    text = str(caught.value)
    for expected in ("8 bad row(s) of 9", "row 2: no problem 'nope/none'", "row 3: sample_index",
                     "row 4: give exactly one of completion and code", "row 5: unsupported language",
                     "row 6: give exactly one", "row 7: the same problem, model and sample_index as row 1",
                     "row 8: gold", "row 9: not JSON"):
        assert expected in text
    assert not CurationJob.objects.exists() and not Completion.objects.exists()


def test_a_problem_without_the_chosen_suite_is_refused(tmp_path: Path):
    world = build_world()
    path = write_jsonl(tmp_path / "a.jsonl", [{"problem_id": world.problem.pid, "code": "print(1)\n",
                                               "language": "python3"}])
    with pytest.raises(CurationImportError, match="no active official suite"):
        curation_job_import(path=path, suite_origin="official")


def test_parquet_imports_like_json_lines(tmp_path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    world = build_world()
    rows = [k.row for k in known_completions(world.problem.pid, 6)]
    for row in rows:
        row.setdefault("language", None)
        row.setdefault("gold", None)
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "c.parquet")
    job = curation_job_import(path=tmp_path / "c.parquet")
    assert job.total == 6 and job.completions.count() == 6


def test_resume_takes_back_stale_claims_and_finishes(tmp_path: Path):
    world = build_world()
    known = known_completions(world.problem.pid, 6)
    job = curation_job_import(path=write_jsonl(tmp_path / "c.jsonl", [k.row for k in known]))
    curation_job_start(job=job, enqueue=False)
    # A worker claimed two and died: their claims are old.
    ids = list(job.completions.values_list("pk", flat=True)[:2])
    Completion.objects.filter(pk__in=ids).update(status=Completion.Status.RUNNING,
                                                 claimed_at=timezone.now() - timedelta(hours=2))
    while curation_chunk_verify(job_id=job.pk, chunk=3):
        pass
    job.refresh_from_db()
    assert job.status == CurationJob.Status.VERIFYING  # the lost claims keep it open
    assert curation_job_resume(job=job, enqueue=False) == 2
    while curation_chunk_verify(job_id=job.pk, chunk=3):
        pass
    job.refresh_from_db()
    assert job.status == CurationJob.Status.VERIFIED
    assert Completion.objects.filter(job=job, status=Completion.Status.DONE).count() == 6


def test_the_command_refuses_bad_input_in_one_line(tmp_path: Path):
    from django.core.management import CommandError, call_command

    world = build_world()
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"problem_id": "nope"}, {"problem_id": world.problem.pid}])
    with pytest.raises(CommandError) as caught:
        call_command("curate", "import", str(bad))
    assert "\n" not in str(caught.value) and "row 1: " in str(caught.value) and "row 2: " in str(caught.value)
    with pytest.raises(CommandError, match="no curation job #999"):
        call_command("curate", "select", "999", "--rule", "tau>=0.5")
    good = write_jsonl(tmp_path / "good.jsonl", [k.row for k in known_completions(world.problem.pid, 2)])
    call_command("curate", "import", str(good), stdout=open(os.devnull, "w"))
    job = CurationJob.objects.get()
    with pytest.raises(CommandError, match="cannot read the rule"):
        call_command("curate", "select", str(job.pk), "--rule", "pass>=1")
    with pytest.raises(CommandError, match="not verified"):
        call_command("curate", "select", str(job.pk), "--rule", "tau>=0.5")
