"""Agreement statistics against values worked out by hand for small tables."""

from __future__ import annotations

import pytest

from review.studies.agreement import agreement, alpha, cohen, fleiss, majority, observed_agreement, wilson

YN = ("yes", "no")


def _pairs(table: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    return [pair for pair, count in table.items() for _ in range(count)]


def test_cohen_kappa_of_a_two_by_two_table():
    # 10 items: yes/yes 4, yes/no 1, no/yes 2, no/no 3. p_o = 0.7.
    # A says yes 5/10, B says yes 6/10: p_e = .5*.6 + .5*.4 = 0.5. kappa = (.7-.5)/(1-.5) = 0.4.
    pairs = _pairs({("yes", "yes"): 4, ("yes", "no"): 1, ("no", "yes"): 2, ("no", "no"): 3})
    assert cohen(pairs, YN) == pytest.approx(0.4)


def test_cohen_kappa_of_complete_disagreement_is_minus_one():
    # p_o = 0, p_e = .5*.5 + .5*.5 = .5 -> (0 - .5) / .5 = -1.
    assert cohen(_pairs({("yes", "no"): 2, ("no", "yes"): 2}), YN) == pytest.approx(-1.0)


def test_cohen_kappa_when_all_agree_over_two_categories_is_one():
    assert cohen(_pairs({("yes", "yes"): 3, ("no", "no"): 2}), YN) == pytest.approx(1.0)


def test_cohen_kappa_with_one_category_only_is_undefined():
    # Both raters said "yes" every time: p_e = 1 and kappa is 0/0.
    assert cohen(_pairs({("yes", "yes"): 5}), YN) is None
    assert cohen([], YN) is None


FOUR_ITEMS = {
    # three raters, two categories; counts per item (c, i): (3,0), (0,3), (2,1), (1,2)
    1: {"a": "c", "b": "c", "c": "c"},
    2: {"a": "i", "b": "i", "c": "i"},
    3: {"a": "c", "b": "c", "c": "i"},
    4: {"a": "c", "b": "i", "c": "i"},
}


def test_fleiss_kappa_by_hand():
    # P_i = (sum n_ij^2 - n) / (n(n-1)): 1, 1, 1/3, 1/3 -> P_bar = 2/3.
    # p_c = p_i = 6/12 -> P_e = 1/2. kappa = (2/3 - 1/2) / (1/2) = 1/3.
    value, items = fleiss(FOUR_ITEMS, ("c", "i"))
    assert items == 4
    assert value == pytest.approx(1 / 3)


def test_krippendorff_alpha_nominal_by_hand():
    # Coincidences (each pair weighted 1/(m_u - 1) = 1/2): o_cc = 3 + 1 = 4, o_ii = 3 + 1 = 4,
    # o_ci = o_ic = 1 + 1 = 2; n_c = n_i = 6, n = 12.
    # alpha = 1 - (n - 1) * (o_ci + o_ic) / (n_c n_i + n_i n_c) = 1 - 11 * 4 / 72 = 7/18.
    value, items = alpha(FOUR_ITEMS, ("c", "i"))
    assert items == 4
    assert value == pytest.approx(7 / 18)


def test_krippendorff_alpha_skips_unpairable_items_and_allows_missing_ratings():
    # Item 3 has one rating and cannot be paired. Items 1, 2 (2 raters) and 4 (3 raters):
    # item 1 (c,i): o_ci = o_ic = 1; item 2 (i,i): o_ii = 2; item 4 (c,c,c): o_cc = 3.
    # n_c = o_cc + o_ci = 4, n_i = o_ii + o_ic = 3, n = 7: alpha = 1 - 6 * 2 / (4*3 + 3*4) = 1/2.
    ratings = {
        1: {"a": "c", "b": "i"},
        2: {"a": "i", "b": "i"},
        3: {"a": "c"},
        4: {"a": "c", "b": "c", "c": "c"},
    }
    value, items = alpha(ratings, ("c", "i"))
    assert items == 3
    assert value == pytest.approx(1 / 2)


def test_fleiss_uses_items_with_the_full_number_of_ratings():
    ratings = {**FOUR_ITEMS, 5: {"a": "c"}, 6: {"a": "i", "b": "c"}}
    value, items = fleiss(ratings, ("c", "i"))
    assert items == 4 and value == pytest.approx(1 / 3)


def test_all_agree_over_two_categories_is_perfect_agreement():
    ratings = {1: {"a": "c", "b": "c"}, 2: {"a": "i", "b": "i"}, 3: {"a": "c", "b": "c"}}
    result = agreement(ratings, ("c", "i", "u"))
    assert result.pairs[0].kappa == pytest.approx(1.0)
    assert result.fleiss == pytest.approx(1.0)
    assert result.alpha == pytest.approx(1.0)
    assert result.observed == 1.0


def test_one_category_only_reports_undefined_and_does_not_crash():
    ratings = {1: {"a": "c", "b": "c", "x": "c"}, 2: {"a": "c", "b": "c", "x": "c"}}
    result = agreement(ratings, ("c", "i", "u"))
    assert [p.kappa for p in result.pairs] == [None, None, None]
    assert result.fleiss is None and result.fleiss_items == 2
    assert result.alpha is None
    assert result.observed == 1.0
    assert not result.any_defined


def test_no_ratings_or_single_annotator_is_undefined():
    assert agreement({}, ("c", "i")).fleiss is None
    single = agreement({1: {"a": "c"}, 2: {"a": "i"}}, ("c", "i"))
    assert single.pairs == [] and single.fleiss is None and single.alpha is None and single.observed is None


def test_pairwise_kappa_for_every_pair_on_shared_items():
    result = agreement(FOUR_ITEMS, ("c", "i"))
    by_pair = {(p.first, p.second): p for p in result.pairs}
    # a vs b: (c,c) (i,i) (c,c) (c,i): p_o = 3/4; a: c 3/4, b: c 2/4 -> p_e = 3/8 + 1/8 = 1/2; kappa = 1/2.
    assert by_pair[("a", "b")].items == 4
    assert by_pair[("a", "b")].kappa == pytest.approx(0.5)
    # observed pairwise agreement: items 1, 2 agree on 3/3 pairs, items 3, 4 on 1/3 -> 8/12.
    assert observed_agreement(FOUR_ITEMS) == pytest.approx(8 / 12)


def test_wilson_interval_by_hand():
    # 8/10, z = 1.959964: centre (0.8 + z^2/20) / (1 + z^2/10) = 0.716737,
    # half-width z * sqrt(0.016 + z^2/400) / (1 + z^2/10) = 0.226576.
    rate = wilson(8, 10)
    assert rate.value == 0.8
    assert rate.low == pytest.approx(0.490160, abs=1e-5)
    assert rate.high == pytest.approx(0.943313, abs=1e-5)
    zero = wilson(0, 5)
    # upper bound z^2/n / (1 + z^2/n) = 0.768292 / 1.768292
    assert zero.low == pytest.approx(0.0, abs=1e-12) and zero.high == pytest.approx(0.434482, abs=1e-5)
    empty = wilson(0, 0)
    assert empty.value is None and empty.low is None


def test_majority_leaves_ties_undecided():
    assert majority(["c", "c", "i"]) == "c"
    assert majority(["c", "i"]) is None
    assert majority([]) is None
