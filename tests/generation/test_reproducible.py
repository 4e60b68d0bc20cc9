"""Reproducible materialisation, token comparison, and the shared oracle-agreement rules."""

from __future__ import annotations

import pytest

from generation.materialise import materialise_kit
from generation.materialise.inputs import generator_seed
from generation.materialise.oracles import Checker, agree, oracles_in_order
from generation.models import GenerationRun
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.judging import judge_code, suite_cache
from problems.models import CodeOrigin, Comparison, Solution
from problems.services import kit_create, solution_upsert, validator_create
from sandbox import get_sandbox
from tests.generation.conftest import (
    HACKING,
    ORACLE_CPP,
    ORACLE_PY,
    ORACLE_PY_ALT,
    REGULAR,
    VALIDATOR,
    make_problem,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]

# Uses random.Random(SEED), as prompts v2 ask, next to a v1-style generator using the module.
SEEDED = '''
import random


def gen_hacking_input_own_rng():
    rng = random.Random(SEED)
    return f"{rng.randint(0, 10**9)} {rng.randint(0, 10**9)}\\n"
'''


def make_kit(problem, *, hacking: str = HACKING):
    v = validator_create(problem=problem, code=VALIDATOR, origin=CodeOrigin.IMPORTED)
    return kit_create(problem=problem, origin=CodeOrigin.IMPORTED, validator=v, direct_inputs=["1 2\n"],
                      regular_generator=REGULAR, hacking_generator=hacking + SEEDED)


def _bodies(result) -> list[tuple]:
    return [(t.kind, t.generator, t.call_number, t.seed, t.input, t.output) for t in result.tests]


def test_the_same_kit_materialised_twice_gives_identical_suites_with_seeds_recorded() -> None:
    problem = make_problem()
    kit = make_kit(problem)
    first, second = materialise_kit(kit=kit), materialise_kit(kit=kit)
    assert _bodies(first) == _bodies(second) and len(first.tests) >= 8
    own = [t for t in first.tests if t.generator == "gen_hacking_input_own_rng"]
    assert len({t.input for t in own}) == len(own) >= 2  # different seeds per call, not one repeated input
    for test in first.tests:
        if test.generator != "LLMGen_input":
            assert test.seed == generator_seed(kit, test.generator, test.call_number)
    # another kit version with the same generators draws the same inputs (seeds do not depend on the version)
    other = make_kit(problem)
    assert [t.input for t in materialise_kit(kit=other).tests] == [t.input for t in first.tests]


def test_regenerating_from_an_unchanged_kit_says_nothing_changed() -> None:
    problem = make_problem()
    make_kit(problem)
    runs = []
    for _ in range(2):
        run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False)
        runs.append(generation_run_execute(run_id=run.pk))
    assert runs[0].status == runs[1].status == GenerationRun.Status.SUCCEEDED, runs[1].error
    assert runs[0].suite is not None and runs[1].suite is None
    assert f"nothing changed: the kit gives exactly the tests of active suite v{runs[0].suite.version}" in runs[1].log
    assert problem.suites.count() == 1
    seeds = list(runs[0].suite.tests.exclude(generator="LLMGen_input").values_list("seed", flat=True))
    assert seeds and all(isinstance(s, int) for s in seeds)


SPACED = "a, b = map(int, input().split())\nprint('  ', a + b, '  ')\nprint()\nprint()\n"


@pytest.mark.parametrize(("comparison", "verdict"), [(Comparison.TOKENS, "AC"), (Comparison.EXACT, "WA")])
def test_right_tokens_with_different_spacing_get_ac_unless_the_problem_says_exact(comparison: str,
                                                                                   verdict: str) -> None:
    from generation.pipeline import generation_run_execute

    problem = make_problem()
    make_kit(problem, hacking="")
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False)
    suite = generation_run_execute(run_id=run.pk).suite
    problem.comparison = comparison
    problem.save()
    suite_cache.clear()
    suite.refresh_from_db()
    result = judge_code(problem=problem, suite=suite, language="python3", code=SPACED, mode="all")
    assert result.verdict == verdict and result.total == suite.test_count
    assert judge_code(problem=problem, suite=suite, language="python3", code=ORACLE_PY).verdict == "AC"


def test_among_equal_reliability_compiled_oracles_come_first() -> None:
    problem = make_problem(oracles=[])
    for name, language, code in (("py", "python3", ORACLE_PY), ("cpp", "cpp", ORACLE_CPP),
                                 ("alt", "python3", ORACLE_PY_ALT)):
        solution_upsert(problem=problem, role=Solution.Role.ORACLE, language=language, code=code,
                        reliability=1 if name != "alt" else None, name=name)
    assert [s.name for s in oracles_in_order(problem)] == ["cpp", "py", "alt"]


def test_agreement_share_counts_inputs_where_one_oracle_finished_and_the_judge_decides_every_pair() -> None:
    # Crashes on "0 0": both oracles below crash there, so that input is not counted at all.
    picky = "a, b = map(int, input().split())\nassert a or b\nprint(a + b)\n"
    picky_alt = "import sys\nv = [int(x) for x in sys.stdin.read().split()]\nassert any(v)\nprint(sum(v))\n"
    problem = make_problem(oracles=[("python3", picky), ("python3", picky_alt)])
    inputs = ["1 2\n", "0 0\n", "3 4\n"]
    sb = get_sandbox()
    agreement = agree(sb=sb, problem=problem, inputs=inputs, checker=Checker(None), min_oracles=2)
    assert agreement.counted == 2 and agreement.share == 1.0 and agreement.mask == [True, False, True]
    # a judge that accepts only even answers decides agreement even where the outputs are equal
    even = ("def output_judging_function(i, c, r):\n    return c.split() == r.split() and int(r) % 2 == 0\n")
    problem2 = make_problem("test/even", oracles=[("python3", ORACLE_PY), ("python3", ORACLE_PY_ALT)])
    with pytest.raises(Exception, match="compared with itself"):
        agree(sb=sb, problem=problem2, inputs=["1 2\n", "2 2\n"], checker=Checker(even), min_oracles=2)
