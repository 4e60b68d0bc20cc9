"""Every management command exits non-zero when what it was asked to do failed, after printing
what it did (a script or CI step must stop there, not read exit 0 as success).

One test per command's failure path: generate_tests --sync (a failed run, as a real process),
generate_tests following queued runs, demo_materialise --sync, judge (a sandbox error), evaluate
(pairs left unjudged, named) and curate verify (a failed job). Bad arguments already exit 1
through CommandError (tests/generation/test_commands.py).
"""

from __future__ import annotations

import json
from io import StringIO
from types import SimpleNamespace
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from generation.models import GenerationRun
from tests.conftest import manage
from tests.generation.conftest import ORACLE_PY, make_problem
from tests.generation.test_materialise import make_kit

pytestmark = [pytest.mark.django_db]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("small_counts")
def test_generate_tests_sync_exits_1_when_the_run_fails() -> None:
    # one oracle where two must agree: the run fails no_valid_oracle (the docs' old example)
    problem = make_problem("test/one-oracle", oracles=[("python3", ORACLE_PY)])
    make_kit(problem)
    proc = manage("generate_tests", problem.pid, "--sync", "--from-kit", check=False, timeout=300)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    summary = json.loads(proc.stdout.splitlines()[0])
    assert summary["status"] == "failed" and summary["failure_reason"] == "no_valid_oracle"
    assert "1 run did not succeed: test/one-oracle (no_valid_oracle)" in proc.stderr


@pytest.mark.usefixtures("small_counts")
def test_generate_tests_sync_exits_0_when_every_run_succeeds() -> None:
    problem = make_problem("test/fine")
    make_kit(problem)
    out = StringIO()
    call_command("generate_tests", problem.pid, "--sync", "--from-kit", stdout=out)
    assert json.loads(out.getvalue())["status"] == "succeeded"


def test_generate_tests_following_queued_runs_exits_1_when_one_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    from generation.management.commands import generate_tests

    problem = make_problem("test/queued")
    run = GenerationRun.objects.create(problem=problem, mode=GenerationRun.Mode.FROM_KIT,
                                       status=GenerationRun.Status.FAILED, failure_reason="no_valid_oracle")
    # the queue is not what is tested: the runs it returns are already finished
    monkeypatch.setattr(generate_tests, "generation_run_start", lambda **_: SimpleNamespace(
        pk=run.pk, created=True, problem=problem, status=run.status))
    out = StringIO()
    with pytest.raises(CommandError, match=r"1 run did not succeed: test/queued \(no_valid_oracle\)"):
        call_command("generate_tests", problem.pid, "--from-kit", stdout=out)
    assert "test/queued: failed (no_valid_oracle)" in out.getvalue()
    assert "queued 1 generation run on" in out.getvalue()  # no "(s)"


@pytest.mark.usefixtures("small_counts")
def test_demo_materialise_sync_exits_1_when_a_demo_kit_fails() -> None:
    from problems.demo import DEMO_SOURCE

    problem = make_problem("demo-broken", oracles=[("python3", ORACLE_PY)])
    problem.source = DEMO_SOURCE
    problem.save(update_fields=["source"])
    make_kit(problem)
    out = StringIO()
    with pytest.raises(CommandError, match=r"demo-broken \(no_valid_oracle\)"):
        call_command("demo_materialise", "--sync", stdout=out)
    assert json.loads(out.getvalue())["failure_reason"] == "no_valid_oracle"


def test_judge_exits_1_on_a_sandbox_error_but_0_on_a_wrong_program(tmp_path: Any, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    import problems.management.commands.judge as judging  # the names the command calls

    problem = make_problem("test/se")
    monkeypatch.setattr(judging, "suite_for_judging", lambda problem, origin: SimpleNamespace())
    source = tmp_path / "p.py"
    source.write_text("print(3)\n")

    def result(verdict: str) -> Any:
        return SimpleNamespace(verdict=verdict, passed=0, total=2, suite_origin="generated", suite_version=1,
                               complete=verdict != "SE", message="bwrap: cannot mount" if verdict == "SE" else "",
                               tests=[])

    for verdict, fails in (("WA", False), ("SE", True)):
        monkeypatch.setattr(judging, "judge_code", lambda verdict=verdict, **_: result(verdict))
        out = StringIO()
        if fails:
            with pytest.raises(CommandError, match="sandbox error: bwrap: cannot mount"):
                call_command("judge", problem.pid, "--language", "python3", "--file", str(source), stdout=out)
        else:
            call_command("judge", problem.pid, "--language", "python3", "--file", str(source), stdout=out)
        assert json.loads(out.getvalue())["verdict"] == verdict


def test_evaluate_exits_1_naming_the_pairs_it_could_not_judge(tmp_path: Any, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    from review.management.commands import evaluate

    make_problem("test/eval")
    report = {"counts": {"problems": 1, "candidates": 1, "pairs_wanted": 2, "pairs_judged": 1, "pairs_missing": 1},
              "missing_pairs": [{"pid": "test/eval", "solution": "slow.py", "origin": "generated",
                                 "why": "sandbox error: the machine failed, not the program"}],
              "by_origin": {}, "near_duplicates": {"seconds": 0.0, "suites": []}}
    monkeypatch.setattr(evaluate.Command, "_run", lambda self, pk, options: SimpleNamespace(pk=pk, report=report))
    monkeypatch.setattr(evaluate, "report_write", lambda report, out: [out])
    out = StringIO()
    with pytest.raises(CommandError, match=r"1 pair could not be judged: slow.py on test/eval generated suite: "
                                           r"sandbox error"):
        call_command("evaluate", "--pids", "test/eval", "--out", str(tmp_path / "r.json"), "--sync", stdout=out)
    assert "1 problem, 1 candidate, 1/2" in out.getvalue()  # printed first, without "(s)"


def test_curate_verify_exits_1_when_the_job_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    from curation.management.commands import curate

    monkeypatch.setattr(curate.Command, "_verify", lambda self, o: {"job": 7, "status": "failed"})
    out = StringIO()
    with pytest.raises(CommandError, match="job #7 failed"):
        call_command("curate", "verify", "7", "--sync", stdout=out)
    assert json.loads(out.getvalue())["status"] == "failed"
