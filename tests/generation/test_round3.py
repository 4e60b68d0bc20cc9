"""Pipeline round 3: suites that survive wrong kits, wrong oracles and real model replies.

Each test is about one mechanism and fails with it switched off (see docs/generation.md).
Loopback fake LLM, real sandbox, real database.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from generation.materialise import JudgeRejects, materialise_kit
from generation.materialise.inputs import generator_seed
from generation.models import FailureReason, GenerationRun, LLMCall, RefinementRound
from generation.pipeline import generation_run_execute
from generation.refine.repair import probe
from generation.services import generation_run_start
from problems.judging import judge_code
from problems.models import CodeOrigin, Solution, TestSuite
from problems.services import judge_create, kit_create, solution_upsert, validator_create
from sandbox import get_sandbox
from tests.generation.conftest import (
    HACKING,
    REGULAR,
    VALIDATOR,
    FakeLLM,
    inputs_reply,
    make_problem,
    validator_reply,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]


def start(problem, mode=GenerationRun.Mode.FROM_SCRATCH) -> GenerationRun:
    run = generation_run_start(problem=problem, mode=mode, enqueue=False)
    return generation_run_execute(run_id=run.pk)


def make_kit(problem, *, validator: str = VALIDATOR, regular: str = REGULAR, hacking: str = "", direct=None,
             judge: str | None = None):
    v = validator_create(problem=problem, code=validator, origin=CodeOrigin.IMPORTED)
    j = judge_create(problem=problem, code=judge, origin=CodeOrigin.IMPORTED) if judge else None
    return kit_create(problem=problem, origin=CodeOrigin.IMPORTED, validator=v, output_judge=j,
                      needs_output_judge=j is not None, direct_inputs=direct if direct is not None else ["1 2\n"],
                      regular_generator=regular, hacking_generator=hacking)


# -- 1. oracle outputs compared as the statement accepts --------------------------------

RATIO_VALIDATOR = '''
def validate_input(input_str):
    parts = input_str.split()
    if len(parts) != 2 or not input_str.endswith("\\n"):
        return False
    if not all(p.isdigit() for p in parts):
        return False
    a, b = map(int, parts)
    return 1 <= a <= 1000 and 1 <= b <= 1000
'''
RATIO_GEN = '''
import random


def gen_range_based_input():
    return f"{random.randint(1, 1000)} {random.randint(1, 1000)}\\n"
'''
RATIO_PY = "a, b = map(int, input().split())\nprint(f'{a / b:.10f}')\n"
RATIO_CPP = ("#include <cstdio>\nint main(){double a,b;scanf(\"%lf %lf\",&a,&b);printf(\"%.12f\\n\",a/b);}\n")


def ratio_problem():
    problem = make_problem("test/ratio", oracles=[("python3", RATIO_PY), ("cpp", RATIO_CPP)])
    problem.statement = ("Print $a/b$. Your answer is accepted if its absolute or relative error does not "
                         "exceed $10^{-6}$.")
    problem.samples = [{"input": "1 3\n", "output": "0.333333333333\n"}]
    problem.save()
    return problem


def test_real_number_answers_printed_with_other_decimals_pass_the_preflight_and_the_suite(fake_llm: FakeLLM) -> None:
    problem = ratio_problem()
    # The model says plain comparison suffices: the pipeline still judges within the tolerance.
    fake_llm.reply(validator_reply(RATIO_VALIDATOR), inputs_reply(direct=["1 3\n", "2 7\n"], regular=RATIO_GEN,
                                                                  hacking=None))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert len(fake_llm.requests) == 2
    assert "answers are real numbers (tolerance 1e-06)" in run.log
    judge = run.suite.output_judge
    assert judge is not None and "TOLERANCE = 1e-06" in judge.code
    assert run.suite.test_count >= 3
    # A correct program printing 15 decimals is accepted, a wrong one (off by 1e-3) is not.
    fine = "a, b = map(int, input().split())\nprint(f'{a / b:.15f}')\n"
    off = "a, b = map(int, input().split())\nprint(f'{a / b + 1e-3:.15f}')\n"
    assert judge_code(problem=problem, suite=run.suite, language="python3", code=fine).verdict == "AC"
    assert judge_code(problem=problem, suite=run.suite, language="python3", code=off).verdict == "WA"


def test_a_tolerance_declared_in_the_kit_decides_agreement() -> None:
    problem = ratio_problem()
    problem.statement = "Print a/b."  # nothing stated: only the kit says so
    problem.samples = [{"input": "1 4\n", "output": "0.25\n"}]
    problem.save()
    kit = make_kit(problem, validator=RATIO_VALIDATOR, regular=RATIO_GEN, direct=["1 3\n"])
    with pytest.raises(Exception, match="no two of 2 oracles agree"):
        materialise_kit(kit=kit)
    kit.extra = {"float_tolerance": 1e-6}
    kit.save()
    assert materialise_kit(kit=kit).agreement == 1.0


# -- 2. reproducible by construction ----------------------------------------------------

# Picks the values by a set's iteration order, which the per-process hash seed decides.
SET_ORDER = '''
def gen_range_based_input():
    words = {str(n * 7919 % 100003) for n in range(1, 40)}
    first, second = list(words)[:2]
    return f"{first} {second}\\n"
'''
CLOCK = '''
import random
import time


def gen_hacking_input_clock():
    rng = random.Random(time.time_ns())
    return f"{rng.randint(0, 10**9)} {rng.randint(0, 10**9)}\\n"
'''


def test_a_generator_iterating_over_a_set_gives_the_same_inputs_in_every_process() -> None:
    problem = make_problem()
    kit = make_kit(problem, regular=SET_ORDER)
    runs = [materialise_kit(kit=kit) for _ in range(3)]
    inputs = [[t.input for t in r.tests if t.generator == "gen_range_based_input"] for r in runs]
    assert inputs[0] and inputs[0] == inputs[1] == inputs[2]
    assert runs[0].unreproducible == []


def test_a_generator_seeded_from_the_clock_is_named_and_its_inputs_dropped() -> None:
    problem = make_problem()
    make_kit(problem, hacking=HACKING + CLOCK)
    run = start(problem, GenerationRun.Mode.FROM_KIT)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert "gen_hacking_input_clock is not reproducible" in run.log
    generators = set(run.suite.tests.values_list("generator", flat=True))
    assert "gen_hacking_input_clock" not in generators and "gen_hacking_input_big" in generators
    assert run.counts["hacking"]["failed"] >= 3
    # ... and repair sees it as broken, with the reason the model needs
    broken = probe(sb=get_sandbox(), kit=run.kit)
    assert [b.function for b in broken] == ["gen_hacking_input_clock"] and "not reproducible" in broken[0].why


def test_changing_only_the_judge_keeps_every_input() -> None:
    problem = make_problem()
    first = make_kit(problem, hacking=HACKING)
    tokens = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
              "    return candidate_output.split() == reference_output.split()\n")
    second = make_kit(problem, hacking=HACKING, judge=tokens)
    assert second.version == first.version + 1
    a, b = materialise_kit(kit=first), materialise_kit(kit=second)
    assert [(t.generator, t.call_number, t.seed, t.input) for t in a.tests] == \
        [(t.generator, t.call_number, t.seed, t.input) for t in b.tests]
    assert generator_seed(first, "gen_range_based_input", 1) == generator_seed(second, "gen_range_based_input", 1)


# -- 3. several right answers: the run asks for a judging function -------------------------

LOW = "a, b = map(int, input().split())\nprint(min(a, b))\n"
HIGH = "a, b = map(int, input().split())\nprint(max(a, b))\n"
RANGE_JUDGE = (
    "def output_judging_function(input_str, candidate_output, reference_output):\n"
    "    a, b = map(int, input_str.split())\n"
    "    try:\n        x = int(candidate_output.strip())\n    except ValueError:\n        return False\n"
    "    return min(a, b) <= x <= max(a, b)\n"
)


def test_oracles_disagreeing_as_if_several_answers_were_right_get_a_judging_function(fake_llm: FakeLLM) -> None:
    problem = make_problem("test/between", oracles=[("python3", LOW), ("python3", HIGH)])
    problem.statement = "Print any integer x with min(a, b) <= x <= max(a, b)."
    problem.samples = [{"input": "3 3\n", "output": "3\n"}]  # both oracles pass it
    problem.save()
    fake_llm.reply(validator_reply(), inputs_reply(direct=["1 2\n", "5 9\n"], hacking=None),
                   validator_reply(needs=True, judge=RANGE_JUDGE))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    call = LLMCall.objects.get(run=run, purpose="judge_request")
    prompt = call.messages[-1]["content"]
    assert "more than one correct answer" in prompt and "'1\\n'" in prompt and "'2\\n'" in prompt
    assert run.suite.output_judge is not None and "min(a, b) <= x" in run.suite.output_judge.code
    assert run.suite.test_count >= 3


def test_a_judge_that_accepts_everything_is_sent_back(fake_llm: FakeLLM) -> None:
    problem = make_problem("test/between", oracles=[("python3", LOW), ("python3", HIGH)])
    problem.samples = [{"input": "3 3\n", "output": "3\n"}]
    problem.save()
    anything = "def output_judging_function(input_str, candidate_output, reference_output):\n    return True\n"
    fake_llm.reply(validator_reply(), inputs_reply(direct=["1 2\n", "5 9\n"], hacking=None),
                   validator_reply(needs=True, judge=anything), validator_reply(needs=True, judge=anything))
    run = start(problem)
    assert run.status == GenerationRun.Status.FAILED
    assert run.failure_reason == FailureReason.JUDGE_INVALID and "accepts an empty output" in run.error


# -- 4. a suite that fails a known-correct program is never activated --------------------

SMALL = '''
import random


def gen_range_based_input():
    return f"{random.randint(0, 1000)} {random.randint(0, 1000)}\\n"
'''
# Correct within the statement's range (0 <= a, b), crashes outside it.
RIGHT_IN_RANGE = "a, b = map(int, input().split())\nassert a >= 0 and b >= 0\nprint(a + b)\n"
WRONG_BIG = "a, b = map(int, input().split())\nprint(a + b if a < 10**6 else a + b - 1)\n"
WIDE_VALIDATOR = VALIDATOR.replace("if not p.isdigit()", "if not p.lstrip('-').isdigit()").replace(
    'p[0] == "0"', 'p.lstrip("-")[0] == "0"')
WIDENING = '''
def gen_hacking_input_negative():
    return "-5 3\\n"


def gen_hacking_input_big_a():
    return "999999999 1\\n"
'''


def candidates(problem) -> None:
    for name, code, gold in (("right", RIGHT_IN_RANGE, "AC"), ("off-by-one", WRONG_BIG, "WA")):
        solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3", code=code, name=name,
                        gold_verdict=gold)


def test_a_refinement_round_failing_a_known_correct_program_is_never_made_active(fake_llm: FakeLLM,
                                                                                 settings) -> None:
    settings.HARDTESTS_REFINE_MAX_ROUNDS = 1
    problem = make_problem()
    candidates(problem)
    widen = {"input_validator": WIDE_VALIDATOR, "needs_custom_output_judging_function": False,
             "output_judging_function": None, "LLMGen_input": None, "RPGen_SPGen_input_generator": None,
             "HackGen_input_generator": WIDENING}
    fake_llm.reply(validator_reply(), inputs_reply(direct=["1 2\n", "5 7\n"], regular=SMALL, hacking=None),
                   "Negative and large inputs.\n```json\n" + json.dumps(widen) + "\n```")
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    r0, r1 = RefinementRound.objects.filter(run=run).order_by("number")
    assert r1.scores["tuning"]["tnr"] == 1.0 and r1.scores["tuning"]["fn"] == 1
    assert r0.chosen and not r1.chosen
    assert "round 1 ruled out: known-correct program right" in run.log and "RE on test #" in run.log
    active = TestSuite.objects.get(problem=problem, origin=TestSuite.Origin.GENERATED, status=TestSuite.Status.ACTIVE)
    assert active.pk == r0.suite_id
    assert TestSuite.objects.get(pk=r1.suite_id).status == TestSuite.Status.FAILED


def test_a_kit_whose_suite_fails_a_known_correct_program_is_not_activated() -> None:
    problem = make_problem()
    candidates(problem)
    make_kit(problem, validator=WIDE_VALIDATOR, hacking=WIDENING)
    run = start(problem, GenerationRun.Mode.FROM_KIT)
    assert run.status == GenerationRun.Status.FAILED
    assert run.failure_reason == FailureReason.CORRECT_PROGRAM_REJECTED
    assert "known-correct program right" in run.error and "RE on test #" in run.error
    assert not TestSuite.objects.filter(problem=problem, status=TestSuite.Status.ACTIVE).exists()


# -- 5. replies as models write them ----------------------------------------------------


def test_trailing_commas_and_raw_newlines_in_the_reply_are_read_without_a_retry(fake_llm: FakeLLM) -> None:
    problem = make_problem()
    first = validator_reply().replace('"output_judging_function": null', '"output_judging_function": null,')
    # Raw newlines inside the input strings and trailing commas, as models write them.
    second = ('Large values overflow 32 bits.\n```json\n{"LLMGen_input": ["1 2\n", "7 8\n",], '
              f'"RPGen_SPGen_input_generator": {json.dumps(REGULAR)}, "HackGen_input_generator": null,}}\n```')
    assert ",\n}" in first and ",]" in second
    fake_llm.reply(first, second)
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert len(fake_llm.requests) == 2
    assert not LLMCall.objects.filter(run=run).exclude(parse_error="").exists()
    assert run.kit.direct_inputs == ["1 2\n", "7 8\n"]


# -- 6. seeds, repair, limits, --from-kit ------------------------------------------------

BROKEN = '''
def gen_hacking_input_broken():
    return [1, 2][5]
'''


def test_repair_stops_when_the_model_returns_the_code_unchanged(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_REPAIR_ROUNDS = 3
    problem = make_problem()
    same = {"LLMGen_input": None, "RPGen_SPGen_input_generator": None, "HackGen_input_generator": BROKEN}
    fake_llm.reply(validator_reply(), inputs_reply(hacking=BROKEN),
                   "It looks right to me.\n```json\n" + json.dumps(same) + "\n```")
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert list(LLMCall.objects.filter(run=run, purpose__startswith="repair").values_list("purpose", flat=True)) \
        == ["repair1"]
    assert "the model returned the code unchanged; repair stopped" in run.log
    assert problem.kits.count() == 1  # no kit version for the same code


HUNGRY = '''
def gen_hacking_input_hungry():
    block = bytearray(200 * 1024 * 1024)
    return f"{len(block) % 7} 1\\n"
'''


def test_a_generator_over_the_memory_limit_is_named_as_such(settings) -> None:
    settings.HARDTESTS_GENERATOR_MEMORY_MB = 64
    problem = make_problem()
    kit = make_kit(problem, hacking=HUNGRY)
    broken = probe(sb=get_sandbox(), kit=kit)
    assert [b.function for b in broken] == ["gen_hacking_input_hungry"]
    assert "exceeds the memory limit (64 MB" in broken[0].why and "raises" not in broken[0].why


def test_from_kit_uses_the_active_suites_kit_and_reports_its_version_when_nothing_changed() -> None:
    problem = make_problem()
    make_kit(problem, hacking=HACKING)
    first = start(problem, GenerationRun.Mode.FROM_KIT)
    assert first.status == GenerationRun.Status.SUCCEEDED, first.error
    # a later kit the LLM wrote that never made a suite (a refinement round that lost)
    lost = make_kit(problem, validator="def validate_input(s):\n    return s == '1 2\\n'\n", regular="",
                    direct=["1 2\n"])
    lost.origin, lost.extra = CodeOrigin.LLM, {"stage": "refinement", "round": 1}
    lost.save()
    out = StringIO()
    call_command("generate_tests", problem.pid, "--sync", "--from-kit", stdout=out)
    summary = json.loads(out.getvalue())
    assert summary["status"] == "succeeded", summary
    assert summary["suite_version"] == first.suite.version and summary["unchanged"] is True
    run = GenerationRun.objects.get(pk=summary["run"])
    assert run.kit_id == first.suite.kit_id and "nothing changed" in run.log


def test_every_python_program_runs_with_a_fixed_hash_seed() -> None:
    # An oracle whose output is a set's order: the same in every process, so two oracles agree.
    order = "input()\nprint(' '.join(str(hash(w) % 97) for w in ('a', 'b', 'c')))\n"
    problem = make_problem("test/hash", oracles=[("python3", order), ("python3", order + "\n")])
    problem.samples = []
    problem.save()
    kit = make_kit(problem, hacking="", direct=["1 2\n", "3 4\n"], regular="")
    first, second = materialise_kit(kit=kit), materialise_kit(kit=kit)
    assert first.agreement == 1.0 and [t.output for t in first.tests] == [t.output for t in second.tests]


def test_a_judge_stricter_than_the_statement_is_sent_back_with_the_outputs_it_rejects() -> None:
    problem = ratio_problem()
    exact = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
             "    return candidate_output.split() == reference_output.split()\n")
    kit = make_kit(problem, validator=RATIO_VALIDATOR, regular=RATIO_GEN, direct=["1 3\n"], judge=exact)
    with pytest.raises(JudgeRejects, match="within the tolerance the problem allows") as rejected:
        materialise_kit(kit=kit)
    assert rejected.value.cases and rejected.value.cases[0].input == "1 3\n"
