"""Judging every candidate against every suite (real sandbox), reuse of current verdicts,
the stored report, the command and its one-line errors, and the sandbox-queue path."""

from __future__ import annotations

import io
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command

from problems.models import DifficultyLabel, JudgingTask, Problem, Solution, TestSuite, Verdict
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from review.evaluation.selectors import evaluation_pairs
from review.evaluation.services import (
    evaluation_judge_missing,
    evaluation_report_create,
    evaluation_report_run,
    evaluation_select,
    report_csv,
)
from review.models import EvaluationReport
from tests.conftest import REPO, checked_worker_argv, manage, process_group_stop, worker_env
from tests.factories import ProblemFactory, SolutionFactory

ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
# Wraps explicitly: signed overflow would be undefined behaviour, which -O2 may "fix".
OVERFLOW = "#include <cstdio>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",(int)((unsigned)a+(unsigned)b));}\n"


@dataclass
class World:
    problem: Problem
    generated: TestSuite
    public: TestSuite


def _suite(problem: Problem, origin: str, tests: list[NewTest]) -> TestSuite:
    suite = suite_create(problem=problem, origin=origin)
    suite_add_tests(suite=suite, tests=tests)
    return suite_activate(suite=suite)


def build_world(pid: str = "eval/add") -> World:
    problem = ProblemFactory(pid=pid, platform="testland")
    DifficultyLabel.objects.create(problem=problem, source="cf", level="easy")
    generated = _suite(problem, TestSuite.Origin.GENERATED, [
        NewTest(input="1 2\n", output="3\n", kind="direct"),
        NewTest(input="5 5\n", output="10\n", kind="regular"),
        NewTest(input="2000000000 2000000000\n", output="4000000000\n", kind="hacking"),
    ])
    public = _suite(problem, TestSuite.Origin.PUBLIC, [NewTest(input="1 2\n", output="3\n", kind="public")])
    candidate = {"problem": problem, "role": Solution.Role.CANDIDATE, "reliability": None}
    SolutionFactory(**candidate, name="right.py", code=ADD, gold_verdict="AC")
    SolutionFactory(**candidate, name="print3.py", code="print(3)\n", gold_verdict="WA")
    SolutionFactory(**candidate, name="overflow.cpp", language="cpp", code=OVERFLOW, gold_verdict="WA")
    SolutionFactory(**candidate, name="broken.cpp", language="cpp", code="int main( {", gold_verdict="REJECTED")
    # Not evaluated: unknown gold verdict, a language the sandbox does not run, an oracle.
    SolutionFactory(**candidate, name="unknown.py", code="print(4)\n", gold_verdict="UNKNOWN")
    SolutionFactory(**candidate, name="old.py", language="python2", code="print 1\n", gold_verdict="WA")
    SolutionFactory(problem=problem, name="oracle.py", code=ADD + "\n")
    return World(problem, generated, public)


@pytest.fixture
def rq_queues(monkeypatch: pytest.MonkeyPatch) -> None:
    """django_rq reads RQ_QUEUES once at import, before conftest points it at the private
    Redis; in-process enqueueing must see the test server."""
    import django_rq.settings
    from django.conf import settings

    monkeypatch.setattr(django_rq.settings, "QUEUES", settings.RQ_QUEUES)


def counts(m: dict) -> tuple[int, int, int, int]:
    return m["tp"], m["fp"], m["tn"], m["fn"]


def run_sync(**select: object) -> EvaluationReport:
    report = evaluation_report_create(selection=evaluation_select(**select))
    return evaluation_report_run(report_id=report.pk, sync=True)


@pytest.mark.django_db
def test_every_candidate_is_judged_against_every_suite_and_measured_by_hand():
    world = build_world()
    report = run_sync(pids=[world.problem.pid])
    assert report.status == EvaluationReport.Status.DONE and report.judging_total == 8  # 4 candidates x 2 suites
    r = report.report
    assert r["counts"]["pairs_wanted"] == r["counts"]["pairs_judged"] == 8 and r["counts"]["pairs_missing"] == 0
    # generated: right passes (TP); print3, overflow and the compile error fail (TN).
    assert counts(r["by_origin"]["generated"]) == (1, 0, 3, 0)
    assert r["by_origin"]["generated"]["precision"] == 1.0 and r["by_origin"]["generated"]["tnr"] == 1.0
    # public ("1 2" only): print3 and overflow pass it (FP); the compile error fails (TN).
    pub = r["by_origin"]["public"]
    assert counts(pub) == (1, 2, 1, 0)
    assert pub["precision"] == pytest.approx(1 / 3) and pub["recall"] == 1.0 and pub["tnr"] == pytest.approx(1 / 3)
    # Ablation of the generated suite: direct "1 2" lets print3 and overflow through;
    # + regular "5 5" catches print3; + hacking catches overflow.
    kind = r["by_kind"]["generated"]
    assert counts(kind["direct"]) == (1, 2, 1, 0) and counts(kind["direct+regular"]) == (1, 1, 2, 0)
    assert counts(kind["all"]) == (1, 0, 3, 0)
    assert r["by_kind"]["public"]["direct"]["n"] == 0  # no direct tests in a sample suite
    assert set(r["by_difficulty"]["generated"]) == {"cf:easy"} and set(r["by_platform"]["public"]) == {"testland"}
    # tau 0.5 on generated: print3 passes 1/3, overflow 2/3 (>= 0.5: FP), broken 0/3.
    assert counts(r["tau"]["generated"]["0.5"]) == (1, 1, 2, 0)
    assert r["redundancy"]["generated"][0]["precision"] == 1.0
    near = r["near_duplicates"]["by_origin"]
    assert near["generated"]["inputs"] == 3 and near["public"]["inputs"] == 1 and r["near_duplicates"]["seconds"] >= 0
    per_problem = r["near_duplicates"]["per_problem"]["generated"]
    assert (per_problem["problems"], per_problem["mean_share"], per_problem["max_pid"]) == (1, 0.0, "eval/add")
    # tau selection at 0.5: right (3/3) and overflow (2/3) kept, one of them correct.
    selected = {row["tau"]: row for row in r["tau_selection"]["generated"]}
    assert (selected["0.5"]["kept"], selected["0.5"]["correct"], selected["0.5"]["precision"]) == (2, 1, 0.5)
    cost = r["cost"]["generated"]
    assert cost["all_tests"]["n"] == 4 and cost["fail_fast_hacking_first"]["mean_s"] <= cost["all_tests"]["mean_s"]
    fps = {(m["origin"], m["solution"]) for m in r["misclassified"] if m["kind"] == "false_positive"}
    assert fps == {("public", "print3.py"), ("public", "overflow.cpp")}
    csv_text = report_csv(r)
    assert csv_text.splitlines()[0].startswith("section,origin,group,tp,fp,tn,fn")
    assert "by_origin,public,all,1,2,1,0,4,0.333" in csv_text


@pytest.mark.django_db
def test_current_verdicts_are_reused_and_incomplete_ones_are_not():
    world = build_world()
    run_sync(pids=[world.problem.pid])
    right = Solution.objects.get(name="right.py")
    first = Verdict.objects.get(solution=right, suite=world.generated).judged_at
    # A fail-fast verdict (complete=False) is not current: it is judged again, with every test.
    Verdict.objects.filter(solution__name="print3.py", suite=world.generated).update(complete=False, results=[])
    again = run_sync(pids=[world.problem.pid])
    assert again.judging_total == 1
    assert Verdict.objects.get(solution=right, suite=world.generated).judged_at == first
    redone = Verdict.objects.get(solution__name="print3.py", suite=world.generated)
    assert redone.complete and len(redone.results) == 3


@pytest.mark.django_db
def test_origins_and_filters_narrow_the_selection():
    world = build_world()
    build_world("other/add")
    report = run_sync(filter_expr="pid=eval/*", origins=["public"])
    r = report.report
    assert list(r["by_origin"]) == ["public"] and r["counts"]["problems"] == 1 and report.judging_total == 4
    assert r["params"] == {"pids": [], "filter": "pid=eval/*", "origins": ["public"], "difficulty_source": None,
                           "levels": [], "same_problems": True, "roles": ["candidate"], "per_problem": None,
                           "split": "held_out"}
    assert world.problem.pid == "eval/add"


@pytest.mark.django_db
def test_queued_judging_goes_to_the_sandbox_queue_once_per_pair(django_capture_on_commit_callbacks, rq_queues):
    import django_rq

    world = build_world()
    selection = evaluation_select(pids=[world.problem.pid])
    queue = django_rq.get_queue("sandbox")
    queue.empty()
    with django_capture_on_commit_callbacks(execute=True):
        plan = evaluation_judge_missing(pairs=evaluation_pairs(problems=selection.problems, origins=selection.origins))
    assert len(plan.task_ids) == 8 and queue.count == 8
    assert set(JudgingTask.objects.values_list("mode", "status")) == {("all", "queued")}
    # Asked again while they are queued: the same tasks, nothing new on the queue.
    with django_capture_on_commit_callbacks(execute=True):
        again = evaluation_judge_missing(pairs=evaluation_pairs(problems=selection.problems, origins=selection.origins))
    assert sorted(again.task_ids) == sorted(plan.task_ids) and queue.count == 8
    queue.empty()


@pytest.mark.django_db
def test_command_writes_json_and_csv_and_stores_the_report(tmp_path: Path):
    world = build_world()
    out = tmp_path / "report.json"
    printed = io.StringIO()
    call_command("evaluate", "--pids", world.problem.pid, "--out", str(out), "--sync", "--layout", "hardtests",
                 stdout=printed)
    data = json.loads(out.read_text())
    # The papers' table, printed and written: one cf level (easy), its plain-mean average, all.
    assert data["paper"]["columns"] == ["easy", "average", "all"] and data["paper"]["problems_excluded"] == 0
    text = printed.getvalue()
    public_row = next(line for line in text.splitlines() if line.startswith("public ") and "33.33" in line)
    # public precision 1/3 (easy, average, all), recall 1, F1 2*1/(2+2) = 0.5.
    assert public_row.split()[1:] == ["33.33"] * 3 + ["100.00"] * 3 + ["50.00"] * 3
    tables_csv = (tmp_path / "report.tables.csv").read_text()
    assert "paper-macro-all,public,0.333" in tables_csv and "tau-selection,0.5," in tables_csv
    assert r"public & 33.33 & 33.33 & 33.33" in (tmp_path / "report.tables.tex").read_text()
    for key in ("by_origin", "by_difficulty", "by_platform", "by_kind", "tau", "redundancy", "near_duplicates", "cost"):
        assert key in data
    for m in data["by_origin"].values():
        assert {"tp", "fp", "tn", "fn", "precision", "recall", "f1", "tpr", "tnr"} <= set(m)
    assert (tmp_path / "report.csv").read_text().startswith("section,origin,group")
    assert EvaluationReport.objects.get().report == data


@pytest.mark.django_db
def test_undefined_metrics_are_null_in_json_and_empty_in_csv(tmp_path: Path):
    problem = ProblemFactory(pid="eval/none-right")
    _suite(problem, TestSuite.Origin.PUBLIC, [NewTest(input="1 2\n", output="3\n", kind="public")])
    SolutionFactory(problem=problem, role=Solution.Role.CANDIDATE, name="wrong.py", code="print(4)\n",
                    gold_verdict="WA")
    out = tmp_path / "r.json"
    call_command("evaluate", "--pids", problem.pid, "--out", str(out), "--sync", stdout=open(os.devnull, "w"))
    pub = json.loads(out.read_text())["by_origin"]["public"]
    # No gold positive and no predicted positive: precision, recall, TPR and F1 are null.
    assert counts(pub) == (0, 0, 1, 0) and pub["tnr"] == 1.0
    assert pub["precision"] is None and pub["recall"] is None and pub["tpr"] is None and pub["f1"] is None
    row = next(line for line in (tmp_path / "r.csv").read_text().splitlines() if line.startswith("by_origin,public"))
    assert row.split(",")[3:13] == ["0", "0", "1", "0", "1", "", "", "", "", "1.0"]


def manage_here(*args: str) -> int:
    """`manage.py ARGS` as the process runs it once Django is set up (the command's argv parsing,
    a CommandError written to stderr as one line, the exit status), in this process: a new
    interpreter spends ~2.5 s of CPU importing Django before it refuses. Returns the exit status;
    the caller reads stderr from capsys. run_from_argv ends by closing the database connections,
    as an exiting process does; here the test's transaction must outlive it."""
    from django.core.management import ManagementUtility
    from django.db import connections

    command = ManagementUtility(["manage.py", *args]).fetch_command(args[0])
    close_all = connections.close_all
    connections.close_all = lambda: None  # type: ignore[method-assign]
    try:
        command.run_from_argv(["manage.py", *args])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    finally:
        connections.close_all = close_all  # type: ignore[method-assign]
    return 0


@pytest.mark.django_db
@pytest.mark.parametrize(("args", "message", "in_a_subprocess"), [
    # one through manage.py in a process of its own (startup, settings, the exit), the others here
    (["--pids", "no/such"], "unknown pid(s): no/such", True),
    (["--origins", "llm"], "unknown origin(s): llm", False),
    (["--filter", "colour=red"], "unknown filter key 'colour'", False),
    (["--filter", "platform"], "is not key=value", False),
    (["--filter", "source=nowhere"], "no problem matches", False),
])
def test_command_bad_input_exits_non_zero_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        args: list[str], message: str, in_a_subprocess: bool):
    argv = ["evaluate", *args, "--out", str(tmp_path / "r.json")]
    if in_a_subprocess:
        proc = manage(*argv, check=False)
        returncode, stderr = proc.returncode, proc.stderr
    else:
        returncode, stderr = manage_here(*argv), capsys.readouterr().err
    assert returncode != 0
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], stderr


@pytest.mark.django_db
def test_command_refuses_a_bad_out_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # the process path of this command's refusals is the subprocess case above
    for out, message in ((tmp_path / "r.txt", "must name a .json"), (tmp_path / "no" / "r.json", "does not exist")):
        returncode = manage_here("evaluate", "--out", str(out))
        stderr = capsys.readouterr().err
        lines = stderr.strip().splitlines()
        assert returncode != 0 and len(lines) == 1 and message in lines[0], stderr


@pytest.fixture
def sandbox_worker() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(checked_worker_argv("sandbox"), env=worker_env(),
                            cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    yield proc
    process_group_stop(proc)  # SIGTERM: the worker unregisters, as serve stops it


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_command_waits_for_the_sandbox_workers(tmp_path: Path, sandbox_worker: subprocess.Popen[bytes], rq_queues):
    world = build_world()
    out = tmp_path / "report.json"
    call_command("evaluate", "--pids", world.problem.pid, "--out", str(out), "--timeout", "240",
                 stdout=open(os.devnull, "w"))
    data = json.loads(out.read_text())
    assert data["counts"]["pairs_judged"] == 8
    assert counts(data["by_origin"]["public"]) == (1, 2, 1, 0)
    assert JudgingTask.objects.filter(status=JudgingTask.Status.DONE).count() == 8


@pytest.mark.django_db
def test_which_verdicts_are_current():
    from problems.services import verdict_record

    world = build_world()
    selection = evaluation_select(pids=[world.problem.pid])
    pairs = evaluation_pairs(problems=selection.problems, origins=selection.origins)
    assert len(pairs.wanted) == 8 and not pairs.current
    for solution, suite in pairs.wanted:
        results = [{"ordinal": i, "verdict": "AC", "time_ms": 1, "wall_ms": 2, "memory_kb": 3}
                   for i in range(suite.test_count)]
        verdict_record(solution=solution, suite=suite, verdict="AC", passed=suite.test_count, total=suite.test_count,
                       complete=True, results=results)
    gen = world.generated
    Verdict.objects.filter(solution__name="right.py", suite=gen).update(verdict="SE")   # sandbox failed
    Verdict.objects.filter(solution__name="print3.py", suite=gen).update(complete=False)  # stopped early
    Verdict.objects.filter(solution__name="overflow.cpp", suite=gen).update(results=[])   # results lost
    Verdict.objects.filter(solution__name="broken.cpp", suite=gen).update(verdict="CE", complete=False, results=[])
    pairs = evaluation_pairs(problems=selection.problems, origins=selection.origins)
    assert sorted(s.name for s, _ in pairs.missing) == ["overflow.cpp", "print3.py", "right.py"]
    assert all(t == gen for _, t in pairs.missing)


@pytest.mark.django_db
def test_roles_and_per_problem_choose_which_solutions_are_measured():
    from review.evaluation.selectors import EvaluationInputError, evaluation_candidates

    world = build_world()
    problems = Problem.objects.filter(pk=world.problem.pk)
    names = [s.name for s in evaluation_candidates(problems=problems)]
    assert names == ["right.py", "print3.py", "overflow.cpp", "broken.cpp"]  # oracles only when asked
    both = [s.name for s in evaluation_candidates(problems=problems, roles=["candidate", "oracle"])]
    assert both == [*names, "oracle.py"]
    assert [s.name for s in evaluation_candidates(problems=problems, per_problem=2)] == names[:2]
    selection = evaluation_select(pids=[world.problem.pid], roles=["oracle"], per_problem=1)
    pairs = evaluation_pairs(problems=selection.problems, origins=selection.origins, roles=selection.roles,
                             per_problem=selection.per_problem)
    assert {(s.name, t.origin) for s, t in pairs.wanted} == {("oracle.py", "generated"), ("oracle.py", "public")}
    with pytest.raises(EvaluationInputError, match="unknown role"):
        evaluation_select(roles=["judge"])
    with pytest.raises(EvaluationInputError, match="at least 1"):
        evaluation_select(per_problem=0)
