"""Feedback refinement: a suite that lets a known-wrong program through gets a round whose suite
rejects it; a suite already separating right from wrong makes no refinement call.
Loopback fake LLM, real sandbox, real database."""

from __future__ import annotations

import json

import pytest

from generation.models import GenerationRun, LLMCall, RefinementRound
from generation.pipeline import generation_run_execute
from generation.refine.report import refinement_section
from generation.refine.split import candidate_split
from generation.services import generation_run_start
from problems.models import Problem, Solution, TestSuite
from problems.services import solution_upsert
from tests.generation.conftest import FakeLLM, inputs_reply, make_problem, validator_reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts"), pytest.mark.slow]

SMALL = '''
import random


def gen_range_based_input():
    return f"{random.randint(0, 1000)} {random.randint(0, 1000)}\\n"
'''
BIG = '''
import random


def gen_hacking_input_large_a():
    return f"{10**9 - random.randint(0, 9)} {random.randint(0, 10**9)}\\n"
'''
RIGHT = "a, b = map(int, input().split())\nprint(a + b)\n"
RIGHT_2 = "import sys\na, b = map(int, sys.stdin.read().split())\nprint(b + a)\n"
# Wrong only when a is large: small random inputs never show it.
WRONG_BIG = "a, b = map(int, input().split())\nprint(a + b if a < 10**6 else a + b - 1)\n"
WRONG_BIG_2 = "a, b = map(int, input().split())\nprint(a + b if a < 10**7 else 0)\n"
WRONG_SMALL = "a, b = map(int, input().split())\nprint(a * b)\n"


def candidates(problem, rows) -> None:
    for name, code, gold, note in rows:
        solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3", code=code, name=name,
                        gold_verdict=gold, note=note)


def refine_reply() -> str:
    obj = {"input_validator": None, "needs_custom_output_judging_function": False, "output_judging_function": None,
           "LLMGen_input": None, "RPGen_SPGen_input_generator": None, "HackGen_input_generator": BIG}
    return "The wrong program fails when a is large; add such inputs.\n```json\n" + json.dumps(obj) + "\n```"


def start(problem, fake_llm: FakeLLM, *extra: str) -> GenerationRun:
    fake_llm.reply(validator_reply(), inputs_reply(direct=["1 2\n", "5 7\n"], regular=SMALL, hacking=None), *extra)
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False)
    return generation_run_execute(run_id=run.pk)


def test_a_false_positive_gets_a_round_whose_suite_rejects_it(fake_llm: FakeLLM, client, admin_user) -> None:
    problem = make_problem()
    candidates(problem, [("right", RIGHT, "AC", ""), ("off-by-one", WRONG_BIG, "WA", "off by one when a >= 10^6")])
    run = start(problem, fake_llm, refine_reply())
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    rounds = list(RefinementRound.objects.filter(run=run))
    assert [r.number for r in rounds] == [0, 1]
    assert rounds[0].scores["tuning"]["tnr"] == 0.0 and rounds[0].scores["tuning"]["fp"] == 1
    assert rounds[1].scores["tuning"]["tnr"] == 1.0 and rounds[1].scores["tuning"]["tpr"] == 1.0
    assert rounds[1].chosen and not rounds[0].chosen and rounds[1].tests_added >= 1
    assert rounds[1].sent[0]["kind"] == "false_positive" and rounds[1].sent[0]["name"] == "off-by-one"
    call = LLMCall.objects.get(run=run, purpose="refine1")
    assert call.prompt_version == "refine_v1"
    prompt = call.messages[-1]["content"]
    assert "a + b - 1" in prompt and "off by one when a >= 10^6" in prompt and "TNR (wrong programs rejected): 0%" in prompt
    # The active suite is round 1's, and it rejects the wrong program.
    active = TestSuite.objects.get(problem=problem, status=TestSuite.Status.ACTIVE, origin=TestSuite.Origin.GENERATED)
    assert active.pk == rounds[1].suite_id and active.counts_by_kind.get("hacking", 0) >= 1
    assert TestSuite.objects.get(pk=rounds[0].suite_id).status == TestSuite.Status.FAILED
    assert run.kit.extra["stage"] == "refinement"
    totals = refinement_section(Problem.objects.filter(pk=problem.pk))["totals"]
    assert totals["round0_tuning"]["fp"] == 1 and totals["final_tuning"]["fp"] == 0
    assert totals["final_tuning"]["tnr"] == 1.0
    client.force_login(admin_user)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "Refinement rounds" in page
    assert page.count("data-round=") == 2
    assert "TNR 0%" in page and "TNR 100%" in page


def test_a_suite_already_at_tpr_and_tnr_one_makes_no_refinement_call(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    candidates(problem, [("right", RIGHT, "AC", ""), ("product", WRONG_SMALL, "WA", "")])
    run = start(problem, fake_llm)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert not LLMCall.objects.filter(run=run, purpose__startswith="refine").exists()
    (only,) = RefinementRound.objects.filter(run=run)
    assert only.chosen and only.scores["tuning"]["tpr"] == 1.0 and only.scores["tuning"]["tnr"] == 1.0
    assert run.suite_id == only.suite_id and run.suite.status == TestSuite.Status.ACTIVE


def test_held_out_candidates_are_scored_but_never_sent(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_SPLIT_MIN_CANDIDATES = 4
    problem = make_problem()
    candidates(problem, [("right", RIGHT, "AC", ""), ("right2", RIGHT_2, "AC", ""),
                         ("wrong1", WRONG_BIG, "WA", ""), ("wrong2", WRONG_BIG_2, "WA", "")])
    split = candidate_split(problem)
    assert len(split.tuning) == 2 and len(split.held_out) == 2
    held_names = {s.name for s in split.held_out}
    run = start(problem, fake_llm, refine_reply())
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    r0, r1 = RefinementRound.objects.filter(run=run)
    assert r0.scores["held_out"]["tnr"] == 0.0 and r1.scores["held_out"]["tnr"] == 1.0
    prompt = LLMCall.objects.get(run=run, purpose="refine1").messages[-1]["content"]
    held_code = {s.code.splitlines()[-1] for s in split.held_out}
    assert not any(line in prompt for line in held_code), held_names
    assert {s["name"] for s in r1.sent}.isdisjoint(held_names)
