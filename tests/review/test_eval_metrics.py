"""Every metric on crafted outcome sets, against values computed by hand in the comments."""

from __future__ import annotations

import pytest

from problems.judging import KIND_ORDER
from review.evaluation import metrics as m
from review.evaluation.metrics import Confusion, Outcome, TestRun

_ids = iter(range(1, 10**6))


def outcome(gold_ac: bool, passed: list[bool], *, kinds: list[str] | None = None, walls: list[int] | None = None,
            origin: str = "generated", suite_id: int = 1, problem_id: int = 1, difficulty: tuple[str, ...] = (),
            platform: str = "") -> Outcome:
    kinds = kinds or ["direct"] * len(passed)
    walls = walls or [0] * len(passed)
    return Outcome(solution_id=next(_ids), suite_id=suite_id, problem_id=problem_id, origin=origin, gold_ac=gold_ac,
                   tests=tuple(TestRun(i, k, p, w) for i, (k, p, w) in enumerate(zip(kinds, passed, walls, strict=True))),
                   difficulty=difficulty, platform=platform)


def counts(result: dict) -> tuple[int, int, int, int]:
    return result["tp"], result["fp"], result["tn"], result["fn"]


def test_confusion_and_every_ratio_by_hand():
    ok, bad = [True, True], [True, False]
    outcomes = (
        [outcome(True, ok) for _ in range(3)]        # TP = 3
        + [outcome(True, bad)]                       # FN = 1
        + [outcome(False, ok) for _ in range(2)]     # FP = 2
        + [outcome(False, bad) for _ in range(4)]    # TN = 4
    )
    r = m.by_origin(outcomes)["generated"]
    assert counts(r) == (3, 2, 4, 1)
    assert (r["n"], r["gold_positive"], r["gold_negative"], r["predicted_positive"]) == (10, 4, 6, 5)
    assert r["precision"] == pytest.approx(3 / 5)         # TP/(TP+FP)
    assert r["recall"] == r["tpr"] == pytest.approx(3 / 4)  # TP/(TP+FN)
    assert r["f1"] == pytest.approx(6 / 9)                # 2TP/(2TP+FP+FN) = 2*.6*.75/(.6+.75)
    assert r["tnr"] == pytest.approx(4 / 6)               # TN/(TN+FP)
    assert (r["suites"], r["problems"]) == (1, 1)


def test_no_predicted_positives_leaves_precision_undefined_not_zero():
    # Everything fails: TP=FP=0, FN=2, TN=3.
    r = m.classifier_metrics(Confusion(tp=0, fp=0, tn=3, fn=2))
    assert r["precision"] is None and r["f1"] is None
    assert r["recall"] == 0.0 and r["tnr"] == 1.0


def test_no_gold_positives_leaves_recall_and_tpr_undefined():
    r = m.by_origin([outcome(False, [True]), outcome(False, [False]), outcome(False, [False])])["generated"]
    assert counts(r) == (0, 1, 2, 0)
    assert r["recall"] is None and r["tpr"] is None and r["f1"] is None
    assert r["precision"] == 0.0  # 0 / (0 + 1): defined, and zero
    assert r["tnr"] == pytest.approx(2 / 3)


def test_no_gold_negatives_leaves_tnr_undefined():
    r = m.by_origin([outcome(True, [True]), outcome(True, [True]), outcome(True, [False])])["generated"]
    assert counts(r) == (2, 0, 0, 1)
    assert r["tnr"] is None
    assert r["precision"] == 1.0 and r["recall"] == pytest.approx(2 / 3)
    assert r["f1"] == pytest.approx(4 / 5)  # 2*2 / (2*2 + 0 + 1)


def test_empty_set_is_all_undefined_with_zero_counts():
    r = m.summarise([])
    assert counts(r) == (0, 0, 0, 0) and r["n"] == 0
    assert all(r[k] is None for k in ("precision", "recall", "f1", "tpr", "tnr"))


def test_f1_is_zero_when_precision_and_recall_are_both_zero():
    r = m.classifier_metrics(Confusion(tp=0, fp=1, tn=0, fn=1))
    assert (r["precision"], r["recall"], r["f1"]) == (0.0, 0.0, 0.0)


def test_confusion_add_matches_of():
    pairs = [(True, True), (True, False), (False, True), (False, False), (False, False)]
    c = Confusion()
    for gold, predicted in pairs:
        c = c.add(gold=gold, predicted=predicted)
    assert c == Confusion.of(pairs) == Confusion(tp=1, fp=1, tn=2, fn=1)


def test_origins_are_counted_separately():
    outcomes = [outcome(False, [True], origin="public", suite_id=2), outcome(False, [False], origin="generated")]
    r = m.by_origin(outcomes)
    assert counts(r["public"]) == (0, 1, 0, 0) and counts(r["generated"]) == (0, 0, 1, 0)


def test_by_difficulty_and_platform_groups_by_hand():
    easy = {"difficulty": ("cf:easy",), "platform": "codeforces", "problem_id": 1, "suite_id": 1}
    hard = {"difficulty": ("cf:hard", "luogu:5"), "platform": "atcoder", "problem_id": 2, "suite_id": 2}
    outcomes = [
        outcome(True, [True], **easy), outcome(False, [True], **easy),     # easy: TP 1, FP 1
        outcome(True, [False], **hard), outcome(False, [False], **hard),   # hard: FN 1, TN 1
        outcome(True, [True], problem_id=3, suite_id=3),                   # no label, no platform
    ]
    d = m.by_origin_and(outcomes, m.difficulty_keys)["generated"]
    assert list(d) == ["cf:easy", "cf:hard", "luogu:5", "unlabelled"]
    assert counts(d["cf:easy"]) == (1, 1, 0, 0) and d["cf:easy"]["precision"] == 0.5 and d["cf:easy"]["tnr"] == 0.0
    assert counts(d["cf:hard"]) == (0, 0, 1, 1) and d["cf:hard"]["precision"] is None and d["cf:hard"]["recall"] == 0.0
    assert counts(d["luogu:5"]) == counts(d["cf:hard"])  # one problem, two label sources: counted in both
    assert counts(d["unlabelled"]) == (1, 0, 0, 0) and d["unlabelled"]["tnr"] is None
    p = m.by_origin_and(outcomes, m.platform_keys)["generated"]
    assert {k: counts(v) for k, v in p.items()} == {
        "atcoder": (0, 0, 1, 1), "codeforces": (1, 1, 0, 0), "unknown": (1, 0, 0, 0)}


def test_kind_ablation_as_in_table_one_by_hand():
    kinds = ["direct", "regular", "hacking"]
    outcomes = [
        outcome(True, [True, True, True], kinds=kinds),     # A: TP at every level
        outcome(False, [True, True, False], kinds=kinds),   # B: caught by hacking only
        outcome(False, [True, False, True], kinds=kinds),   # C: caught by regular
        outcome(True, [False, True, True], kinds=kinds),    # D: a right program a direct test rejects
        outcome(False, [True], kinds=["public"], origin="public", suite_id=2),
    ]
    r = m.kind_ablation(outcomes)
    g = r["generated"]
    # direct only: A TP; B, C FP; D FN.
    assert counts(g["direct"]) == (1, 2, 0, 1)
    assert g["direct"]["precision"] == pytest.approx(1 / 3) and g["direct"]["recall"] == 0.5 and g["direct"]["tnr"] == 0.0
    # + regular: C is caught.
    assert counts(g["direct+regular"]) == (1, 1, 1, 1)
    assert g["direct+regular"]["precision"] == 0.5 and g["direct+regular"]["tnr"] == 0.5
    # everything: B is caught too.
    assert counts(g["all"]) == (1, 0, 2, 1) and g["all"]["precision"] == 1.0 and g["all"]["tnr"] == 1.0
    # A public suite has no direct or regular tests: left out of those levels, not "passed".
    pub = r["public"]
    assert pub["direct"]["n"] == 0 and pub["direct"]["precision"] is None
    assert pub["direct+regular"]["n"] == 0
    assert counts(pub["all"]) == (0, 1, 0, 0)


def test_tau_sweep_by_hand():
    def frac(gold: bool, k: int) -> Outcome:
        return outcome(gold, [True] * k + [False] * (10 - k))

    outcomes = [frac(True, 10), frac(True, 7), frac(False, 9), frac(False, 5), frac(False, 4)]
    t = m.tau_sweep(outcomes)["generated"]
    assert list(t) == ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"]
    # tau 0.1-0.4: every program passes at least 4/10, so all five are positive.
    for tau in ("0.1", "0.4"):
        assert counts(t[tau]) == (2, 3, 0, 0) and t[tau]["precision"] == 0.4
    # tau 0.5: positives AC10, AC7, WA9, WA5.
    assert counts(t["0.5"]) == (2, 2, 1, 0) and t["0.5"]["precision"] == 0.5 and t["0.5"]["tnr"] == pytest.approx(1 / 3)
    # tau 0.6 and 0.7 (7/10 >= 0.7 despite binary floats): AC10, AC7, WA9.
    for tau in ("0.6", "0.7"):
        assert counts(t[tau]) == (2, 1, 2, 0) and t[tau]["precision"] == pytest.approx(2 / 3) and t[tau]["recall"] == 1.0
    # tau 0.8 and 0.9 (9/10 >= 0.9): AC10, WA9.
    for tau in ("0.8", "0.9"):
        assert counts(t[tau]) == (1, 1, 2, 1) and t[tau]["precision"] == 0.5 and t[tau]["recall"] == 0.5
    # tau 1.0 is the all-pass rule.
    assert counts(t["1.0"]) == (1, 0, 3, 1) == counts(m.by_origin(outcomes)["generated"])


def test_kept_count_rounds_up_and_keeps_at_least_one():
    assert [m.kept_count(10, p) for p in (100, 90, 50, 10, 5)] == [10, 9, 5, 1, 1]
    assert m.kept_count(7, 50) == 4 and m.kept_count(3, 5) == 1 and m.kept_count(20, 5) == 1


def test_redundancy_at_full_suite_equals_the_full_metrics():
    outcomes = [outcome(True, [True] * 5), outcome(False, [True, True, False, True, True]),
                outcome(False, [True] * 5), outcome(True, [False] * 5)]
    full = m.by_origin(outcomes)["generated"]
    first = m.subsample_curve(outcomes)["generated"][0]
    assert first["percent"] == 100
    assert first["precision"] == full["precision"] == 0.5 and first["recall"] == full["recall"] == 0.5
    assert (first["mean_tp"], first["mean_fp"], first["mean_tn"], first["mean_fn"]) == (1, 1, 1, 1)
    assert [p["percent"] for p in m.subsample_curve(outcomes)["generated"]] == list(m.KEEP_PERCENTS)


def test_redundancy_one_kept_test_catches_a_one_bug_program_in_proportion():
    # 10 tests; the wrong program fails only test 3. Keeping 10% keeps one test: a seed
    # catches it (TN, precision 1) or not (FP, precision 1/2); recall is always 1. So the mean
    # precision over seeds is 1/2 + 1/2 * (share of seeds that caught it) = 0.5 + 0.5 * mean_tn.
    outcomes = [outcome(True, [True] * 10), outcome(False, [i != 3 for i in range(10)])]
    point = next(p for p in m.subsample_curve(outcomes)["generated"] if p["percent"] == 10)
    assert point["recall"] == 1.0 and point["recall_seeds"] == m.SEEDS
    assert point["mean_tn"] + point["mean_fp"] == 1
    assert point["precision"] == pytest.approx(0.5 + 0.5 * point["mean_tn"])
    assert 0 < point["mean_tn"] < 1  # 20 seeds: some keep test 3, most do not
    # A program that fails every test is caught at any size.
    always = [outcome(True, [True] * 10), outcome(False, [False] * 10)]
    assert all(p["precision"] == 1.0 for p in m.subsample_curve(always)["generated"])
    # Deterministic: the same outcomes give the same curve.
    assert m.subsample_curve(outcomes) == m.subsample_curve(outcomes)


def test_redundancy_with_no_gold_positive_keeps_recall_undefined():
    points = m.subsample_curve([outcome(False, [True, False]), outcome(False, [False, False])])["generated"]
    assert all(p["recall"] is None and p["recall_seeds"] == 0 for p in points)


def test_percentile_nearest_rank():
    assert m.percentile_nearest_rank([], 95) is None
    assert m.percentile_nearest_rank([3.0], 95) == 3.0
    assert m.percentile_nearest_rank(list(range(1, 21)), 95) == 19
    assert m.percentile_nearest_rank(list(range(100, 0, -1)), 95) == 95


def test_cost_with_and_without_fail_fast_and_hacking_first_by_hand():
    kinds, walls = ["direct", "regular", "hacking"], [100, 200, 300]
    outcomes = [
        outcome(False, [True, True, False], kinds=kinds, walls=walls),   # X: fails the hacking test
        outcome(True, [True, True, True], kinds=kinds, walls=walls),     # Y: passes
        outcome(False, [False, True, True], kinds=kinds, walls=walls),   # Z: fails the direct test
    ]
    c = m.cost_summary(outcomes, KIND_ORDER)["generated"]
    # every test: 0.6 s each.
    assert c["all_tests"] == {"n": 3, "mean_s": pytest.approx(0.6), "p95_s": pytest.approx(0.6)}
    # suite order (direct, regular, hacking): X 0.6, Y 0.6, Z stops after direct: 0.1.
    assert c["fail_fast_suite_order"]["mean_s"] == pytest.approx((0.6 + 0.6 + 0.1) / 3)
    # hacking first (hacking, regular, direct): X stops after hacking: 0.3; Y 0.6; Z 0.6.
    assert c["fail_fast_hacking_first"]["mean_s"] == pytest.approx((0.3 + 0.6 + 0.6) / 3)
    assert c["fail_fast_hacking_first"]["p95_s"] == pytest.approx(0.6)
    assert m.cost_summary([], KIND_ORDER) == {}
