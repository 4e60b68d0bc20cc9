"""A suite's kill matrix, the judging order it gives, and its fast subset.

Most programs an RL policy writes early in training are wrong, and fail-fast judging stops at
the first failing test, so which test runs first decides what a wrong program costs. Every
program with a known wrong verdict (gold WA/TLE/..., judged by an evaluation, a refinement
round, the demo, the matrix page: every judging that records a Verdict) tells which tests
fail it; the kill matrix gathers that per test, and:

- the kill order runs first the test that fails most of the known-wrong programs still
  alive, then the next one on the survivors (greedy), then the rest by kind (hacking first)
  and cheapest (smallest bodies) first. A test moves ahead of kind order only on the evidence
  of at least HARDTESTS_KILL_ORDER_MIN_KILLS programs (default 2): what fails one program
  alone is that program's quirk, and a new wrong program rarely shares it. On the demo's
  problems (2-3 known-wrong programs each), each wrong program held out in turn met its first
  failure after 4.07 tests on average with every kill counted, 2.30 with two required and 2.13
  in kind order; on the programs the order learnt from, 1.20, 1.53 and 2.13
  (bench/kill_order.py --dump, then these functions). An order never changes a reward: a
  program is AC only when it passes every test, whatever their order;
- the fast subset, for training (the full suite stays the evaluation's), is the greedy set
  cover of the whole kill matrix (every known-wrong program the full suite fails, the fast
  one fails too), the largest tests (time and memory limits are mostly hit there), and the
  first FAST_MIN_SHARE of the judging order: on the demo's held-out programs the cover and
  largest tests alone (12% of the tests) kept a precision of 0.571, with the first 20% of the
  order (27% in all) 1.000, where random subsets of 20% and 40% kept 0.782 and 0.955.

Beside those verdicts, programs that are no candidate teach it too (`KillEvidence`, one row
a program and test it failed): a curation job's completions (HARDTESTS_KILL_ORDER_FROM_CURATION)
and, opted in, the verifications sent to the API (HARDTESTS_KILL_ORDER_FROM_API). A fail-fast
verification tells its first failing test only: a program that passed the earlier tests and
failed a later one is what moves that test ahead; one failing the first test confirms it.

Pure functions here take plain values; suite_kill_order_refresh reads the verdicts and the
evidence and stores the order on the suite (a new revision, which names a new cache entry for
judging); kill_evidence_add records evidence and refreshes at most every
HARDTESTS_KILL_ORDER_REFRESH_S a suite.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Hashable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError
from django.db.models import F
from redis.exceptions import RedisError

from core.queues import redis_connection
from problems.models import KillEvidence, Solution, TestSuite, Verdict
from problems.services import code_sha256

log = logging.getLogger(__name__)

# A kill matrix: ordinal -> the programs the test fails (a candidate's id, or a program's digest).
Kills = Mapping[int, AbstractSet[Hashable]]

# Run order of test kinds when nothing else decides: hacking first.
KIND_ORDER = {"hacking": 0, "time_only": 0, "stratified": 1, "regular": 2, "direct": 3, "edge": 3, "imported": 4,
              "public": 5}
# A test with no expected output (oracle-free suites' maximum-size input): passed by a run that
# ends normally (exit 0) within the limits, whatever it prints; never compared, never judged.
TIME_ONLY = "time_only"
# A fast subset keeps the tests whose input is at least this share of the largest one, at most
# FAST_MAX_SIZE_TESTS of them: a slow program or a memory hog is caught there, and known-wrong
# programs rarely teach that (they are mostly WA).
FAST_MAX_SIZE_SHARE = 0.9
FAST_MAX_SIZE_TESTS = 2
FAST_MIN_SHARE = 0.2
# Verdicts of a test that say nothing about the program (the sandbox failed): never a kill.
NOT_A_KILL = {"AC", "SE", ""}


@dataclass(frozen=True)
class TestFacts:
    ordinal: int
    kind: str
    size: int  # input + expected output bytes: what a run reads and compares


def kind_key(test: TestFacts) -> tuple[int, int, int]:
    return (KIND_ORDER.get(test.kind, 9), test.size, test.ordinal)


def kind_order(tests: Iterable[TestFacts]) -> list[int]:
    """Ordinals in kind order (hacking first), then cheapest, then by ordinal."""
    return [t.ordinal for t in sorted(tests, key=lambda t: (KIND_ORDER.get(t.kind, 9), t.ordinal))]


def kill_order(tests: Sequence[TestFacts], kills: Kills, min_kills: int = 1) -> list[int]:
    """Ordinals in the order that fails known-wrong programs soonest (see the module's docstring);
    only tests failing at least `min_kills` programs move ahead of kind order."""
    kills = {o: set(k) for o, k in kills.items() if len(k) >= min_kills}
    alive: set[Hashable] = set().union(*kills.values()) if kills else set()
    left = {t.ordinal: t for t in tests}
    total = {t.ordinal: len(kills.get(t.ordinal, ())) for t in tests}
    order: list[int] = []
    while alive and left:
        best = min(left.values(), key=lambda t: (-len(kills.get(t.ordinal, set()) & alive), -total[t.ordinal],
                                                   *kind_key(t)))
        gained = kills.get(best.ordinal, set()) & alive
        if not gained:
            break
        order.append(best.ordinal)
        alive -= gained
        del left[best.ordinal]
    order.extend(t.ordinal for t in sorted(left.values(), key=kind_key))
    return order


def fast_subset(tests: Sequence[TestFacts], kills: Kills, order: Sequence[int]) -> list[int]:
    """The greedy set cover of the kill matrix plus the largest tests, in judging order; empty
    when nothing is known (no known-wrong program fails any test), meaning "the full suite"."""
    alive: set[Hashable] = set().union(*kills.values()) if kills else set()
    if not alive:
        return []
    cover: set[int] = set()
    for ordinal in kill_order(tests, kills):  # its greedy prefix (every kill counted) is the set cover
        gained = kills.get(ordinal, set()) & alive
        if gained:
            cover.add(ordinal)
            alive -= gained
        if not alive:
            break
    largest = max(t.size for t in tests)
    big = sorted((t for t in tests if t.size >= FAST_MAX_SIZE_SHARE * largest), key=lambda t: (-t.size, t.ordinal))
    cover.update(t.ordinal for t in big[:FAST_MAX_SIZE_TESTS])
    # the order's own head: what an unseen wrong program most likely fails
    cover.update(order[: math.ceil(FAST_MIN_SHARE * len(order))])
    return [o for o in order if o in cover]


def first_failure(order: Sequence[int], failing: set[int] | frozenset[int]) -> int | None:
    """How many tests a program failing `failing` runs in `order` until its first failure
    (that one included); None when it fails none of them."""
    for position, ordinal in enumerate(order, start=1):
        if ordinal in failing:
            return position
    return None


def random_drop(ordinals: Sequence[int], keep: float, rng: random.Random) -> set[int]:
    """A random subset of `keep` share of the tests (at least one): the HardTests rebuttal's
    redundancy experiment, the baseline a fast subset is compared with."""
    count = max(1, round(len(ordinals) * keep))
    return set(rng.sample(list(ordinals), min(count, len(ordinals))))


# -- from the database ------------------------------------------------------------


def known_wrong_ids(solutions: Iterable[Solution]) -> set[int]:
    """Programs known to be wrong: candidates with a gold verdict other than AC (oracles and gold
    AC are known right; no gold verdict says nothing)."""
    return {s.pk for s in solutions if s.role == Solution.Role.CANDIDATE and s.gold_verdict
            and s.gold_verdict not in (Solution.GoldVerdict.AC, Solution.GoldVerdict.UNKNOWN)}


def failing_tests(results: Iterable[object]) -> set[int]:
    """Ordinals a stored verdict's per-test results say the program failed (SE is no failure)."""
    return {int(r["ordinal"]) for r in results
            if isinstance(r, dict) and "ordinal" in r and str(r.get("verdict", "")) not in NOT_A_KILL}


def suite_test_facts(suite: TestSuite) -> list[TestFacts]:
    return [TestFacts(o, k, i + out) for o, k, i, out in
            suite.tests.values_list("ordinal", "kind", "input_size", "output_size")]


def suite_kill_matrix(suite: TestSuite, *, exclude: Iterable[int] = (),
                      evidence: bool = True) -> dict[int, set[Hashable]]:
    """ordinal -> the known-wrong candidates (ids, but `exclude`) whose stored verdict on this
    suite fails it, and (`evidence`) the other programs (digests) recorded failing it."""
    wrong = known_wrong_ids(suite.problem.solutions.only("id", "role", "gold_verdict")) - set(exclude)
    kills: dict[int, set[Hashable]] = {}
    for solution_id, results in Verdict.objects.filter(suite=suite, solution_id__in=wrong).values_list(
            "solution_id", "results"):
        for ordinal in failing_tests(results or []):
            kills.setdefault(ordinal, set()).add(solution_id)
    if evidence:
        for program, ordinal in KillEvidence.objects.filter(suite=suite).values_list("program", "ordinal"):
            kills.setdefault(ordinal, set()).add(program)
    return kills


def program_digest(language: str, code: str) -> str:
    return code_sha256(f"{language}\0{code}")


REFRESH_KEY = "hardtests:kill-order-refresh:{suite_id}"


def kill_evidence_add(*, suite_id: int, language: str, code: str, failing: Iterable[int], source: str,
                      refresh: bool = True) -> bool:
    """Record that a program (no candidate) failed these tests of a suite; with `refresh`,
    recompute the suite's order when its last computation from evidence is
    HARDTESTS_KILL_ORDER_REFRESH_S old (one process does it: a Redis key set if absent; a caller
    that records many, as a curation chunk does, refreshes once at its end instead). True when
    the order was computed again."""
    ordinals = sorted(set(failing))
    if not ordinals:
        return False
    program = program_digest(language, code)
    try:
        KillEvidence.objects.bulk_create([KillEvidence(suite_id=suite_id, program=program, ordinal=o, source=source)
                                          for o in ordinals], ignore_conflicts=True)
    except DatabaseError:
        # Best effort: the order is an optimisation, and the verdict this came from stands.
        log.warning("kill evidence of suite #%s not recorded", suite_id, exc_info=True)
        return False
    if not refresh:
        return False
    period = int(settings.HARDTESTS_KILL_ORDER_REFRESH_S)
    try:
        if period > 0 and not redis_connection().set(REFRESH_KEY.format(suite_id=suite_id), 1, nx=True, ex=period):
            return False
    except RedisError:
        return False  # recorded: the next refresh reads it
    try:
        suite = TestSuite.objects.select_related("problem").filter(pk=suite_id).first()
        return suite is not None and suite_kill_order_refresh(suite=suite)
    except DatabaseError:
        log.warning("kill order of suite #%s not computed again", suite_id, exc_info=True)
        return False


@dataclass(frozen=True)
class SuiteOrder:
    order: list[int]
    fast: list[int]
    kill_counts: dict[str, int]  # JSON keys: ordinal as text
    known_wrong: int  # known-wrong programs the suite fails


def suite_order_compute(suite: TestSuite, *, exclude: Iterable[int] = ()) -> SuiteOrder:
    tests = suite_test_facts(suite)
    kills = suite_kill_matrix(suite, exclude=exclude)
    # nothing known: no stored order, judging keeps kind order
    order = kill_order(tests, kills, settings.HARDTESTS_KILL_ORDER_MIN_KILLS) if kills else []
    return SuiteOrder(order=order, fast=fast_subset(tests, kills, order or kind_order(tests)),
                      kill_counts={str(o): len(v) for o, v in sorted(kills.items())},
                      known_wrong=len(set().union(*kills.values())) if kills else 0)


def suite_kill_order_refresh(*, suite: TestSuite) -> bool:
    """Recompute and store the suite's kill order, fast subset and kill counts from the stored
    verdicts; True when they changed (and the order's revision went up)."""
    if not settings.HARDTESTS_KILL_ORDER:
        return False
    computed = suite_order_compute(suite)
    current = TestSuite.objects.filter(pk=suite.pk).values_list("judge_order", "fast_ordinals", "kill_counts").first()
    if current is None or tuple(current) == (computed.order, computed.fast, computed.kill_counts):
        return False
    TestSuite.objects.filter(pk=suite.pk).update(
        judge_order=computed.order, fast_ordinals=computed.fast, kill_counts=computed.kill_counts,
        order_revision=F("order_revision") + 1,
    )
    return True
