"""The paper-layout tables on a hand-made set of verdicts; every value worked out by hand in
the comments. Macro (mean over problems) and micro (pooled) differ on this set on purpose."""

from __future__ import annotations

import pytest

from review.evaluation import export, paper
from review.evaluation.metrics import TAUS, Outcome, TestRun

_ids = iter(range(1, 10**6))
DIFFICULTY = {1: ("cf:easy",), 2: ("cf:easy", "luogu:3"), 3: ("cf:hard",), 4: ("cf:hard",)}

# (problem, candidate, candidate origin, gold AC, passes the generated suite, passes the public suite)
# Problem 4 has only a generated suite: the same-problems restriction leaves it out.
VERDICTS = [
    (1, "a1", "human", True, True, True),
    (1, "b1", "gpt", False, False, True),
    (1, "c1", "human", False, False, True),
    (2, "a2", "gpt", True, True, True),
    (2, "b2", "human", True, False, True),
    (2, "c2", "gpt", False, False, True),
    (3, "a3", "human", True, True, False),
    (3, "b3", "gpt", False, True, True),
    (3, "c3", "gpt", False, False, True),
    (3, "d3", "human", False, False, False),
    (4, "a4", "human", True, True, None),
    (4, "b4", "human", False, True, None),
]


def hand_made() -> list[Outcome]:
    solution_ids = {name: i for i, (_, name, *_rest) in enumerate(VERDICTS, start=1)}
    outcomes = []
    for problem, name, who, gold, generated, public in VERDICTS:
        for origin, passed, suite in (("generated", generated, 100), ("public", public, 200)):
            if passed is None:
                continue
            outcomes.append(Outcome(
                solution_id=solution_ids[name], suite_id=suite + problem, problem_id=problem, origin=origin,
                gold_ac=gold, tests=(TestRun(1, "regular", passed),), difficulty=DIFFICULTY[problem],
                candidate_origin=who,
            ))
    return outcomes


def values(result: dict, name: str, metric: str, origin: str) -> list[float | None]:
    table = next(t for t in result["tables"] if t["name"] == name)
    row = table["metrics"][metric][result["origins"].index(origin)]
    return [c["value"] for c in row["cells"]]


def approx(xs: list[float | None]) -> list[object]:
    return [None if x is None else pytest.approx(x) for x in xs]


def test_macro_tables_by_hand_with_the_plain_mean_average_column():
    r = paper.paper_tables(hand_made(), difficulty_source="cf")
    assert r["columns"] == ["easy", "hard", "average", "all"]
    assert (r["problems_compared"], r["problems_excluded"]) == (3, 1)
    # Per problem, generated: p1 TP1 TN2 (P 1, R 1, F1 1); p2 TP1 FN1 TN1 (P 1, R 1/2, F1 2/3);
    # p3 TP1 FP1 TN2 (P 1/2, R 1, F1 2/3). easy = p1, p2; hard = p3; average = (easy + hard) / 2.
    assert values(r, "macro-all", "precision", "generated") == approx([1, 0.5, 0.75, 2.5 / 3])
    assert values(r, "macro-all", "recall", "generated") == approx([0.75, 1, 0.875, 2.5 / 3])
    assert values(r, "macro-all", "f1", "generated") == approx([5 / 6, 2 / 3, 0.75, 7 / 9])
    # public: p1 TP1 FP2 (P 1/3, R 1, F1 1/2); p2 TP2 FP1 (P 2/3, R 1, F1 4/5); p3 FP2 FN1 TN1 (P 0, R 0, F1 0).
    assert values(r, "macro-all", "precision", "public") == approx([0.5, 0, 0.25, 1 / 3])
    assert values(r, "macro-all", "recall", "public") == approx([1, 0, 0.5, 2 / 3])
    assert values(r, "macro-all", "f1", "public") == approx([0.65, 0, 0.325, 1.3 / 3])


def test_micro_tables_pool_candidates_and_differ_from_macro():
    r = paper.paper_tables(hand_made(), difficulty_source="cf")
    # generated easy pooled: TP2 FN1 TN3 -> P 1, R 2/3; hard TP1 FP1 -> P 1/2, R 1;
    # all: TP3 FP1 FN1 TN5 -> P 3/4 (macro said 5/6), R 3/4 (macro 5/6).
    assert values(r, "micro-all", "precision", "generated") == approx([1, 0.5, 0.75, 0.75])
    assert values(r, "micro-all", "recall", "generated") == approx([2 / 3, 1, 5 / 6, 0.75])
    # public easy pooled: TP3 FP3 -> P 1/2; hard FP2 FN1 -> P 0, R 0; all TP3 FP5 FN1 -> P 3/8, R 3/4.
    assert values(r, "micro-all", "precision", "public") == approx([0.5, 0, 0.25, 3 / 8])
    assert values(r, "micro-all", "recall", "public") == approx([1, 0, 0.5, 0.75])
    assert values(r, "micro-all", "precision", "generated")[3] != values(r, "macro-all", "precision", "generated")[3]


def test_same_problems_restriction_and_its_excluded_count():
    everything = paper.paper_tables(hand_made(), difficulty_source="cf", same_problems_only=False)
    assert (everything["problems_compared"], everything["problems_excluded"]) == (4, 0)
    # p4 (generated only: TP1 FP1, P 1/2) joins hard: macro hard P = (1/2 + 1/2) / 2, all = (1 + 1 + .5 + .5) / 4.
    assert values(everything, "macro-all", "precision", "generated") == approx([1, 0.5, 0.75, 0.75])
    # micro all: TP4 FP2 FN1 -> P 4/6.
    assert values(everything, "micro-all", "precision", "generated")[3] == pytest.approx(4 / 6)
    # Comparing generated alone, every problem it has a suite on counts.
    alone = paper.paper_tables(hand_made(), difficulty_source="cf", origins=["generated"])
    assert (alone["problems_compared"], alone["problems_excluded"]) == (4, 0)


def test_split_by_candidate_origin_with_undefined_cells_left_out_of_the_means():
    r = paper.paper_tables(hand_made(), difficulty_source="cf")
    assert [t["name"] for t in r["tables"]] == ["macro-all", "macro-gpt", "macro-human", "micro-all", "micro-gpt",
                                                "micro-human"]
    # gpt on generated: p1 (b1 WA fails) no predicted positive -> undefined; p2 a2 TP -> 1; p3 b3 FP -> 0.
    assert values(r, "macro-gpt", "precision", "generated") == approx([1, 0, 0.5, 0.5])
    cells = next(t for t in r["tables"] if t["name"] == "macro-gpt")["metrics"]["precision"][0]["cells"]
    assert (cells[0]["problems"], cells[0]["defined"]) == (2, 1)
    # recall: p1 and p3 have no gold AC written by gpt -> hard undefined; the average is the one defined column.
    assert values(r, "macro-gpt", "recall", "generated") == approx([1, None, 1, 1])
    assert next(t for t in r["tables"] if t["name"] == "macro-gpt")["programs"] == 5


def test_levels_of_another_source_and_the_unlabelled_column():
    r = paper.paper_tables(hand_made(), difficulty_source="luogu")
    # Only p2 has a luogu label; p1 and p3 are unlabelled, outside the average, inside "all".
    assert r["columns"] == ["3", "unlabelled", "average", "all"]
    # generated macro precision: p2 = 1; unlabelled p1, p3 = (1 + 1/2) / 2; average = the one level.
    assert values(r, "macro-all", "precision", "generated") == approx([1, 0.75, 1, 2.5 / 3])
    assert paper.default_difficulty_source(hand_made()) == "cf"
    assert paper.paper_tables(hand_made(), difficulty_source="")["columns"] == ["all"]


def test_difficulty_levels_sort_naturally():
    outcomes = [Outcome(solution_id=i, suite_id=1, problem_id=i, origin="generated", gold_ac=True, tests=(),
                        difficulty=(f"cf:{level}",)) for i, level in enumerate(["10", "2", "Div. 10", "Div. 2"])]
    assert paper.difficulty_levels(outcomes, "cf") == ["2", "10", "Div. 2", "Div. 10"]


def test_tau_grid_and_training_data_selection_by_hand():
    assert TAUS == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

    def run(gold: bool, passed: list[bool]) -> Outcome:
        return Outcome(solution_id=next(_ids), suite_id=1, problem_id=1, origin="generated", gold_ac=gold,
                       tests=tuple(TestRun(i, "regular", p) for i, p in enumerate(passed)))

    # Pass fractions: 1.0 (AC), 0.5 (AC), 0.5 (WA), 0.0 (WA), 0.75 (WA).
    outcomes = [run(True, [True] * 4), run(True, [True, True, False, False]), run(False, [True, False, True, False]),
                run(False, [False] * 4), run(False, [True, True, True, False])]
    rows = {row["tau"]: row for row in paper.tau_selection(outcomes)["generated"]}
    assert list(rows) == ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"]
    # tau <= 0.5 keeps 1.0, 0.5, 0.5, 0.75: 2 of 4 correct; 0.6-0.7 keeps 1.0 and 0.75; above, only 1.0.
    assert [(rows[t]["kept"], rows[t]["correct"]) for t in ("0.1", "0.5", "0.6", "0.7", "0.8", "1.0")] == [
        (4, 2), (4, 2), (2, 1), (2, 1), (1, 1), (1, 1)]
    assert (rows["0.5"]["precision"], rows["0.6"]["precision"], rows["1.0"]["precision"]) == (0.5, 0.5, 1.0)
    assert (rows["0.5"]["recall"], rows["1.0"]["recall"]) == (1.0, 0.5)


def test_near_duplicates_per_problem_mean_and_maximum():
    per_suite = [{"origin": "generated", "pid": "p1", "share": 0.0}, {"origin": "generated", "pid": "p2", "share": 0.5},
                 {"origin": "generated", "pid": "p3", "share": 0.1}, {"origin": "public", "pid": "p1", "share": None}]
    r = paper.near_duplicates_per_problem(per_suite)
    assert r["generated"]["mean_share"] == pytest.approx(0.2)
    assert (r["generated"]["max_share"], r["generated"]["max_pid"], r["generated"]["problems"]) == (0.5, "p2", 3)
    assert r["public"] == {"problems": 0, "problems_without_inputs": 1, "mean_share": None, "max_share": None,
                           "max_pid": ""}


def test_exports_carry_the_same_numbers():
    report = {"paper": paper.paper_tables(hand_made(), difficulty_source="cf")}
    tables = export.paper_plain_tables(report)
    macro = next(t for t in tables if t["name"] == "paper-macro-all")
    assert macro["groups"] == [["Precision", 4], ["Recall", 4], ["F1", 4]]
    assert "3 problems where every origin has a suite; 1 excluded" in macro["note"]
    csv_lines = export.table_csv(macro).splitlines()
    assert csv_lines[0].startswith("suite origin,Precision/easy,Precision/hard,Precision/average,Precision/all,")
    assert csv_lines[1].startswith("generated,1.0,0.5,0.75,0.8333")
    latex = export.table_latex(macro)
    assert r"\multicolumn{4}{c}{Precision}" in latex and r"\cmidrule(lr){2-5}" in latex
    assert r"generated & 100.00 & 50.00 & 75.00 & 83.33 & 75.00 & 100.00 & 87.50 & 83.33" in latex
    gpt = export.table_latex(next(t for t in tables if t["name"] == "paper-macro-gpt"))
    assert "& -- &" in gpt  # recall of the hard column is undefined
    text = export.table_text(macro)
    assert "average" in text and "83.33" in text
    assert export.latex_escape("a_b & 50%") == r"a\_b \& 50\%"


def test_one_candidate_origin_is_not_repeated_and_text_columns_line_up():
    one = [o for o in hand_made() if o.candidate_origin == "human"]
    r = paper.paper_tables(one, difficulty_source="")
    assert [t["name"] for t in r["tables"]] == ["macro-all", "micro-all"] and r["columns"] == ["all"]
    text = export.table_text(export.paper_plain_tables({"paper": r})[0])
    lines = text.splitlines()
    assert "(no difficulty labels)" in lines[0]
    header, first = lines[3], lines[4]
    assert len(header) == len(first) and header.split() == ["suite", "origin", "all", "all", "all"]
