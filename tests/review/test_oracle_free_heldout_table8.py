"""Held-out Table 8: the four problems of tests/oracle_free_heldout.py given oracles, an imported
oracle-based suite and 26 candidates with gold verdicts; one command with scripted replies builds
both oracle-free suites per problem with the oracles hidden, and /evaluation/ shows exactly the
command's figures."""

from __future__ import annotations

import json
import random
import re
from fractions import Fraction
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from problems.models import CodeOrigin, Solution, TestSuite
from problems.services import (
    NewTest,
    judge_create,
    kit_create,
    solution_upsert,
    suite_activate,
    suite_add_tests,
    suite_create,
    validator_create,
)
from review.evaluation.oracle_free import _pct
from tests.factories import annotator
from tests.generation.conftest import FakeLLM
from tests.oracle_free_heldout import AVG, CASES, GAIN, PAIR, Case
from tests.review.test_oracle_free_table8 import fake_llm  # noqa: F401  (fixture: no reply retries)

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
MARK = "# ORACLE-ONLY-MARKER\n"


def _big(case: Case) -> tuple[str, str]:
    """A maximum-size input of each problem with its answer, computed here."""
    rng = random.Random(8)
    if case is GAIN:
        a = [rng.randint(1, 10**9) for _ in range(200000)]
        lowest, best = a[0], None
        for x in a[1:]:
            best = x - lowest if best is None else max(best, x - lowest)
            lowest = min(lowest, x)
        return "1\n200000\n" + " ".join(map(str, a)) + "\n", f"{best}\n"
    if case is AVG:
        n, k = 200000, 100000
        a = [rng.randint(-10**4, 10**4) for _ in range(n)]
        s = best = sum(a[:k])
        for i in range(k, n):
            s += a[i] - a[i - k]
            best = max(best, s)
        return f"{n} {k}\n" + " ".join(map(str, a)) + "\n", f"{float(Fraction(best, k)):.10f}\n"
    if case is PAIR:
        return f"200000 {2 * 10**9}\n" + " ".join(str(rng.randint(1, 10**9 - 1)) for _ in range(200000)) + "\n", "-1\n"
    return "a" * 200000 + "\n" + "a" * 100000 + "\n", "100001\n"


def _dataset() -> list:
    problems = []
    for case in CASES.values():
        problem = case.make("t8/" + case.pid.split("/")[1])
        solution_upsert(problem=problem, role=Solution.Role.ORACLE, language="python3", code=case.efficient + MARK,
                        reliability=1)
        for name, (language, code, gold) in case.candidates.items():
            solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language=language, code=code, name=name,
                            gold_verdict=gold)
        if case.judge:
            judge = judge_create(problem=problem, code=case.judge, origin=CodeOrigin.IMPORTED)
            validator = validator_create(problem=problem, code=case.validator, origin=CodeOrigin.IMPORTED)
            kit_create(problem=problem, origin=CodeOrigin.IMPORTED, validator=validator, output_judge=judge,
                       needs_output_judge=True)
        suite = suite_create(problem=problem, origin=TestSuite.Origin.IMPORTED)
        tests = [(s["input"], s["output"]) for s in case.samples] + case.pairs + [_big(case)]
        suite_add_tests(suite=suite, tests=[NewTest(input=i, output=o, kind="imported") for i, o in tests])
        suite_activate(suite=suite)
        problems.append(problem)
    return sorted(problems, key=lambda p: p.pid)


@pytest.mark.heavy(seconds=50)
def test_table8_on_a_held_out_dataset_with_gold_verdicts(fake_llm: FakeLLM, tmp_path) -> None:  # noqa: F811
    problems = _dataset()
    for problem in problems:
        case = CASES["hd/" + problem.pid.split("/")[1]]
        # per problem: AceCoder (pairs, solution), then A.7 (main reply, second brute force)
        fake_llm.reply(case.pairs_reply([case.wrong_pair or (case.pairs[0][0], "999\n")]), case.solution_reply(),
                       case.a7_reply(), case.second_reply())
    out = tmp_path / "t8.json"
    text = StringIO()
    call_command("oracle_free_table8", "--filter", "source=heldout", "--out", str(out), stdout=text,
                 stderr=StringIO())
    report = json.loads(out.read_text())
    assert report["problems"] == 4 and report["consistency_check"] is False
    rows = {r["key"]: r for r in report["rows"]}
    # 26 candidates: 8 right (fast, or another right answer), 18 wrong (wrong answers, too slow, crash when big)
    assert all(rows[k]["programs"] == 26 and rows[k]["problems"] == 4 for k in rows), rows
    assert (rows["oracle_based"]["tp"], rows["oracle_based"]["fp"], rows["oracle_based"]["fn"]) == (8, 0, 0)
    # A.7: every wrong program rejected (the slow and crashing ones by the time-only test), every right one accepted
    assert (rows["hardtests_a7"]["tp"], rows["hardtests_a7"]["fp"], rows["hardtests_a7"]["fn"]) == (8, 0, 0)
    # AceCoder: no maximum-size test, so the 6 slow or crashing programs get through
    assert (rows["acecoder"]["tp"], rows["acecoder"]["fp"], rows["acecoder"]["fn"]) == (8, 6, 0)
    assert rows["acecoder"]["fpr"] == pytest.approx(rows["acecoder"]["fp"] / 18)
    assert all(MARK not in json.dumps(r["messages"]) for r in fake_llm.requests)
    assert len(fake_llm.requests) == 16

    client = Client()
    client.force_login(annotator())
    html = client.get("/evaluation/").content.decode()
    for key, row in rows.items():
        cells = re.search(rf'<tr data-method="{key}">(.*?)</tr>', html, re.S)
        assert cells, key
        shown = re.findall(r'<td class="num">(.*?)</td>', cells.group(1))
        assert shown[:6] == [f"{row['problems']}/{row['of']}", str(row["programs"]), _pct(row["fpr"]),
                             _pct(row["fnr"]), _pct(row["precision"]), _pct(row["recall"])], (key, shown)
        assert f"{_pct(row['fpr']):>8} {_pct(row['fnr']):>8}" in text.getvalue()
