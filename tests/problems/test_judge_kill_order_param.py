"""judge_code(kill_order=...) chooses one call's test order without touching the setting
(bench/kill_order.py compares the two orders this way, side by side in one process)."""

from __future__ import annotations

import pytest

from problems.judging import judge_code
from tests.problems.test_kill_order import ADD, HELD_OUT, TESTS, _ab_suite, _fresh, _known

pytestmark = [pytest.mark.django_db, pytest.mark.slow]  # the sandbox


def test_kill_order_false_judges_in_kind_order_and_true_in_the_learned_order_whatever_the_setting(settings):
    suite = _ab_suite()
    _known(suite)
    suite = _fresh(suite)
    ordinal = {i: o for o, (_, i) in enumerate(TESTS)}
    assert suite.judge_order[0] == ordinal["7 1"]

    def judged(**kwargs):
        return judge_code(problem=suite.problem, suite=suite, language="python3", code=HELD_OUT, **kwargs)

    learned, kind = judged(), judged(kill_order=False)
    assert (learned.verdict, len(learned.tests)) == ("WA", 1)
    assert (kind.verdict, len(kind.tests)) == ("WA", 6)  # kind order: "7 1" is the 6th test
    assert kind.tests[-1].ordinal == ordinal["7 1"]
    assert (judged().verdict, len(judged().tests)) == ("WA", 1)  # the cached kind order did not leak
    fast_off = judge_code(problem=suite.problem, suite=suite, language="python3", code=ADD, subset="fast",
                          kill_order=False)
    assert (fast_off.verdict, fast_off.total) == ("AC", 8)  # no kill order, no fast subset
    settings.HARDTESTS_KILL_ORDER = False
    assert len(judged().tests) == 6
    assert len(judged(kill_order=True).tests) == 1
