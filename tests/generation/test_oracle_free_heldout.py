"""Held-out check of the oracle-free modes: four problems of other shapes than the first tests'
(multi-test-case input, a real-number answer with a judge, many right answers with a judging
function, a string problem) and scripted replies written for them (tests/oracle_free_heldout.py).
Only the LLM is faked (the loopback server); the sandbox and database are real."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from generation.models import FailureReason, GenerationRun, LLMCall
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.blobs import blobs_iter
from problems.judging import judge_code
from problems.models import TestCase, TestSuite
from tests.generation.conftest import FakeLLM, start_fake_llm
from tests.oracle_free_heldout import AVG, CASES, GAIN, OCC, PAIR, Case

pytestmark = [pytest.mark.django_db]


LIMITS = {"HARDTESTS_GENERATOR_TIME_S": 5.0, "HARDTESTS_CHECKER_TIME_S": 5.0, "HARDTESTS_BRUTE_FORCE_TIME_S": 5.0}


@pytest.fixture(autouse=True)
def _limits(settings) -> None:
    for name, value in LIMITS.items():
        setattr(settings, name, value)


def run_mode(problem, mode: str = GenerationRun.Mode.ORACLE_FREE) -> GenerationRun:
    run = generation_run_start(problem=problem, mode=mode, enqueue=False)
    return generation_run_execute(run_id=run.pk)


def body(sha: str) -> str:
    return next(blobs_iter([sha])).decode()


def verdicts_of(case: Case, problem, suite: TestSuite,
                only: tuple[str, ...] = ()) -> dict[str, tuple[str, list[str]]]:
    """name -> (verdict, kinds of the failing tests), every test run; `only` names the candidates a
    test asserts on (each one judged costs up to its time limit on the maximum-size test)."""
    out = {}
    for name, (language, code, _) in case.candidates.items():
        if only and name not in only:
            continue
        result = judge_code(problem=problem, suite=suite, language=language, code=code, mode="all")
        out[name] = (result.verdict, sorted({t.kind for t in result.tests if t.verdict != "AC"}))
    return out


def acecoder(case: Case, problem, fake_llm: FakeLLM) -> GenerationRun:
    wrong_pair = case.wrong_pair or (case.pairs[0][0], "999\n")
    fake_llm.reply(case.pairs_reply([wrong_pair]), case.solution_reply())
    return run_mode(problem, GenerationRun.Mode.ACECODER)


@pytest.fixture(scope="class")
def a7_runs(django_db_setup: None, django_db_blocker: Any) -> Iterator[dict[str, int]]:
    """The A.7 run of each of the four problems (real sandbox, scripted replies), made once for the
    tests of TestA7Suites inside a transaction rolled back when they are done: pid -> the run's id.
    Each test still runs in a savepoint of its own; the runs' problems get pids of their own, so the
    other tests' problems (the default pids) do not meet them."""
    from django.db import transaction
    from django.test import override_settings

    fake, server = start_fake_llm()
    llm = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "test-key", "HARDTESTS_LLM_MODEL": "fake-model",
           "HARDTESTS_LLM_TIMEOUT_S": 5.0, "HARDTESTS_LLM_MAX_RETRIES": 2, "HARDTESTS_LLM_REPLY_RETRIES": 1,
           "HARDTESTS_CHECKER_REVIEW": False}  # as the fake_llm fixture sets them
    try:
        with django_db_blocker.unblock(), override_settings(**llm, **LIMITS):
            outer = transaction.atomic()
            outer.__enter__()
            try:
                runs = {}
                for pid, case in sorted(CASES.items()):
                    problem = case.make(f"{pid}-a7")
                    # one reply in a fenced block, the other after a "# Result" heading: both documented forms
                    fake.reply(case.a7_reply(style="result" if pid in (AVG.pid, OCC.pid) else "fenced"),
                               case.second_reply())
                    # no oracle: becomes oracle-free by itself
                    runs[pid] = run_mode(problem, GenerationRun.Mode.FROM_SCRATCH).pk
                yield runs
            finally:
                transaction.set_rollback(True)
                outer.__exit__(None, None, None)
    finally:
        server.shutdown()
        server.server_close()


class TestA7Suites:
    """The tests that need a problem's A.7 suite, or its kit, share one run per problem: an A.7
    run (sandboxed brute forces, a maximum-size input) is most of each test's CPU."""

    @pytest.mark.parametrize("pid", sorted(CASES))
    def test_a7_suite_rejects_the_wrong_and_accepts_the_right(self, a7_runs: dict[str, int], pid: str) -> None:
        case = CASES[pid]
        run = GenerationRun.objects.get(pk=a7_runs[pid])
        problem = run.problem
        assert run.mode == GenerationRun.Mode.ORACLE_FREE
        assert run.status == "succeeded", run.error
        suite = run.suite
        assert suite.origin == TestSuite.Origin.ORACLE_FREE and suite.unverified and suite.status == "active"
        tests = list(suite.tests.order_by("ordinal"))
        kinds = [t.kind for t in tests]
        assert kinds.count("public") == len(case.samples) and kinds.count("time_only") == 1
        edges = [t for t in tests if t.kind == "edge"]
        assert len(edges) >= 8, kinds
        assert {t.output_origin for t in edges} == {TestCase.OutputOrigin.BRUTE_FORCE}
        trust = suite.trust
        assert trust["cross_check"]["used"] and trust["cross_check"]["with"] == "second_brute_force"
        assert trust["cross_check"]["agreed"] == len(edges) and trust["model_made_outputs"] == len(edges)
        assert trust["cross_check"]["judged_with"] == ("output_judging_function" if case.judge else "comparison:tokens")
        assert suite.output_judge is not None if case.judge else suite.output_judge is None
        (big,) = [t for t in tests if t.kind == "time_only"]
        assert big.output_size == 0 and big.output_origin == TestCase.OutputOrigin.NONE and big.input_size > 100_000

        verdicts = verdicts_of(case, problem, suite)
        for name, (_, _, gold) in case.candidates.items():
            verdict, failing = verdicts[name]
            if gold == "AC":
                assert (verdict, failing) == ("AC", []), (name, verdicts)
            elif gold == "WA":
                # wrong answers: an output-checked test fails (a slow one may fail the time-only test first)
                assert verdict != "AC" and set(failing) - {"time_only"}, (name, verdicts)
            else:
                # right on every small input: only the maximum-size time-only test catches it
                assert (verdict, failing) == (gold, ["time_only"]), (name, verdicts)

    @pytest.mark.parametrize("pid", sorted(CASES))
    def test_the_acecoder_baseline_filters_and_judges_as_the_problem_is_judged(self, fake_llm: FakeLLM,
                                                                               a7_runs: dict[str, int], pid: str) -> None:
        """AceCoder keeps the pairs its solution reproduces, compared as the suite will be judged (the
        problem's judging function, else the real-number tolerance, else its comparison), and has no
        maximum-size test: its suites accept the right programs and let the slow ones through."""
        case = CASES[pid]
        if case.judge is not None:
            # the problem's judging function comes with its (A.7) kit, as in Table 8's comparison
            a7 = GenerationRun.objects.get(pk=a7_runs[pid])
            assert a7.status == "succeeded"
            problem = a7.problem
        else:
            problem = case.make()
        run = acecoder(case, problem, fake_llm)
        assert run.status == "succeeded", (case.pid, run.error)
        suite = run.suite
        assert suite.origin == "oracle_free" and suite.trust["method"] == "acecoder"
        kept = [(body(t.input_sha256), body(t.output_sha256)) for t in suite.tests.order_by("ordinal")]
        assert kept == case.pairs  # the made-up wrong pair is dropped
        judged_with = suite.trust["cross_check"]["judged_with"]
        assert judged_with == ("output_judging_function" if case.judge else "comparison:tokens")
        if case.judge is not None:
            assert suite.output_judge_id == problem.kits.order_by("-version").first().output_judge_id
        # the wrong answers' verdicts on these small pairs are not asserted: not judged
        verdicts = verdicts_of(case, problem, suite,
                               only=tuple(name for name, c in case.candidates.items() if c[2] != "WA"))
        for name, (_language, _, gold) in case.candidates.items():
            if gold == "AC":
                assert verdicts[name][0] == "AC", (name, verdicts[name])
            elif gold in ("TLE", "RE"):
                assert verdicts[name][0] == "AC", name  # the baseline's blind spot: no maximum-size test

    def test_the_pair_problem_judged_with_its_function_accepts_another_right_pair(self,
                                                                                  a7_runs: dict[str, int]) -> None:
        run = GenerationRun.objects.get(pk=a7_runs[PAIR.pid])
        problem, suite = run.problem, run.suite
        # the brute force takes the smallest i; hashing takes the smallest j: other pairs, both right
        edge = {body(t.input_sha256): body(t.output_sha256) for t in suite.tests.filter(kind="edge")}
        assert edge["6 7\n1 2 3 4 5 6\n"] == "1 6\n"
        result = judge_code(problem=problem, suite=suite, language="python3", code=PAIR.efficient, mode="all")
        assert result.verdict == "AC"
        assert json.dumps(suite.trust)  # the trust record is plain JSON


@pytest.mark.parametrize("pid", sorted(CASES))
def test_a_brute_force_that_fails_a_sample_is_refused(fake_llm: FakeLLM, pid: str) -> None:
    case = CASES[pid]
    problem = case.make()
    wrong = case.a7_reply(brute=case.sample_failing_brute)
    fake_llm.reply(wrong, wrong, case.second_reply())
    run = run_mode(problem)
    assert run.status == "failed" and run.failure_reason == FailureReason.BRUTE_FORCE_REJECTED, run.error
    assert "does not reproduce the statement's samples" in run.error and "sample #" in run.error
    assert "No suite was made. Next: start another oracle-free run" in run.error
    assert not problem.suites.exists()
    # the model saw which sample failed before the run gave up
    assert "sample #" in fake_llm.requests[1]["messages"][-1]["content"]
    assert LLMCall.objects.filter(run=run).count() == 2


@pytest.mark.parametrize("pid", sorted(CASES))
def test_a_brute_force_right_on_the_samples_but_not_on_small_inputs_is_not_trusted(fake_llm: FakeLLM,
                                                                                   pid: str) -> None:
    case = CASES[pid]
    problem = case.make()
    fake_llm.reply(case.a7_reply(brute=case.subtly_wrong_brute), case.second_reply())
    run = run_mode(problem)
    assert run.status == "failed", (run.suite.trust if run.suite else None)
    assert run.failure_reason == FailureReason.BRUTE_FORCE_UNCONFIRMED, run.error
    assert not problem.suites.exists()


# A sentinel too small for the value range: -10**9 + 5 where the smallest gain is 1 - 10**9. Only
# the value-extremes edge input reaches it (1 of ~15 distinct small inputs, 93% agreement).
SENTINEL_BRUTE = """
t = int(input())
for _ in range(t):
    n = int(input())
    a = list(map(int, input().split()))
    best = -10**9 + 5
    for i in range(n):
        for j in range(i + 1, n):
            best = max(best, a[j] - a[i])
    print(best)
"""
SENTINEL_PROGRAM = GAIN.efficient.replace("best = None", "best = -10**9 + 5")


def test_a_brute_force_wrong_on_one_small_input_in_fifteen_is_not_trusted(fake_llm: FakeLLM) -> None:
    # Keeping the agreeing 14 and dropping the one input would keep a suite that cannot tell the
    # program with the same mistake from a right one: any disagreement refuses the brute force.
    problem = GAIN.make()
    fake_llm.reply(GAIN.a7_reply(brute=SENTINEL_BRUTE), GAIN.second_reply())
    run = run_mode(problem)
    assert run.status == "failed", judge_code(problem=problem, suite=run.suite, language="python3",
                                              code=SENTINEL_PROGRAM, mode="all").verdict
    assert run.failure_reason == FailureReason.BRUTE_FORCE_UNCONFIRMED
    # which program disagreed where, and what to do next
    assert "second brute force disagrees on 1 of" in run.error and "efficient solution disagrees on 1 of" in run.error
    assert "1000000000 1" in run.error and "-999999995" in run.error and "-999999999" in run.error
    assert "Next: start another oracle-free run" in run.error
    assert not problem.suites.exists()


def test_a_disagreeing_second_brute_force_leaves_the_efficient_solution_to_confirm(fake_llm: FakeLLM) -> None:
    problem = GAIN.make()
    fake_llm.reply(GAIN.a7_reply(), GAIN.second_reply(SENTINEL_BRUTE))
    run = run_mode(problem)
    assert run.status == "succeeded", run.error
    trust = run.suite.trust
    assert trust["cross_check"]["with"] == "efficient_solution" and trust["cross_check"]["disagreed"] == 0
    [second] = [t for t in trust["cross_checks_tried"] if t["with"] == "second_brute_force"]
    assert second["used"] is False and second["disagreed"] == 1
    # the input the second brute force got wrong stays, with the confirmed output
    outputs = {body(t.input_sha256): body(t.output_sha256) for t in run.suite.tests.filter(kind="edge")}
    assert outputs["2\n2\n1000000000 1\n2\n1 1000000000\n"] == "-999999999\n999999999\n"
    assert judge_code(problem=problem, suite=run.suite, language="python3", code=SENTINEL_PROGRAM,
                      mode="all").verdict == "WA"


def test_acecoder_on_a_real_number_problem_without_a_judge_uses_the_tolerance(fake_llm: FakeLLM) -> None:
    # The statement allows an error of 1e-6 and no kit has a judging function: "5.0" from the model
    # and "5.000000000" from the solution are the same answer.
    problem = AVG.make("hd/avg-bare")
    run = acecoder(AVG, problem, fake_llm)
    assert run.status == "succeeded", run.error
    assert run.suite.trust["cross_check"]["judged_with"] == "tolerance:1e-06"
    assert run.suite.output_judge is not None and "TOLERANCE = 1e-06" in run.suite.output_judge.code
    seven = judge_code(problem=problem, suite=run.suite, language="python3", code=AVG.candidates["seven_digits"][1])
    two = judge_code(problem=problem, suite=run.suite, language="python3", code=AVG.candidates["two_digits"][1])
    assert (seven.verdict, two.verdict) == ("AC", "WA")


def test_a7_on_a_real_number_problem_whose_reply_has_no_judge_uses_the_tolerance(fake_llm: FakeLLM) -> None:
    problem = AVG.make("hd/avg-nojudge")
    reply = AVG.a7_reply().replace('"needs_custom_output_judging_function": true', '"needs_custom_output_'
                                                                                   'judging_function": false')
    fake_llm.reply(reply, AVG.second_reply())
    run = run_mode(problem)
    assert run.status == "succeeded", run.error
    assert "TOLERANCE = 1e-06" in run.suite.output_judge.code
    verdicts = verdicts_of(AVG, problem, run.suite, only=("seven_digits", "two_digits"))
    assert verdicts["seven_digits"][0] == "AC" and verdicts["two_digits"][0] == "WA"


@pytest.mark.django_db(transaction=True)
def test_imported_solutionless_problems_selected_by_a_campaign_get_oracle_free_suites(fake_llm: FakeLLM,
                                                                                      tmp_path) -> None:
    from django.db import transaction

    from core.queues import GENERATION_QUEUE, get_queue
    from generation.campaigns.services import campaign_create
    from problems.importers.runner import dataset_import
    from problems.models import Problem

    rows = tmp_path / "synthetic.jsonl"
    rows.write_text("".join(json.dumps({"source": "synthetic", "pid": f"syn/{case.pid}", "title": case.title,
                                        "statement": case.statement, "samples": case.samples,
                                        "time_limit_ms": case.time_limit_ms}) + "\n" for case in (GAIN, OCC)))
    dataset_import(format_name="native", paths=[str(rows)])
    problems = {p.pid: p for p in Problem.objects.filter(source="synthetic")}
    assert len(problems) == 2 and not any(p.solutions.exists() for p in problems.values())
    queue = get_queue(GENERATION_QUEUE)
    queue.empty()
    with transaction.atomic():
        start = campaign_create(name="synthetic", problem_ids=[p.pk for p in problems.values()])
    runs = list(GenerationRun.objects.filter(campaign=start.campaign).select_related("problem"))
    assert sorted(r.mode for r in runs) == ["oracle_free", "oracle_free"]
    assert all(r.job_id in queue.job_ids for r in runs)
    queue.empty()
    for run in sorted(runs, key=lambda r: r.problem.pid):
        case = GAIN if run.problem.pid.endswith("gain") else OCC
        fake_llm.reply(case.a7_reply(), case.second_reply())
        done = generation_run_execute(run_id=run.pk)
        assert done.status == "succeeded", done.error
        assert done.suite.origin == "oracle_free" and done.suite.status == "active"
        slow = [c for c in case.candidates.values() if c[2] == "TLE"][0]
        assert judge_code(problem=done.problem, suite=done.suite, language=slow[0], code=slow[1]).verdict == "TLE"


def test_a_second_brute_force_that_is_the_first_one_again_confirms_nothing(fake_llm: FakeLLM) -> None:
    # A model asked twice at a low temperature may answer with the same program, laid out anew.
    again = "# exhaustive search again\n" + OCC.brute.replace("print(sum(1 for i", "print(sum(1  for i")
    problem = OCC.make()
    fake_llm.reply(OCC.a7_reply(efficient=None), OCC.second_reply(again))
    run = run_mode(problem)
    assert run.status == "failed" and run.failure_reason == FailureReason.BRUTE_FORCE_UNCONFIRMED, run.error
    [tried] = LLMCall.objects.filter(run=run, purpose="oracle_free_second_brute_force")
    assert tried.parse_error == ""
    assert "the second brute force is not used: the same program as the brute force" in run.error
    # with an efficient solution that is a program of its own, that one confirms instead
    problem = OCC.make("hd/occ-2")
    fake_llm.reply(OCC.a7_reply(), OCC.second_reply(again))
    run = run_mode(problem)
    assert run.status == "succeeded", run.error
    trust = run.suite.trust
    assert trust["cross_check"]["with"] == "efficient_solution"
    assert {"with": "second_brute_force", "used": False,
            "why": "the same program as the brute force: not an independent check"} in trust["cross_checks_tried"]


# A loose validator (no bound on n) and a "maximum" input past the bound: a right program with an
# array sized for the statement's bound crashes there. The efficient solution, confirmed on the
# small inputs, crashes too, which says the input is outside the constraints.
LOOSE_VALIDATOR = GAIN.validator.replace("not 2 <= n <= 200000", "not 2 <= n").replace("total <= 200000", "True")
TOO_BIG_MAX = GAIN.maximum.replace("n = 200000", "n = 250000")
BOUNDED_EFFICIENT = GAIN.efficient.replace("pos = 1\n", "pos = 1\nslots = [0] * 200001\n", 1).replace(
    "        if x < lowest:", "        slots[pos + 2 - pos] = x\n        slots[n] = x\n        if x < lowest:")


def test_a_maximum_input_the_confirmed_solution_crashes_on_is_not_a_test(fake_llm: FakeLLM) -> None:
    problem = GAIN.make()
    reply = json.loads(GAIN.a7_reply().split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    reply.update(input_validator=LOOSE_VALIDATOR, max_input_generator=TOO_BIG_MAX, efficient_solution=BOUNDED_EFFICIENT)
    fake_llm.reply("```json\n" + json.dumps(reply) + "\n```", GAIN.second_reply())
    run = run_mode(problem)
    assert run.status == "succeeded", run.error
    trust = run.suite.trust
    assert trust["max_test"]["status"] == "dropped" and trust["max_test"]["efficient_solution"]["verdict"] == "RE"
    assert trust["time_only_tests"] == 0 and not run.suite.tests.filter(kind="time_only").exists()
    efficient = [t for t in trust["cross_checks_tried"] if t["with"] == "efficient_solution"]
    assert efficient and efficient[0]["confirms"] and efficient[0]["disagreed"] == 0
    # a right program with the statement's array bound is not failed by a test outside the bound
    assert judge_code(problem=problem, suite=run.suite, language="python3", code=BOUNDED_EFFICIENT,
                      mode="all").verdict == "AC"
