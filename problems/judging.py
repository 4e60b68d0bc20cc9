"""Judging a program against a test suite, in the sandbox.

Tests run in the suite's kill order (problems/kill_order.py: the tests that fail the most
known-wrong programs first), or by kind (hacking first) while nothing is known, and in
fail-fast mode judging stops at the first failing test; `subset="fast"` judges the suite's
fast subset only. Programs are compiled once per judging
(with the sandbox's on-disk compile cache), test bodies are read from content-addressed
storage once per process and kept in a bounded in-memory cache, because a verification
API serves the same suites thousands of times.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from typing import Any

from django.conf import settings
from django.db.models import Subquery

from problems.blobs import blob_pairs, blobs_put
from problems.kill_order import KIND_ORDER, TIME_ONLY, known_wrong_ids, suite_kill_order_refresh
from problems.models import SUPPORTED_LANGUAGES, OutputJudge, Problem, Solution, TestKit, TestSuite
from problems.models import Verdict as VerdictRecord  # not sandbox.Verdict, a run's verdict
from problems.packages.checking import SuiteChecker, checker_accepts, refusal_message, suite_checker
from problems.packages.interactive import Interactor, judge_runs
from problems.services import verdict_record
from problems.verify_types import Mode
from sandbox import Limits, RunResult, Sandbox, Verdict, cache, call_python, compare_outputs, get_sandbox
from sandbox.base import Batch, RerunBudget
from sandbox.types import CallResult, CompiledProgram

__all__ = ["KIND_ORDER", "TIME_ONLY"]  # re-exported: the API lists a suite's tests in run order
SUBSETS = ("full", "fast")
# Which active suite judges a program when none is named.
ORIGIN_PREFERENCE = (
    TestSuite.Origin.GENERATED,
    TestSuite.Origin.OFFICIAL,
    TestSuite.Origin.IMPORTED,
    # Model-made outputs: preferred to the samples alone, never to a suite an oracle checked.
    TestSuite.Origin.ORACLE_FREE,
    TestSuite.Origin.PUBLIC,
)
FAIL_FAST_FIRST_CHUNK = 4
FAIL_FAST_MAX_CHUNK = 32
# a lane (a sandbox batch of its own) per HARDTESTS_JUDGE_PARALLEL, with at least this many tests each
MIN_TESTS_PER_LANE = 4
CACHE_MAX_BYTES = 512 * 1024 * 1024
# How much of a failing program's output a stored verdict keeps for the matrix's cell view.
FAILURE_OUTPUT_KEPT = 1024 * 1024
# How much of a failing test's judge message a result carries (API tests[].message).
TEST_MESSAGE_KEPT = 500
# How much of an interactive test's log a result carries (API tests[].interaction), in
# characters; the drill-down keeps the log as the relay kept it (sandbox.interactive.LOG_KEPT).
INTERACTION_KEPT = 2000


@dataclass(frozen=True)
class LoadedTest:
    ordinal: int
    kind: str
    input: bytes
    output: bytes


@dataclass
class TestOutcome:
    index: int
    ordinal: int
    kind: str
    verdict: str
    time_ms: int
    wall_ms: int
    memory_kb: int
    # what judged a failing test said (a package checker's message, a judging failure's reason)
    message: str = ""
    # an interactive test's talk ("> " program to interactor, "< " back), cut at INTERACTION_KEPT
    interaction: str = ""


@dataclass
class JudgeResult:
    verdict: str
    passed: int
    total: int
    complete: bool
    suite_id: int
    suite_version: int
    suite_origin: str
    subset: str = "full"
    elapsed_ms: int = 0
    # where the time went (ms): suite load (cache), compile (or its cache hit), tests (the lanes)
    phases: dict[str, float] = field(default_factory=dict)
    message: str = ""
    tests: list[TestOutcome] = field(default_factory=list)
    # ordinal -> (program output, judge message) of failing tests, for the verdict matrix's
    # cell view; kept out of to_dict so API replies stay small.
    failures: dict[int, tuple[bytes, str]] = field(default_factory=dict, repr=False)
    # ordinal -> (interaction log as kept, the interactor's message) of interactive tests, for
    # the verdict drill-down; kept out of to_dict too.
    interactions: dict[int, tuple[str, str]] = field(default_factory=dict, repr=False)

    @property
    def reward(self) -> int:
        return int(self.verdict == "AC")

    def to_dict(self) -> dict[str, Any]:
        # not asdict(): its deep copy of every test and failure took 0.29 ms for a 40-test
        # result (0.01 ms this way), on every API verification
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("tests", "failures", "interactions")}
        data["tests"] = [dict(vars(test)) for test in self.tests]
        data["reward"] = self.reward
        data["pass_fraction"] = self.passed / self.total if self.total else 0.0
        return data


@dataclass(frozen=True)
class LoadedSuite:
    tests: list[LoadedTest]
    # Source of output_judging_function, or None for the problem's comparison.
    judge_code: str | None
    size: int
    comparison: str = "tokens"
    # A problem package's own checker (problems/packages/checking.py): judges instead of both.
    checker: SuiteChecker | None = None

    @functools.cached_property
    def judging(self) -> str:
        """The digest of what judges this suite's outputs (judging_digest): part of every cache key."""
        return judging_digest(self.judge_code, self.comparison, checker=self.checker)

    @functools.cached_property
    def inputs_key(self) -> str:
        """A digest of the inputs in judging order, computed once per loaded suite: the sandbox
        writes a set of inputs it has seen under this key once per process (cache.inputs_acquire)."""
        digest = hashlib.blake2b(str(len(self.tests)).encode(), digest_size=20)
        for test in self.tests:
            digest.update(len(test.input).to_bytes(8, "little"))
            digest.update(test.input)
        return digest.hexdigest()


class _SuiteCache:
    """Suite -> its tests in judging order and its judge, evicting least recently used past a byte budget."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[Any, ...], LoadedSuite] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @staticmethod
    def key(suite: TestSuite, subset: str, judging: str, kill_order: bool | None = None) -> tuple[Any, ...]:
        # A primary key alone can come back after a rollback (or a restored database);
        # with the creation time it names one suite for good. The order's revision goes up
        # when new verdicts change the kill order. `judging` (judging_digest) names what judges
        # the outputs by content: a judging function fixed in its kit (or edited in place) is
        # another key, so no worker judges with the one it had cached.
        return (suite.pk, suite.problem_id, suite.version, suite.created_at, suite.problem.comparison,
                suite.order_revision, subset, _kill_order_on(kill_order), settings.HARDTESTS_FAST_SUITES,
                judging)

    def peek(self, suite: TestSuite, subset: str, judging: str, kill_order: bool | None = None) -> LoadedSuite | None:
        """The cached copy of `suite` judged by what `judging` names, or None; never reads the database."""
        key = self.key(suite, subset, judging, kill_order)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def get(self, suite: TestSuite, subset: str = "full", *, kill_order: bool | None = None) -> LoadedSuite:
        """`suite`'s tests and its judge as they are now: the judging function is read afresh
        (one query) on every call, and the bodies from the cache when it holds them for it.
        `kill_order`: run in the suite's kill order (None: HARDTESTS_KILL_ORDER), else kind order."""
        judge = judge_source(suite)
        checker = suite_checker(suite)
        judging = judging_digest(judge, suite.problem.comparison, checker=checker)
        hit = self.peek(suite, subset, judging, kill_order)
        if hit is not None:
            return hit
        key = self.key(suite, subset, judging, kill_order)
        loaded = _load_suite(suite, subset, judge, checker, kill_order=kill_order)
        with self._lock:
            # A suite's tests never change after activation, and a new order comes with a new
            # revision (another key), so a cached copy never goes stale.
            if key in self._items:  # loaded meanwhile by another thread: counted once
                return self._items[key]
            self._items[key] = loaded
            self._bytes += loaded.size
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, evicted = self._items.popitem(last=False)
                self._bytes -= evicted.size
        return loaded

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


def _kill_order_on(kill_order: bool | None) -> bool:
    return bool(settings.HARDTESTS_KILL_ORDER if kill_order is None else kill_order)


def judging_position(suite: TestSuite, *, kill_order: bool | None = None) -> dict[int, int]:
    """ordinal -> position in the suite's stored kill order (empty: kind order); {} when kill
    ordering is off (`kill_order`, None: HARDTESTS_KILL_ORDER)."""
    if not _kill_order_on(kill_order):
        return {}
    return {int(ordinal): position for position, ordinal in enumerate(suite.judge_order or [])}


def judging_sort_key(position: dict[int, int]) -> Any:
    """The run order of (ordinal, kind) pairs: the kill order, then kind order for tests it does not name."""
    return lambda item: (position.get(item[0], len(position)), KIND_ORDER.get(item[1], 9), item[0])


def fast_ordinals(suite: TestSuite, *, kill_order: bool | None = None) -> set[int] | None:
    """The fast subset's ordinals, or None for the full suite (none known, or switched off)."""
    if not settings.HARDTESTS_FAST_SUITES or not _kill_order_on(kill_order) or not suite.fast_ordinals:
        return None
    return {int(ordinal) for ordinal in suite.fast_ordinals}


def _load_suite(suite: TestSuite, subset: str, judge: str | None, checker: SuiteChecker | None = None, *,
                kill_order: bool | None = None) -> LoadedSuite:
    rows = list(suite.tests.values_list("ordinal", "kind", "input_sha256", "output_sha256"))
    keep = fast_ordinals(suite, kill_order=kill_order) if subset == "fast" else None
    if keep is not None:
        rows = [row for row in rows if row[0] in keep]
    bodies = blob_pairs((i, out) for _, _, i, out in rows)
    tests = [LoadedTest(o, k, *pair) for (o, k, _, _), pair in zip(rows, bodies, strict=True)]
    by = judging_sort_key(judging_position(suite, kill_order=kill_order))
    tests.sort(key=lambda t: by((t.ordinal, t.kind)))
    return LoadedSuite(tests, judge, sum(len(t.input) + len(t.output) for t in tests), suite.problem.comparison,
                       checker)


def output_judge_for(suite: TestSuite) -> OutputJudge | None:
    """The suite's own judging function; else the one of the problem's latest kit.

    The judging function belongs to the problem (several answers may be right), so imported,
    official and public-sample suites, which carry none of their own, are judged with it too.
    """
    if suite.output_judge_id:
        return suite.output_judge
    kit = suite.problem.kits.select_related("output_judge").order_by("-version").first()
    return kit.output_judge if kit is not None else None


def judge_source(suite: TestSuite) -> str | None:
    """The code of the judging function that judges `suite` now (output_judge_for's choice), read
    from the database on every call (one query): never a copy an instance or a cache kept."""
    if suite.output_judge_id:
        chosen: Any = suite.output_judge_id
    else:
        chosen = Subquery(TestKit.objects.filter(problem_id=suite.problem_id).order_by("-version")
                          .values("output_judge_id")[:1])
    code: str | None = OutputJudge.objects.filter(pk=chosen).values_list("code", flat=True).first()
    return code


# Where a suite instance carries the judging function's code that the query which built it
# read in the same SELECT (`judge_source_sql`): the API's one query of a verification reads
# it there instead of a second query (0.6 ms of CPU for the ORM's). A 1-tuple, so that "no
# judging function" (None) is told from "not read".
JUDGE_SOURCE_READ = "_hardtests_judge_source_read"


def judge_source_sql(suite: str, quote: Callable[[str], str]) -> str:
    """judge_source's choice as a scalar subquery of a SELECT that has TestSuite under the
    alias `suite`: the suite's own judging function, else its problem's latest kit's (or
    none). `quote` is the connection's quote_name. A test holds the two to the same answers."""
    judge, kit = quote(str(OutputJudge._meta.db_table)), quote(str(TestKit._meta.db_table))
    latest = (f"SELECT k.{quote('output_judge_id')} FROM {kit} k WHERE k.{quote('problem_id')} = "
              f"{suite}.{quote('problem_id')} ORDER BY k.{quote('version')} DESC LIMIT 1")
    return (f"(SELECT j.{quote('code')} FROM {judge} j WHERE j.{quote('id')} = "
            f"COALESCE({suite}.{quote('output_judge_id')}, ({latest})))")


# Bumped when the trusted side of judging (the comparators, how a judging function's answer
# or failure is read) changes what it answers: every cache key that names a judging changes.
JUDGING_REVISION = 2


def judging_digest(judge: str | None, comparison: str, *, checker: SuiteChecker | None = None) -> str:
    """What judges a suite's outputs, by content: the judging function's code (or none), the
    problem's comparison, and the revision of the trusted code that reads them. Every cache of
    a verdict or of what produces one (the worker's suite cache, the API's verdict cache) keys
    on it, so a judge fixed in a kit reaches every worker on its next verification."""
    digest = hashlib.sha256(f"{JUDGING_REVISION}\0{comparison}\0".encode())
    digest.update(b"judge\0" + judge.encode("utf-8", "surrogatepass") if judge is not None else b"no judge")
    if checker is not None:
        # a package's checker by content (its files, flags and kind), and whether it can run
        digest.update(f"\0package checker\0{checker.digest}\0{checker.refused}".encode())
    return digest.hexdigest()


suite_cache = _SuiteCache(CACHE_MAX_BYTES)


def suite_for_judging(problem: Problem, origin: str | None = None) -> TestSuite | None:
    """The active suite of `origin`, or the best active one: generated, official, imported, public."""
    # Not the judging function (a text column per suite): only a judging whose suite bodies are not
    # cached yet reads it, and most callers (the API's web side) never do.
    active = {s.origin: s for s in problem.suites.filter(status=TestSuite.Status.ACTIVE)}
    if origin is not None:
        return active.get(origin)
    for candidate in ORIGIN_PREFERENCE:
        if candidate in active:
            return active[candidate]
    return None


def limits_for(problem: Problem) -> Limits:
    return Limits(time_s=problem.time_limit_ms / 1000, memory_mb=problem.memory_limit_mb)


def checker_limits() -> Limits:
    """Validators and judging functions, wherever they run: materialisation, judging, the API, studies."""
    return Limits(time_s=float(settings.HARDTESTS_CHECKER_TIME_S), memory_mb=int(settings.HARDTESTS_CHECKER_MEMORY_MB),
                  output_kb=1024)


def oracle_limits(problem: Problem) -> Limits:
    """Oracles making expected outputs (generation and studies alike).

    They are not being judged, so they get slack: a Python oracle near the limit must not
    turn a good input into a lost one.
    """
    factor = float(settings.HARDTESTS_ORACLE_TIME_FACTOR)
    return Limits(time_s=max(1.0, problem.time_limit_ms / 1000 * factor),
                  memory_mb=min(4096, 2 * problem.memory_limit_mb), output_kb=64 * 1024)


# What a judging function's failure on one test says, by what failed:
# - the sandbox could not run it (SE: starved, a full disk) or could not prepare it (CE): the
#   machine's failure, whatever the program printed;
# - it could not be loaded, or has no output_judging_function: broken for every output alike;
# - it raised, ran out of time or memory, or returned something other than a bool: it is called
#   again with the reference output as the candidate. Failing there too, it cannot judge this test
#   at all (the machine's side: SE); accepting the reference, what it could not read is the
#   program's output (WA: a program must never turn its wrong answer into a judging error by
#   printing what a fragile judge trips on).
_JUDGE_BROKEN = ("loading the code failed", "no function named")


def _accepts(
    sb: Sandbox, judge_code: str | None, tests: list[LoadedTest], results: list[RunResult], comparison: str = "tokens",
    fail_fast: bool = False,
) -> list[tuple[str, str]]:
    """(verdict, reason) for each OK run: "AC" or "WA" by the judging function if there is one,
    else by the problem's comparison; "SE" when the judging function itself failed (see above).
    In fail-fast mode only the first failure counts, so only it is called again."""
    if judge_code is None:
        return [("AC" if compare_outputs(t.output, r.stdout, comparison) else "WA", "")
                for t, r in zip(tests, results, strict=False)]
    calls = [
        (t.input.decode("utf-8", "replace"), r.stdout.decode("utf-8", "replace"), t.output.decode("utf-8", "replace"))
        for t, r in zip(tests, results, strict=False)
    ]
    # The judging function is untrusted code too, so it runs in the sandbox.
    verdicts = call_python(sb, judge_code, "output_judging_function", calls, checker_limits())
    out: list[tuple[str, str]] = []
    suspects: list[int] = []
    for index, v in enumerate(verdicts):
        if v.ok and isinstance(v.value, bool):
            out.append(("AC" if v.value else "WA", ""))
            continue
        failure = _judge_failure(v)
        if v.verdict in (Verdict.SE, Verdict.CE) or (v.error or "").startswith(_JUDGE_BROKEN):
            out.append(("SE", f"judging error: the judging function failed: {failure}"))
        else:
            out.append(("", failure))
            suspects.append(index)
    if fail_fast and suspects:
        # a test after the first failure is never read: its second call (up to the judging
        # function's time limit each) would only delay the answer
        first = next(index for index, (verdict, _) in enumerate(out) if verdict != "AC")
        for index in suspects:
            if index > first:
                out[index] = ("SE", "judging error: not judged again (an earlier test failed first)")
        suspects = [index for index in suspects if index <= first]
    if suspects:
        again = call_python(sb, judge_code, "output_judging_function",
                            [(calls[i][0], calls[i][2], calls[i][2]) for i in suspects], checker_limits())
        for index, v in zip(suspects, again, strict=True):
            failure = out[index][1]
            if v.ok and v.value is True:
                out[index] = ("WA", f"the judging function failed on this output ({failure}) and accepts the "
                                    "reference output: the output is not an answer it can read")
            else:
                out[index] = ("SE", f"judging error: the judging function failed ({failure}), and on the reference "
                                    f"output too ({_judge_failure(v) if not v.ok or not isinstance(v.value, bool) else 'rejected it'})")
    return out


def _judge_failure(call: CallResult) -> str:
    if call.ok:
        return f"returned {call.value!r:.80} instead of a bool"
    return (call.error or str(call.verdict))[:500]


def judge_code(
    *,
    problem: Problem,
    suite: TestSuite,
    language: str,
    code: str,
    mode: Mode = Mode.FAIL_FAST,
    sandbox: Sandbox | None = None,
    loaded: LoadedSuite | None = None,
    subset: str = "full",
    parallel: int | None = None,
    kill_order: bool | None = None,
) -> JudgeResult:
    """Compile and run a program against a suite, or its fast subset (its cached bodies when
    `loaded` is not given); nothing is saved. `parallel`: the most lanes (sandbox batches at once)
    this call may use; None is HARDTESTS_JUDGE_PARALLEL. `kill_order`: the suite's tests in its
    kill order, else in kind order (None: HARDTESTS_KILL_ORDER); not read when `loaded` is given."""
    started = time.perf_counter()
    # Mode(): a string that is no mode (an unconverted caller) is an error, never fail-fast
    fail_fast = Mode(mode) is Mode.FAIL_FAST
    subset = subset if subset in SUBSETS else "full"
    loaded = loaded or suite_cache.get(suite, subset, kill_order=kill_order)
    tests = loaded.tests
    mark = time.perf_counter()
    phases = {"load": (mark - started) * 1000}
    result = JudgeResult(
        verdict="AC", passed=0, total=len(tests), complete=False,
        suite_id=suite.pk, suite_version=suite.version, suite_origin=suite.origin, subset=subset, phases=phases,
    )
    if language not in SUPPORTED_LANGUAGES:
        result.verdict, result.message = "CE", f"unsupported language {language!r}"
        return _finish(result, started)
    if loaded.checker is not None and loaded.checker.refused:
        # a package checker that cannot judge (no testlib.h, an interactive problem): refused
        # before the program runs, a judging error whatever the program would do
        result.verdict, result.message = "SE", refusal_message(loaded.checker)
        return _finish(result, started)
    sb = sandbox or get_sandbox()
    limits = limits_for(problem)
    if loaded.checker is not None and loaded.checker.interactor is not None:
        return _judge_interactive(sb, loaded.checker.interactor, result, loaded, language, code, limits, fail_fast,
                                  started)
    # one budget of near-limit re-runs for the whole verification, whatever its lanes and chunks
    reruns = RerunBudget()
    if language == "python3":
        # the syntax check runs beside the tests: no compile phase of its own
        program, outcomes = _check_while_running(sb, code, loaded, limits, fail_fast, reruns, parallel)
    else:
        program = sb.compile(language, code)
        phases["compile"] = (time.perf_counter() - mark) * 1000
        mark = time.perf_counter()
        outcomes = _run_lanes(sb, program, loaded, limits, fail_fast, reruns, parallel=parallel) if program.ok else []
    phases["tests"] = (time.perf_counter() - mark) * 1000
    if not program.ok:
        result.verdict, result.message = str(program.verdict), program.message[-4000:]
        return _finish(result, started)
    outcomes.sort(key=lambda item: item[0])
    for _position, test, verdict, run, reason in outcomes:
        if reason and not result.message:
            result.message = reason
        result.tests.append(
            TestOutcome(len(result.tests), test.ordinal, test.kind, verdict, run.time_ms, run.wall_ms, run.memory_kb,
                        reason[-TEST_MESSAGE_KEPT:] if verdict != "AC" else "")
        )
        if verdict == "AC":
            result.passed += 1
        else:
            note = reason if run.verdict == Verdict.OK else (run.stderr or "")[-2000:]
            result.failures[test.ordinal] = (run.stdout or b"", note)
            if result.verdict == "AC":
                result.verdict = verdict
                if not result.message and run.stderr:
                    result.message = run.stderr[-2000:]
        if fail_fast and verdict != "AC":
            # Lanes may have run tests past the first failure before they heard of it; the
            # answer is the same as judging one test after another would give.
            return _finish(result, started)
    result.complete = len(result.tests) == len(tests)
    return _finish(result, started)


def _check_while_running(
    sb: Sandbox, code: str, loaded: LoadedSuite, limits: Limits, fail_fast: bool, reruns: RerunBudget,
    parallel: int | None = None,
) -> tuple[CompiledProgram, list[Outcome]]:
    """Python's "compile" is a syntax check: the compile `python3 -I main.py` does before it runs
    anything. The tests run from the source at once. Where the first batch's started
    interpreter (the zygote) says it compiled the program, that is the check's answer (the same
    compile, at the same depth): a new program's first test then costs no sandbox and no
    interpreter start of the check's own (~80 ms of CPU, the most of a 1-test call). Otherwise
    (no zygote, compiling raised, a batch that could not say) the check runs in a sandbox of its
    own, beside the tests. A program the check refuses is CE whatever its runs gave, exactly as
    if it had never run."""
    # on the memory filesystem, beside the batches' own program directories: they link it
    # (cache.link_program), where a source on disk was copied for each new program
    source_dir = cache.make_private_dir(cache.memory_root())
    pool = _threads()
    checked: list[Future[CompiledProgram]] = []
    asked = threading.Lock()  # the first batch opened answers; later ones are not asked

    def start_check() -> None:
        checked.append(pool.submit(sb.compile, "python3", code))

    def heard(batch: Batch) -> None:
        if not asked.acquire(blocking=False):
            return
        if batch.program_compiled() is not True:
            start_check()

    try:
        (source_dir / "main.py").write_text(code, encoding="utf-8")  # as the check and the compile cache write it
        as_is = CompiledProgram("python3", Verdict.OK, path=str(source_dir))
        if not sb.batches_compile_python():
            asked.acquire()
            start_check()
        outcomes = _run_lanes(sb, as_is, loaded, limits, fail_fast, reruns, heard=heard, parallel=parallel)
        if asked.acquire(blocking=False):
            start_check()  # no batch opened (a sandbox error): the check says what the program is
        return (checked[0].result() if checked else CompiledProgram("python3", Verdict.OK)), outcomes
    finally:
        shutil.rmtree(source_dir, ignore_errors=True)


class _Lane:
    """What a lane of shared claims has in flight: the positions it claimed, how many of them
    have answered, and its batch once open."""

    def __init__(self) -> None:
        self.claimed: list[int] = []
        self.done = 0
        self.batch: Batch | None = None

    def abandonable(self, position: int) -> bool:
        """Whether every test it has in flight comes after `position` (so none can fail first)."""
        pending = self.claimed[self.done:]
        return bool(pending) and min(pending) > position


class _FirstFailure:
    """The lowest test position known to fail, shared by the lanes of one verification.

    A lane stops before a test past it, but still runs the tests before it: judging one
    test after another would have run them, and one of them may fail first. A lane whose
    tests in flight all come after it is aborted at once (its runner killed): the answer no
    longer depends on them, and waiting for them cost up to their time limit (a TLE beside a
    program's first wrong answer).
    """

    def __init__(self) -> None:
        self.position = 1 << 62
        self.lanes: list[_Lane] = []
        self._lock = threading.Lock()

    def record(self, position: int) -> None:
        with self._lock:
            self.position = min(self.position, position)
            # a lane's claims only grow, with positions past all it claimed before (and none
            # past the first failure is handed out), so a lane abandonable now stays so
            stale = [lane for lane in self.lanes if lane.batch is not None and lane.abandonable(self.position)]
        for lane in stale:
            assert lane.batch is not None
            lane.batch.abort()


class _Claims:
    """The tests of one verification, handed out in judging order to whichever lane asks next:
    a lane that gets ahead (its tests were shorter, or the machine gave it more CPU) takes the
    tests a slower one has not reached, where a fixed share per lane left one lane idle while
    the other still had a backlog (10-140 ms of a 40-test call's wall time under load). In
    fail-fast mode nothing past the first known failure is handed out."""

    def __init__(self, count: int, first: _FirstFailure | None) -> None:
        self.count, self.first = count, first
        self.next = 0
        self._lock = threading.Lock()

    def take(self) -> int | None:
        with self._lock:
            if self.next >= self.count or (self.first is not None and self.next > self.first.position):
                return None
            self.next += 1
            return self.next - 1


def _run_lanes(sb: Sandbox, program: CompiledProgram, loaded: LoadedSuite, limits: Limits,
               fail_fast: bool, reruns: RerunBudget,
               heard: Callable[[Batch], None] | None = None, parallel: int | None = None) -> list[Outcome]:
    tests = loaded.tests
    lanes = _lane_count(len(tests), parallel)
    first = _FirstFailure()
    if loaded.judge_code is None and loaded.checker is None:
        claims = _Claims(len(tests), first if fail_fast else None)
        if lanes == 1:
            return _run_shared_lane(sb, program, loaded, limits, fail_fast, first, claims, reruns, heard)
        pool = _threads()
        shared = [pool.submit(_run_shared_lane, sb, program, loaded, limits, fail_fast, first, claims, reruns, heard)
                  for _ in range(lanes)]
        return [item for future in shared for item in future.result()]
    if lanes == 1:
        return _run_lane(sb, program, loaded, list(enumerate(tests)), limits, fail_fast, first, reruns, heard)
    # Test i goes to lane i mod n, so the lanes start on the first tests of the order; each lane is
    # a batch of its own (a fresh sandbox), and the first failure stops the others.
    pool = _threads()
    futures = [
        pool.submit(_run_lane, sb, program, loaded, list(enumerate(tests))[k::lanes], limits, fail_fast, first,
                    reruns, heard)
        for k in range(lanes)
    ]
    return [item for future in futures for item in future.result()]


# Lanes and Python's syntax check run on threads kept for the process: starting two or three
# threads per verification cost 0.1-0.3 ms on a quiet machine and ~5 ms each under load (the
# starter waits until the new thread runs). No task on it waits for another task on it, so a
# busy pool delays work but never deadlocks.
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
POOL_THREADS = 64


def _threads() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="judge")
    return _pool


def _forget_pool_in_child() -> None:
    # a forked child has none of the parent's threads: a pool inherited from it would never run a task
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool_in_child)


def _lane_count(tests: int, parallel: int | None = None) -> int:
    wanted = (parallel if parallel is not None else settings.HARDTESTS_JUDGE_PARALLEL) or 1
    # Each lane costs one sandbox start-up: not worth it for a handful of tests.
    return max(1, min(wanted, tests // MIN_TESTS_PER_LANE))


Outcome = tuple[int, LoadedTest, str, RunResult, str]


def _run_shared_lane(sb: Sandbox, program: CompiledProgram, loaded: LoadedSuite, limits: Limits, fail_fast: bool,
                     first: _FirstFailure, claims: _Claims, reruns: RerunBudget,
                     heard: Callable[[Batch], None] | None = None) -> list[Outcome]:
    """One lane (a sandbox batch of its own) running the tests it claims, in judging order, until
    none is left; in fail-fast mode it stops at a failure, here or at an earlier position in
    another lane. The problem's comparison runs as each output is read, so a wrong answer
    stops the lanes at once."""
    tests = loaded.tests
    lane = _Lane()
    claimed = lane.claimed
    if fail_fast:
        with first._lock:
            first.lanes.append(lane)

    def claim() -> int | None:
        position = claims.take()
        if position is not None:
            claimed.append(position)
        return position

    def failed(run: RunResult) -> bool:
        position = claimed[lane.done]
        lane.done += 1
        if fail_fast and (not run.ok or run.matched is False):
            first.record(position)
            return True
        return False

    def opened(batch: Batch) -> None:
        if heard is not None:
            heard(batch)
        lane.batch = batch
        if fail_fast and lane.abandonable(first.position):
            batch.abort()  # another lane failed while this one started

    runs = sb.run(
        program, [t.input for t in tests], limits, inputs_key=loaded.inputs_key,
        expected=[None if t.kind == TIME_ONLY else t.output for t in tests],  # type: ignore[misc]
        checker=lambda expected, out: compare_outputs(expected, out, loaded.comparison),
        keep_stdout_kb=FAILURE_OUTPUT_KEPT // 1024, stop_when=failed,
        stop_before=(lambda index: index > first.position) if fail_fast else None, claim=claim,
        on_batch=opened, reruns=reruns,
    )
    out: list[Outcome] = []
    for position, run in zip(claimed, runs, strict=False):
        test = tests[position]
        verdict = ("AC" if run.matched or test.kind == TIME_ONLY else "WA") if run.ok else str(run.verdict)
        out.append((position, test, verdict, run, ""))
    return out


def _run_lane(
    sb: Sandbox,
    program: CompiledProgram,
    loaded: LoadedSuite,
    items: list[tuple[int, LoadedTest]],
    limits: Limits,
    fail_fast: bool,
    first: _FirstFailure,
    reruns: RerunBudget,
    heard: Callable[[Batch], None] | None = None,
) -> list[Outcome]:
    """Run one lane's tests (position, test) in order, a suite with a judging function (whose calls
    go in chunks); in fail-fast mode stop at a failure, here or at an earlier position in
    another lane."""
    out: list[Outcome] = []
    # A judging function runs in a sandbox of its own per chunk; chunks grow so that a wrong
    # program stops early and a right one pays for few judging batches.
    chunk = FAIL_FAST_FIRST_CHUNK if fail_fast else max(1, len(items))
    index = 0
    while index < len(items) and not (fail_fast and items[index][0] > first.position):
        part = items[index : index + chunk]

        def later(i: int, part: list[tuple[int, LoadedTest]] = part) -> bool:
            return part[i][0] > first.position

        runs = sb.run(program, [t.input for _, t in part], limits, stop_on_failure=fail_fast,
                      stop_before=later if fail_fast else None, reruns=reruns, on_batch=heard)
        ok_pairs = [(t, r) for (_, t), r in zip(part, runs, strict=False)
                    if r.verdict == Verdict.OK and t.kind != TIME_ONLY]
        accepted = iter(_accepts(sb, loaded.judge_code, [t for t, _ in ok_pairs], [r for _, r in ok_pairs],
                                 loaded.comparison, fail_fast) if loaded.checker is None else
                        checker_accepts(sb, loaded.checker, [t.input for t, _ in ok_pairs],
                                        [t.output for t, _ in ok_pairs], [r for _, r in ok_pairs]))
        for (position, test), run in zip(part, runs, strict=False):
            verdict, reason = str(run.verdict), ""
            if run.verdict == Verdict.OK and test.kind == TIME_ONLY:
                verdict = "AC"
            elif run.verdict == Verdict.OK:
                verdict, reason = next(accepted)
            out.append((position, test, verdict, run, reason))
            if fail_fast and verdict != "AC":
                first.record(position)
                return out
        index += len(part)
        chunk = min(chunk * 2, FAIL_FAST_MAX_CHUNK)
    return out


def _judge_interactive(sb: Sandbox, interactor: Interactor, result: JudgeResult, loaded: LoadedSuite, language: str,
                       code: str, limits: Limits, fail_fast: bool, started: float) -> JudgeResult:
    """An interactive suite: the program against the package's interactor on each test, in
    judging order (problems/packages/interactive.py: two sandboxes joined by pipes, each with
    its own limits; the format's rules decide, and an interactor's failure is SE)."""
    mark = time.perf_counter()
    program = sb.compile(language, code)
    result.phases["compile"] = (time.perf_counter() - mark) * 1000
    if not program.ok:
        result.verdict, result.message = str(program.verdict), program.message[-4000:]
        return _finish(result, started)
    mark = time.perf_counter()
    runs = judge_runs(sb, interactor, program, [(t.input, t.output) for t in loaded.tests], limits,
                      fail_fast=fail_fast)
    result.phases["tests"] = (time.perf_counter() - mark) * 1000
    for test, judged in zip(loaded.tests, runs, strict=False):
        run = judged.program
        result.tests.append(TestOutcome(len(result.tests), test.ordinal, test.kind, judged.verdict, run.time_ms,
                                        run.wall_ms, run.memory_kb,
                                        judged.message[-TEST_MESSAGE_KEPT:] if judged.verdict != "AC" else "",
                                        judged.log.text(limit=INTERACTION_KEPT)))
        result.interactions[test.ordinal] = (judged.log.text(), judged.message)
        if judged.verdict == "AC":
            result.passed += 1
            continue
        result.failures[test.ordinal] = (judged.output, judged.message)
        if result.verdict == "AC":
            result.verdict, result.message = judged.verdict, judged.message
        if fail_fast:
            return _finish(result, started)
    result.complete = len(result.tests) == len(loaded.tests)
    return _finish(result, started)


def _finish(result: JudgeResult, started: float) -> JudgeResult:
    result.elapsed_ms = int((time.perf_counter() - started) * 1000)
    return result


def _failure_fields(result: JudgeResult, outputs: dict[int, tuple[str, int]], ordinal: int) -> dict[str, Any]:
    """What the verdict matrix shows for a failing test: where the program's output is stored and
    what the judge said. Passing tests store nothing (their output matched the expected one)."""
    if ordinal not in result.failures:
        return {}
    sha, size = outputs[ordinal]
    return {"output_sha256": sha, "output_size": size, "note": result.failures[ordinal][1][-2000:]}


def _interaction_fields(result: JudgeResult, logs: dict[int, tuple[str, int]], ordinal: int) -> dict[str, Any]:
    """What the verdict drill-down shows of an interactive test, whatever its verdict: where its
    interaction log is stored, and the interactor's message."""
    if ordinal not in result.interactions:
        return {}
    sha, size = logs[ordinal]
    fields_ = {"interaction_sha256": sha, "interaction_size": size}
    message = result.interactions[ordinal][1]
    if message:
        fields_["note"] = message[-2000:]
    return fields_


def solution_judge(
    *, solution: Solution, suite: TestSuite, mode: Mode = Mode.ALL, sandbox: Sandbox | None = None
) -> VerdictRecord:
    """Judge a stored solution and record its Verdict (one per solution and suite)."""
    result = judge_code(
        problem=solution.problem, suite=suite, language=solution.language, code=solution.code, mode=mode, sandbox=sandbox
    )
    outputs = dict(zip(result.failures, blobs_put(out[:FAILURE_OUTPUT_KEPT] for out, _ in result.failures.values()),
                       strict=True))
    logs = dict(zip(result.interactions, blobs_put(log.encode() for log, _ in result.interactions.values()),
                    strict=True))
    verdict = verdict_record(
        solution=solution,
        suite=suite,
        verdict=result.verdict,
        passed=result.passed,
        total=result.total,
        complete=result.complete,
        results=[
            {"ordinal": t.ordinal, "verdict": t.verdict, "time_ms": t.time_ms, "wall_ms": t.wall_ms,
             "memory_kb": t.memory_kb, **_interaction_fields(result, logs, t.ordinal),
             **_failure_fields(result, outputs, t.ordinal)}
            for t in result.tests
        ],
        message=result.message,
    )
    if known_wrong_ids([solution]):
        # a known-wrong program's failures teach the suite's kill order
        suite_kill_order_refresh(suite=suite)
    return verdict
