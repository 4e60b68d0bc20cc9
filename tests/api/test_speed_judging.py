"""One verification uses every core: its tests split across sandbox lanes (HARDTESTS_JUDGE_PARALLEL).

Asserted on order and counts, never on wall time: lanes really overlap (a barrier both must
reach), the first failure stops the other lane, and the answer equals the one-after-another one.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

import pytest

from problems import judging, verify_contract
from problems.judging import judge_code
from problems.models import TestSuite
from problems.services import NewTest, judge_create, suite_activate, suite_add_tests, suite_create
from problems.verify_types import Mode, SuiteSnapshot
from tests.factories import ProblemFactory

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
# Right except on a few inputs, where it is wrong, crashes, or prints nothing.
MIXED = (
    "a, b = map(int, input().split())\n"
    "if a == 3: print(a + b + 1)\n"
    "elif a == 5: raise SystemExit(3)\n"
    "elif a == 6: pass\n"
    "else: print(a + b)\n"
)


def _suite(problem, tests, judge=None):
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, output_judge=judge)
    suite_add_tests(suite=suite, tests=tests)
    return suite_activate(suite=suite)


def _tests(count: int) -> list[NewTest]:
    return [NewTest(input=f"{a} {a * 10}\n", output=f"{a * 11}\n", kind="regular") for a in range(count)]


class Recorder:
    """Wraps the sandbox's run: counts tests per call, and with `meet` makes the first two calls
    wait for each other (a barrier only concurrent lanes can pass)."""

    def __init__(self, monkeypatch, meet: bool = False) -> None:
        self.calls: list[int] = []
        self.met: list[bool] = []
        self.barrier = threading.Barrier(2) if meet else None
        self.lock = threading.Lock()
        sb = judging.get_sandbox()
        real = sb.run

        def run(prog, inputs, limits, **kwargs):
            if self.barrier is not None and len(self.met) < 2:
                try:
                    self.barrier.wait(timeout=60)
                    self.met.append(True)
                except threading.BrokenBarrierError:
                    self.met.append(False)
            results = real(prog, inputs, limits, **kwargs)
            with self.lock:
                self.calls.append(len(results))
            return results

        monkeypatch.setattr(sb, "run", run)
        monkeypatch.setattr(judging, "get_sandbox", lambda: sb)


def test_lanes_of_one_verification_run_at_the_same_time(settings, monkeypatch):
    settings.HARDTESTS_JUDGE_PARALLEL = 2
    problem = ProblemFactory()
    suite = _suite(problem, _tests(8))
    rec = Recorder(monkeypatch, meet=True)
    result = judge_code(problem=problem, suite=suite, language="python3", code=ADD, mode="all")
    assert (result.verdict, result.passed, result.complete) == ("AC", 8, True)
    # two sandbox batches, inside one another in time, sharing the tests: every test once (the
    # lanes claim tests as they go: under load the batch that opened first may take them all)
    assert len(rec.calls) == 2 and sum(rec.calls) == 8 and rec.met == [True, True]


def test_parallel_answers_equal_sequential_ones(settings):
    problem = ProblemFactory()
    suite = _suite(problem, _tests(10))
    answers = {}
    for lanes in (1, 2):
        settings.HARDTESTS_JUDGE_PARALLEL = lanes
        answers[lanes] = [
            judge_code(problem=problem, suite=suite, language="python3", code=MIXED, mode=mode)
            for mode in ("all", "fail_fast")
        ]
    for one, two in zip(answers[1], answers[2], strict=True):
        assert [(t.ordinal, t.verdict) for t in one.tests] == [(t.ordinal, t.verdict) for t in two.tests]
        assert (one.verdict, one.passed, one.complete) == (two.verdict, two.passed, two.complete)
    full, fast = answers[2]
    assert [t.verdict for t in full.tests] == ["AC", "AC", "AC", "WA", "AC", "RE", "WA", "AC", "AC", "AC"]
    assert (full.verdict, full.passed, full.complete) == ("WA", 7, True)
    assert (fast.verdict, len(fast.tests), fast.complete) == ("WA", 4, False)


def test_the_first_failure_stops_the_other_lane(settings, monkeypatch):
    settings.HARDTESTS_JUDGE_PARALLEL = 2
    problem = ProblemFactory()
    # The hacking test (run first, lane 0) is the only one it fails; every other test sleeps
    # 0.3 s, so an unstopped lane 1 would run all its 20 tests.
    tests = [NewTest(input="0 0\n", output="1\n", kind="hacking"), *_tests(40)[1:]]
    suite = _suite(problem, tests)
    code = "import time\na, b = map(int, input().split())\nif a: time.sleep(0.3)\nprint(a + b)\n"
    rec = Recorder(monkeypatch)
    result = judge_code(problem=problem, suite=suite, language="python3", code=code, mode="fail_fast")
    assert (result.verdict, len(result.tests), result.passed) == ("WA", 1, 0)
    assert len(rec.calls) == 2 and max(rec.calls) < 10, rec.calls


def test_a_judging_function_is_applied_in_every_lane(settings):
    problem = ProblemFactory()
    judge = judge_create(
        problem=problem, origin="imported",
        code="def output_judging_function(input_str, candidate_output, reference_output):\n"
        "    return candidate_output.split() == reference_output.split()\n",
    )
    suite = _suite(problem, _tests(9), judge=judge)
    answers = {}
    for lanes in (1, 2):
        settings.HARDTESTS_JUDGE_PARALLEL = lanes
        answers[lanes] = [
            judge_code(problem=problem, suite=suite, language="python3", code=MIXED, mode=mode)
            for mode in ("all", "fail_fast")
        ]
    for one, two in zip(answers[1], answers[2], strict=True):
        assert [(t.ordinal, t.verdict) for t in one.tests] == [(t.ordinal, t.verdict) for t in two.tests]
    assert [t.verdict for t in answers[2][0].tests] == ["AC", "AC", "AC", "WA", "AC", "RE", "WA", "AC", "AC"]


def test_python_runs_while_its_syntax_check_does_and_a_syntax_error_is_still_ce(settings, monkeypatch):
    # without the zygote (whose own compile answers the check where it can: test_python_warm_start)
    monkeypatch.setenv("HARDTESTS_SANDBOX_ZYGOTE", "0")
    settings.HARDTESTS_JUDGE_PARALLEL = 1
    problem = ProblemFactory()
    suite = _suite(problem, _tests(4))
    sb = judging.get_sandbox()
    barrier = threading.Barrier(2)
    met: list[bool] = []
    real_compile, real_run = sb.compile, sb.run

    def meet() -> None:
        try:
            barrier.wait(timeout=60)
            met.append(True)
        except threading.BrokenBarrierError:
            met.append(False)

    def compile_(*args, **kwargs):
        meet()
        return real_compile(*args, **kwargs)

    def run(*args, **kwargs):
        meet()
        return real_run(*args, **kwargs)

    monkeypatch.setattr(sb, "compile", compile_)
    monkeypatch.setattr(sb, "run", run)
    monkeypatch.setattr(judging, "get_sandbox", lambda: sb)
    # a text of its own: the check is not in the compile cache
    code = ADD + f"# {threading.get_ident()} {id(met)}\n"
    result = judge_code(problem=problem, suite=suite, language="python3", code=code, mode="all")
    assert (result.verdict, result.passed) == ("AC", 4) and met == [True, True]
    monkeypatch.setattr(sb, "compile", real_compile)
    monkeypatch.setattr(sb, "run", real_run)
    broken = judge_code(problem=problem, suite=suite, language="python3", code="print(1\n", mode="all")
    assert (broken.verdict, broken.passed, broken.tests) == ("CE", 0, [])
    assert "SyntaxError" in broken.message or "never closed" in broken.message, broken.message


def test_sandbox_run_stops_on_stop_before_and_on_stop_when():
    from sandbox import Limits, get_sandbox

    sb = get_sandbox()
    prog = sb.compile("python3", ADD)
    inputs = [f"{a} 1\n" for a in range(5)]
    limits = Limits(time_s=2, memory_mb=256)
    assert len(sb.run(prog, inputs, limits, stop_before=lambda index: index >= 2)) == 2
    seen = []
    runs = sb.run(prog, inputs, limits, expected=[f"{a + 1}\n" if a != 2 else "0\n" for a in range(5)],
                  stop_when=lambda r: seen.append(r.matched) or r.matched is False)
    assert [r.matched for r in runs] == [True, True, False] and seen == [True, True, False]


def test_a_lane_still_runs_its_tests_before_another_lanes_failure(settings):
    # Lane 0 takes positions 0 and 1 (one asked for ahead), lane 1 positions 2 and 3. Position 0
    # sleeps, so lane 1 fails at position 3 first; lane 0 must still run positions 0 and 1, as
    # sequential judging would (its tests in flight come before the failure: it is not aborted).
    problem = ProblemFactory(time_limit_ms=2000)
    suite = _suite(problem, _tests(8))
    code = ("import time\na, b = map(int, input().split())\nif a == 0: time.sleep(1.5)\n"
            "print(a + b + (a == 3))\n")
    answers = {}
    for lanes in (1, 2):
        settings.HARDTESTS_JUDGE_PARALLEL = lanes
        answers[lanes] = judge_code(problem=problem, suite=suite, language="python3", code=code, mode="fail_fast")
    for result in answers.values():
        assert [t.verdict for t in result.tests] == ["AC", "AC", "AC", "WA"], result.tests


# -- less in the way: a worker with the suite cached judges without the database ---------


def _without_timing(result: dict) -> dict:
    return {**result, "elapsed_ms": None, "phases": None, "timings": None, "tests": [{**t, "time_ms": None, "wall_ms": None, "memory_kb": None}
                                                    for t in result["tests"]]}


def test_a_worker_with_the_suite_cached_judges_from_the_api_s_snapshot_without_a_query(django_assert_num_queries):
    from problems.jobs import judge_code_job

    problem = ProblemFactory(time_limit_ms=1000)
    suite = _suite(problem, _tests(6))
    taken = verify_contract.suite_snapshot(TestSuite.objects.select_related("problem").get(pk=suite.pk))
    snapshot = taken.to_wire()  # as the job's meta carries it
    judging.suite_cache.clear()
    # not cached yet: the suite, its bodies and its judging function are read
    cold = judge_code_job(problem.pk, suite.pk, "python3", MIXED, "all", resolved=snapshot)
    with django_assert_num_queries(0):
        warm = judge_code_job(problem.pk, suite.pk, "python3", MIXED, "all", resolved=snapshot)
    assert [t["verdict"] for t in warm["tests"]] == ["AC", "AC", "AC", "WA", "AC", "RE"]
    assert (warm["verdict"], warm["passed"], warm["suite_id"], warm["suite_version"]) == ("WA", 4, suite.pk, 1)
    assert _without_timing(warm) == _without_timing(cold)
    # a snapshot that does not name the cached suite for good (a row replaced after a
    # rollback: same id, another creation time), or names another suite, is not trusted
    replaced = replace(taken, created_at=taken.created_at - timedelta(seconds=1)).to_wire()
    for resolved in (replaced, dict(snapshot, suite_id=suite.pk + 1), {"suite_id": suite.pk}, None):
        with django_assert_num_queries(2):  # the suite, and its judging function (read afresh: a cache key)
            again = judge_code_job(problem.pk, suite.pk, "python3", MIXED, "all", resolved=resolved)
        assert _without_timing(again) == _without_timing(cold)


def test_the_api_enqueues_its_snapshot_of_the_suite_and_a_worker_judges_from_it(fake_worker,
                                                                              django_assert_num_queries):
    from rq.worker import SimpleWorker

    from api.verification import _enqueue, verification_prepare
    from core.queues import verification_queue
    from problems.verify_contract import SNAPSHOT_META_KEY as JUDGE_JOB_SNAPSHOT

    problem = ProblemFactory(source="t", pid="ab/snap", time_limit_ms=1500, memory_limit_mb=128)
    suite = _suite(problem, _tests(2))
    with django_assert_num_queries(1):  # the problem and its active suites in one query
        item = verification_prepare(problem="ab/snap", language="python3", code=ADD, mode=Mode.FAIL_FAST, suite=None)
    # the judging function, by content (the verdict cache's key and the snapshot name it), was read
    # with the suite in that one query, and so was the rest of what the snapshot holds
    with django_assert_num_queries(0):
        [job] = _enqueue([item], owner_id=1, queued_ttl=30, result_ttl=30)
    # the request's wire as the job's keyword arguments (the names an earlier release's worker
    # took positionally), the snapshot in its meta: a worker of an earlier release takes the job as before
    assert job.args == () and job.kwargs == {"problem_id": problem.pk, "suite_id": suite.pk, "language": "python3",
                                             "code": ADD, "mode": "fail_fast", "subset": "full"}
    resolved = job.meta[JUDGE_JOB_SNAPSHOT]
    assert (resolved["suite_id"], resolved["problem_id"], resolved["version"]) == (suite.pk, problem.pk, 1)
    assert (resolved["time_limit_ms"], resolved["memory_limit_mb"], resolved["comparison"]) == (1500, 128, "tokens")
    assert SuiteSnapshot.from_wire(resolved).created_at == TestSuite.objects.get(pk=suite.pk).created_at
    # a worker (here, in this process) with the suite cached judges the job from its meta alone
    judge_code(problem=problem, suite=suite, language="python3", code=ADD)
    queue = verification_queue()
    with django_assert_num_queries(0):
        SimpleWorker([queue], connection=queue.connection).work(burst=True)
    answer = job.latest_result().return_value
    assert (answer["verdict"], answer["passed"], answer["suite_id"]) == ("AC", 2, suite.pk)


def test_a_suite_s_inputs_are_written_once_for_every_verification_and_lane(settings, monkeypatch):
    """Judging names a suite's inputs by their digest: the lanes of every later verification of
    it read the directory the first one wrote (sandbox.cache.inputs_acquire)."""
    from sandbox import cache

    settings.HARDTESTS_JUDGE_PARALLEL = 2
    suite = _suite(ProblemFactory(), _tests(12))
    cache._inputs.drop()
    writes: list[int] = []
    write = cache.inputs_write

    def counted(raw):
        writes.append(len(raw))
        return write(raw)

    monkeypatch.setattr(cache, "inputs_write", counted)
    try:
        for _ in range(3):
            result = judge_code(problem=suite.problem, suite=suite, language="python3", code=ADD, mode="fail_fast")
            assert (result.verdict, result.passed) == ("AC", 12)
        assert sum(writes) <= 2 * 12 and len(writes) <= 2  # the first verification's lanes, at most
        wrong = judge_code(problem=suite.problem, suite=suite, language="python3", code=MIXED, mode="all")
        assert (wrong.verdict, wrong.passed) == ("WA", 9) and sum(writes) <= 2 * 12
    finally:
        cache._inputs.drop()


def test_the_inputs_digest_names_the_inputs_their_order_and_their_bounds():
    def key(*inputs: bytes) -> str:
        tests = [judging.LoadedTest(ordinal=i, kind="regular", input=data, output=b"") for i, data in enumerate(inputs)]
        return judging.LoadedSuite(tests=tests, judge_code=None, size=0).inputs_key

    assert key(b"1 2\n", b"3 4\n") == key(b"1 2\n", b"3 4\n")
    assert len({key(b"1 2\n", b"3 4\n"), key(b"3 4\n", b"1 2\n"), key(b"1 2\n3", b" 4\n"), key(b"1 2\n", b"3 5\n"),
                key(b"1 2\n"), key(b"1 2\n", b"3 4\n", b"")}) == 6
