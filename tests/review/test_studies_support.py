"""Builders shared by the study tests (no tests here): small problems made with factories and
problems.services, never the demo data."""

from __future__ import annotations

from typing import Any

from problems.models import CodeOrigin, Solution, TestSuite
from problems.services import (
    NewTest,
    kit_create,
    solution_upsert,
    suite_activate,
    suite_add_tests,
    suite_create,
    validator_create,
)
from review.models import Study
from review.studies import services
from tests.factories import ProblemFactory

STATEMENT = "Read two integers $a$ and $b$ ($1 \\le a, b \\le 10^9$) on one line and print $a + b$."

# Correct for the statement.
GOOD_VALIDATOR = '''def validate_input(input_str):
    parts = input_str.split()
    if len(parts) != 2:
        return False
    try:
        a, b = int(parts[0]), int(parts[1])
    except ValueError:
        return False
    return 1 <= a <= 10**9 and 1 <= b <= 10**9
'''

# Misses the lower bound: accepts negative numbers, so "-5 3" is a counterexample.
LOOSE_VALIDATOR = GOOD_VALIDATOR.replace("1 <= a <= 10**9 and 1 <= b <= 10**9", "abs(a) <= 10**9 and abs(b) <= 10**9")

ORACLE_A = "a, b = map(int, input().split())\nprint(a + b)\n"
ORACLE_B = "import sys\nx = sys.stdin.read().split()\nprint(int(x[0]) + int(x[1]))\n"
WRONG_ORACLE = "a, b = map(int, input().split())\nprint(a * b)\n"


def ensure_roles() -> None:
    """Transactional tests run after a flush that may have removed the groups a data migration made."""
    from django.contrib.auth.models import Group

    from core.permissions import ANNOTATORS, MAINTAINERS

    for name in (MAINTAINERS, ANNOTATORS):
        Group.objects.get_or_create(name=name)


def make_problem(
    *, validator: str = GOOD_VALIDATOR, oracles: tuple[str, ...] = (ORACLE_A, ORACLE_B), title: str | None = None,
    with_suite: bool = True, with_validator: bool = True,
) -> Any:
    problem = ProblemFactory(statement=STATEMENT, **({"title": title} if title else {}))
    for rank, code in enumerate(oracles, start=1):
        solution_upsert(problem=problem, role=Solution.Role.ORACLE, language="python3", code=code, reliability=rank,
                        name=f"oracle {rank}")
    v = validator_create(problem=problem, code=validator, origin=CodeOrigin.LLM) if with_validator else None
    kit = kit_create(problem=problem, origin=CodeOrigin.LLM, validator=v, direct_inputs=["1 2\n", "3 4\n"])
    if with_suite:
        suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, kit=kit, validator=v)
        suite_add_tests(suite=suite, tests=[
            NewTest(input="1 2\n", output="3\n", kind="direct", generator="LLMGen_input", call_number=0),
            NewTest(input="3 4\n", output="7\n", kind="direct", generator="LLMGen_input", call_number=1),
            NewTest(input="1000000000 1000000000\n", output="2000000000\n", kind="hacking",
                    generator="gen_hacking_input_overflow", call_number=0),
        ])
        suite_activate(suite=suite)
    return problem


def make_study(
    *, problems: list[Any], annotators: list[Any], created_by: Any = None, overlap: int = 2, seed: int = 7,
    questions: str = Study.Questions.BOTH, open_it: bool = True, name: str = "Study", guidelines: str = "",
) -> Study:
    study = services.study_create(
        name=name, created_by=created_by, guidelines=guidelines, questions=questions,
        selection=Study.Selection.LIST, problems=problems, annotators=annotators, overlap=overlap, seed=seed,
    )
    if open_it:
        study = services.study_open(study=study)
    return study
