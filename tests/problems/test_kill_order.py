"""The kill matrix, the kill order judging follows, and the fast subset (problems/kill_order.py)."""

from __future__ import annotations

import random

import pytest
from django.test import override_settings
from hypothesis import given, settings
from hypothesis import strategies as st

from problems import judging
from problems.judging import judge_code, solution_judge
from problems.kill_order import (
    TestFacts,
    fast_subset,
    first_failure,
    kill_order,
    kind_order,
    random_drop,
    suite_kill_order_refresh,
)
from problems.models import Solution, TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.factories import ProblemFactory, SolutionFactory

ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
# (kind, input): a + b; the late tests in kind order are the ones the wrong programs fail
TESTS = [("hacking", "100 200"), ("hacking", "300 400"), ("stratified", "1 1"), ("regular", "2 3"),
         ("regular", "9 9"), ("direct", "7 1"), ("direct", "4 4"), ("direct", "5 6")]
SEVEN = "a, b = map(int, input().split())\nprint(0 if a == 7 else a + b)\n"  # fails "7 1"
SEVEN_PLUS = "a, b = map(int, input().split())\nprint(a + b + (a == 7))\n"  # fails "7 1"
NINE = "a, b = map(int, input().split())\nprint(17 if a == 9 else a + b)\n"  # fails "9 9"
# unseen by the kill matrix, fails the same test as two known ones: "7 1", 6th in kind order
HELD_OUT = "a, b = map(int, input().split())\nprint(a - b if a == 7 else a + b)\n"


def _facts(n: int, kinds: list[str] | None = None) -> list[TestFacts]:
    kinds = kinds or ["direct"] * n
    return [TestFacts(i, kinds[i], 10) for i in range(n)]


def test_greedy_order_takes_most_kills_then_the_survivors_then_kind():
    tests = [TestFacts(0, "hacking", 10), TestFacts(1, "direct", 10), TestFacts(2, "regular", 10),
             TestFacts(3, "direct", 5), TestFacts(4, "stratified", 10)]
    kills = {1: {10, 11, 12}, 2: {10, 11}, 3: {13}, 4: {14}}
    # 1 kills three; 2 kills nobody still alive, 3 and 4 one each: 4 (stratified) before 3 (direct);
    # then by kind, then cheapest
    order = kill_order(tests, kills)
    assert order == [1, 4, 3, 0, 2]
    # the cover, the two largest (size 10: 0 and 1) and the order's first 20% (1 test)
    assert fast_subset(tests, kills, order) == [1, 4, 3, 0]
    # two programs' evidence wanted: 1 and 2 move ahead, the rest keep kind order, cheapest first
    assert kill_order(tests, kills, min_kills=2) == [1, 0, 4, 2, 3]


def test_without_kills_the_fast_subset_is_empty_meaning_the_full_suite():
    tests = _facts(4)
    assert fast_subset(tests, {}, kind_order(tests)) == []


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 30), st.integers(1, 12), st.randoms(use_true_random=False))
def test_kill_order_never_changes_a_reward_and_the_fast_subset_fails_every_known_wrong_program(tests_n, programs, rng):
    kinds = [rng.choice(["hacking", "regular", "direct", "stratified"]) for _ in range(tests_n)]
    tests = [TestFacts(i, kinds[i], rng.randint(1, 100)) for i in range(tests_n)]
    failing = {p: {t for t in range(tests_n) if rng.random() < 0.15} for p in range(programs)}
    kills: dict[int, set[int]] = {}
    for program, fails in failing.items():
        for t in fails:
            kills.setdefault(t, set()).add(program)
    order = kill_order(tests, kills)
    assert sorted(order) == list(range(tests_n))
    fast = fast_subset(tests, kills, order)
    for fails in failing.values():
        by_kill, by_kind = first_failure(order, fails), first_failure(kind_order(tests), fails)
        assert (by_kill is None) == (by_kind is None)  # the same reward whatever the order
        if fails:
            assert by_kill is not None and by_kill <= len({t for t in kills if kills[t]})
            assert first_failure(fast, fails) is not None
    assert len(random_drop(list(range(tests_n)), 0.4, random.Random(0))) == max(1, round(tests_n * 0.4))


def _ab_suite() -> TestSuite:
    problem = ProblemFactory(time_limit_ms=2000)
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED)
    suite_add_tests(suite=suite, tests=[NewTest(input=f"{i}\n", output=f"{sum(map(int, i.split()))}\n", kind=k)
                                        for k, i in TESTS])
    return suite_activate(suite=suite)


def _known(suite: TestSuite) -> None:
    """Judge a correct and three known-wrong candidates (mode all, as an evaluation does)."""
    for code, gold in ((ADD, "AC"), (SEVEN, "WA"), (SEVEN_PLUS, "WA"), (NINE, "WA")):
        solution = SolutionFactory(problem=suite.problem, role=Solution.Role.CANDIDATE, language="python3",
                                   code=code, gold_verdict=gold)
        solution_judge(solution=solution, suite=suite, mode="all")


def _fresh(suite: TestSuite) -> TestSuite:
    return TestSuite.objects.select_related("problem").get(pk=suite.pk)


@pytest.mark.django_db
def test_judging_learns_the_kill_order_and_a_wrong_program_fails_on_its_first_test():
    suite = _ab_suite()
    before = judge_code(problem=suite.problem, suite=suite, language="python3", code=HELD_OUT)
    assert (before.verdict, len(before.tests)) == ("WA", 6)  # kind order: "7 1" is the 6th test
    _known(suite)
    suite = _fresh(suite)
    ordinal = {i: o for o, (_, i) in enumerate(TESTS)}
    # "9 9" fails one known program only: not evidence enough to move ahead (HARDTESTS_KILL_ORDER_MIN_KILLS)
    assert suite.judge_order[:3] == [ordinal["7 1"], ordinal["100 200"], ordinal["300 400"]]
    assert suite.order_revision >= 1
    assert suite.kill_counts == {str(ordinal["7 1"]): 2, str(ordinal["9 9"]): 1}
    after = judge_code(problem=suite.problem, suite=suite, language="python3", code=HELD_OUT)
    assert (after.verdict, after.reward, len(after.tests)) == ("WA", 0, 1)
    assert after.tests[0].ordinal == ordinal["7 1"]
    nine = judge_code(problem=suite.problem, suite=suite, language="python3", code=NINE)
    assert (nine.verdict, len(nine.tests)) == ("WA", 6)  # kind order, cheapest first: "9 9" is 6th
    with override_settings(HARDTESTS_KILL_ORDER_MIN_KILLS=1):
        suite_kill_order_refresh(suite=suite)
        suite = _fresh(suite)
        assert suite.judge_order[:2] == [ordinal["7 1"], ordinal["9 9"]]
        nine = judge_code(problem=suite.problem, suite=suite, language="python3", code=NINE)
        assert (nine.verdict, len(nine.tests)) == ("WA", 2)
    good = judge_code(problem=suite.problem, suite=suite, language="python3", code=ADD)
    assert (good.verdict, good.passed, good.total, good.complete) == ("AC", 8, 8, True)
    assert [t.ordinal for t in good.tests] == suite.judge_order
    # switched off: kind order again, the same verdicts
    with override_settings(HARDTESTS_KILL_ORDER=False):
        off = judge_code(problem=suite.problem, suite=suite, language="python3", code=HELD_OUT)
        assert (off.verdict, len(off.tests)) == ("WA", 6)


@pytest.mark.django_db
def test_the_fast_subset_fails_every_known_wrong_program_and_passes_a_right_one():
    suite = _ab_suite()
    _known(suite)
    suite = _fresh(suite)
    ordinal = {i: o for o, (_, i) in enumerate(TESTS)}
    # the set cover ("7 1", "9 9") and the two largest tests (the hacking ones)
    assert sorted(suite.fast_ordinals) == sorted([ordinal["7 1"], ordinal["9 9"], ordinal["100 200"],
                                                   ordinal["300 400"]])
    for code in (SEVEN, SEVEN_PLUS, NINE, HELD_OUT):
        fast = judge_code(problem=suite.problem, suite=suite, language="python3", code=code, subset="fast", mode="all")
        full = judge_code(problem=suite.problem, suite=suite, language="python3", code=code, mode="all")
        assert (fast.reward, full.reward, fast.total, full.total, fast.subset) == (0, 0, 4, 8, "fast")
    good = judge_code(problem=suite.problem, suite=suite, language="python3", code=ADD, subset="fast")
    assert (good.verdict, good.passed, good.total) == ("AC", 4, 4)
    with override_settings(HARDTESTS_FAST_SUITES=False):
        off = judge_code(problem=suite.problem, suite=suite, language="python3", code=ADD, subset="fast")
        assert (off.verdict, off.total) == ("AC", 8)


@pytest.mark.django_db
def test_a_new_order_is_a_new_cache_entry_never_the_old_order():
    suite = _ab_suite()
    judging.suite_cache.clear()
    judge_code(problem=suite.problem, suite=suite, language="python3", code=ADD)  # cached in kind order
    _known(suite)
    after = judge_code(problem=suite.problem, suite=_fresh(suite), language="python3", code=HELD_OUT)
    assert len(after.tests) == 1


@pytest.mark.django_db
def test_the_suite_tab_shows_each_test_s_kill_count_and_place(client):
    from django.contrib.auth import get_user_model

    suite = _ab_suite()
    _known(suite)
    client.force_login(get_user_model().objects.create_user("viewer", password="x"))
    html = client.get(f"/problems/{suite.problem.pk}/suite/?suite={suite.pk}").content.decode()
    assert "judged in kill order" in html and "fast subset 4 of 8 tests" in html
    counts = [cell.split(">", 1)[1].split("<", 1)[0].strip() for cell in html.split('class="num kill-count"')[1:]]
    assert sorted(counts) == ["0"] * 6 + ["1", "2"]
