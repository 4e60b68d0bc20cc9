"""generate_tests, judge, sandbox_run and demo_materialise from the command line."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from generation.models import GenerationRun
from problems.models import Problem, TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.conftest import manage
from tests.generation.conftest import FakeLLM, inputs_reply, make_problem, validator_reply
from tests.review.test_eval_services import manage_here

pytestmark = [pytest.mark.django_db]


def call(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.usefixtures("small_counts")
def test_generate_tests_sync_prints_one_json_object_per_problem(fake_llm: FakeLLM) -> None:
    make_problem("test/one")
    make_problem("test/two", oracles=[("python3", "print(1)\n")])
    fake_llm.reply(validator_reply(), inputs_reply(), validator_reply(), inputs_reply())
    out = StringIO()
    # test/two's run fails: every line is printed, then the command fails (exit 1) naming it
    with pytest.raises(CommandError, match=r"1 run did not succeed: test/two \(no_valid_oracle\)"):
        call_command("generate_tests", "test/one", "test/two", "--sync", "--model", "other-model", stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [x["pid"] for x in lines] == ["test/one", "test/two"]
    assert lines[0]["status"] == "succeeded" and lines[0]["suite_version"] == 1
    assert lines[0]["failure_reason"] is None and lines[0]["counts"]["total"]["kept"] > 0
    assert lines[1]["status"] == "failed" and lines[1]["failure_reason"] == "no_valid_oracle"
    assert lines[1]["suite_version"] is None
    assert fake_llm.requests[0]["model"] == "other-model"


def test_generate_tests_rejects_unknown_problems_and_empty_selections() -> None:
    with pytest.raises(CommandError, match="unknown problem 'nope'"):
        call("generate_tests", "nope", "--sync")
    with pytest.raises(CommandError, match="name problem ids"):
        call("generate_tests", "--sync")


@pytest.mark.django_db(transaction=True)
def test_generate_tests_queues_in_bulk_without_waiting() -> None:
    make_problem("test/a")
    make_problem("test/b")
    out = call("generate_tests", "--source", "test", "--from-kit", "--no-wait")
    assert "queued 2 generation runs" in out
    runs = GenerationRun.objects.filter(mode=GenerationRun.Mode.FROM_KIT)
    assert runs.count() == 2 and all(r.job_id for r in runs)


@pytest.mark.django_db(transaction=True)
def test_generate_tests_takes_the_runs_mode_by_name() -> None:
    make_problem("test/m", oracles=[])
    out = call("generate_tests", "test/m", "--mode", "oracle_free", "--no-wait")
    assert "queued 1 generation run" in out
    assert list(GenerationRun.objects.values_list("mode", flat=True)) == [GenerationRun.Mode.ORACLE_FREE]
    with pytest.raises(CommandError, match="disagree"):
        call("generate_tests", "test/m", "--from-kit", "--mode", "acecoder", "--no-wait")


def _suite_with_tests(problem) -> TestSuite:
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED)
    suite_add_tests(suite=suite, tests=[
        NewTest(input="1 2\n", output="3\n", kind="direct"),
        NewTest(input="1000000000 1000000000\n", output="2000000000\n", kind="hacking"),
    ])
    return suite_activate(suite=suite)


def test_judge_prints_the_verdict_as_json(tmp_path) -> None:
    problem = make_problem("test/judge")
    _suite_with_tests(problem)
    good = tmp_path / "good.py"
    good.write_text("a, b = map(int, input().split())\nprint(a + b)\n")
    result = json.loads(call("judge", "test/judge", "--language", "python3", "--file", str(good), "--all"))
    assert result["verdict"] == "AC" and result["passed"] == result["total"] == 2
    assert result["suite_origin"] == "generated" and result["suite_version"] == 1
    assert result["tests"][0]["kind"] == "hacking"  # hacking tests first
    assert set(result["tests"][0]) >= {"index", "kind", "verdict", "time_ms", "memory_kb"}
    wrong = tmp_path / "wrong.cpp"
    wrong.write_text("#include <cstdio>\nint main(){long a,b;scanf(\"%ld %ld\",&a,&b);printf(\"%ld\\n\",a-b);}\n")
    result = json.loads(call("judge", "test/judge", "--language", "cpp", "--file", str(wrong)))
    assert result["verdict"] == "WA" and result["passed"] == 0 and len(result["tests"]) == 1


def test_judge_rejects_bad_input_with_a_reason(tmp_path) -> None:
    problem = make_problem("test/bad")
    _suite_with_tests(problem)
    source = tmp_path / "x.py"
    source.write_text("print(3)\n")
    cases = [
        (["judge", "test/bad", "--language", "rust", "--file", str(source)], "unknown language 'rust'"),
        (["judge", "test/bad", "--language", "python3", "--file", str(tmp_path / "missing.py")], "cannot read"),
        (["judge", "nope", "--language", "python3", "--file", str(source)], "unknown problem 'nope'"),
        (["judge", "test/bad", "--language", "python3", "--file", str(source), "--origin", "official"],
         "no active official suite"),
        (["judge", "test/bad", "--language", "python3", "--file", str(source), "--origin", "mine"],
         "unknown origin 'mine'"),
    ]
    for args, message in cases:
        with pytest.raises(CommandError, match=message):
            call(*args)


def test_commands_exit_non_zero_with_one_line_on_bad_input(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "x.py"
    source.write_text("print(3)\n")
    # the first through manage.py in a process of its own; the second through the same argv path
    # in this process (a new interpreter spends ~2.5 s of CPU importing Django before it refuses)
    for args, message, in_a_subprocess in [
        (["judge", "nope", "--language", "rust", "--file", str(source)], "unknown language 'rust'", True),
        (["generate_tests", "nope", "--sync"], "unknown problem 'nope'", False),
    ]:
        if in_a_subprocess:
            proc = manage(*args, check=False)
            returncode, stderr = proc.returncode, proc.stderr
        else:
            returncode, stderr = manage_here(*args), capsys.readouterr().err
        assert returncode != 0, args
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], stderr


def test_sandbox_run_wraps_the_sandbox_cli(tmp_path) -> None:
    source = tmp_path / "p.py"
    source.write_text("print(int(input()) * 2)\n")
    data = tmp_path / "in.txt"
    data.write_text("21\n")
    proc = manage("sandbox_run", str(source), "--language", "python3", "--input", str(data))
    result = json.loads(proc.stdout)
    assert result["verdict"] == "OK" and result["stdout"] == "42\n"
    assert manage("sandbox_run", str(tmp_path / "none.py"), "--language", "python3", check=False).returncode != 0


@pytest.mark.django_db(transaction=True)
def test_demo_materialise_enqueue_queues_kits_without_an_active_generated_suite() -> None:
    from problems.demo import demo_folders, demo_load

    if not demo_folders():
        pytest.skip("no demo problems bundled yet")
    demo_load()
    demo = list(Problem.objects.filter(source="demo").order_by("pid"))
    done = demo[0]
    suite = _suite_with_tests(done)
    out = call("demo_materialise", "--enqueue")
    runs = GenerationRun.objects.filter(problem__source="demo")
    assert runs.count() == len(demo) - 1 and not runs.filter(problem=done).exists()
    assert all(r.mode == GenerationRun.Mode.FROM_KIT and r.judge_candidates and r.job_id for r in runs)
    candidates = done.solutions.filter(role="candidate").count()
    assert f"queued {len(demo) - 1} generation runs and {candidates} judging tasks" in out
    # a second start queues nothing new while those runs are pending
    assert "queued 0 generation runs and 0 judging tasks" in call("demo_materialise", "--enqueue")
    assert suite.status == TestSuite.Status.ACTIVE
