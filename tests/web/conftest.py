"""A catalogue with one fully populated problem: two suite versions, a kit, oracles and
candidates, verdicts, a judging task history and a generation run with LLM calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from generation.models import FailureReason, GenerationRun, LLMCall
from problems.models import CodeOrigin, DifficultyLabel, Problem, Solution, Tag, TestCase, TestSuite
from problems.services import (
    NewTest,
    judge_create,
    kit_create,
    suite_activate,
    suite_add_tests,
    suite_create,
    suite_fail,
    validator_create,
    verdict_record,
)
from tests.factories import ProblemFactory, SolutionFactory, UserFactory, annotator, maintainer

HTMX = {"HTTP_HX_REQUEST": "true"}


def htmx(target: str) -> dict[str, str]:
    return {**HTMX, "HTTP_HX_TARGET": target}


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    # Facets, the kind histogram and the search-index check are cached across requests.
    cache.clear()


@pytest.fixture(autouse=True)
def _search_index(request: pytest.FixtureRequest) -> None:
    # Later migrations may remake problems_problem on SQLite and drop the search triggers;
    # the post_migrate repair puts them back, and the list tests should exercise that index.
    if "db" in request.fixturenames or "world" in request.fixturenames:
        from problems.selectors import search_index_install

        request.getfixturevalue("db")
        search_index_install()


@dataclass
class World:
    problem: Problem
    old_suite: TestSuite
    suite: TestSuite
    oracle: Solution
    good: Solution
    bad: Solution
    run: GenerationRun
    call: LLMCall
    kit: Any


def _tests(n: int, kind: str, offset: int = 0) -> list[NewTest]:
    return [NewTest(input=f"{i} {i + 1}\n", output=f"{2 * i + 1}\n", kind=kind, generator=f"gen_{kind}",
                    call_number=i) for i in range(offset, offset + n)]


@pytest.fixture
def world(db: None) -> World:
    problem = ProblemFactory(
        pid="cf/1A", title="Sum of two <b>numbers</b>", platform="codeforces",
        statement="Read $a_i$ and $b$.\n\n<script>alert(1)</script>\n\n**bold** text",
    )
    problem.tags.add(Tag.objects.create(name="math"), Tag.objects.create(name="implementation"))
    DifficultyLabel.objects.create(problem=problem, source="codeforces", level="800", score=800)
    oracle = SolutionFactory(problem=problem, name="oracle.py", reliability=1)
    good = SolutionFactory(problem=problem, name="good.py", role=Solution.Role.CANDIDATE,
                           code="print(sum(map(int, input().split())))\n")
    bad = SolutionFactory(problem=problem, name="bad.py", role=Solution.Role.CANDIDATE,
                          code="print('<script>x</script>')\n", gold_verdict=Solution.GoldVerdict.WA)
    validator = validator_create(problem=problem, code="def validate_input(s):\n    return True\n",
                                 origin=CodeOrigin.LLM, model_name="fake-model")
    judge = judge_create(problem=problem, code="def output_judging_function(i, c, r):\n    return c.split() == r.split()\n",
                         origin=CodeOrigin.LLM, model_name="fake-model")
    kit = kit_create(problem=problem, origin=CodeOrigin.LLM, validator=validator, output_judge=judge,
                     direct_inputs=["1 2\n", "3 4\n"], regular_generator="def gen_range_based_input():\n    return '1 1\\n'\n",
                     hacking_generator="def gen_hacking_input_big():\n    return '9 9\\n'\n", model_name="fake-model")
    old = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, kit=kit, validator=validator)
    suite_add_tests(suite=old, tests=_tests(3, "direct") + _tests(2, "hacking", 10))
    suite_activate(suite=old)
    new = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, kit=kit, validator=validator)
    suite_add_tests(suite=new, tests=_tests(2, "direct", 1) + _tests(2, "hacking", 10) + _tests(3, "regular", 20))
    suite_activate(suite=new)
    old.refresh_from_db()
    failed = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, kit=kit)
    suite_fail(suite=failed, note="no valid oracle")
    ordinals = list(new.tests.order_by("ordinal").values_list("ordinal", flat=True))
    for solution, verdict in ((oracle, "AC"), (good, "AC")):
        verdict_record(solution=solution, suite=new, verdict=verdict, passed=len(ordinals), total=len(ordinals),
                       complete=True, results=[{"ordinal": o, "verdict": "AC", "time_ms": 12, "wall_ms": 20,
                                                "memory_kb": 3400} for o in ordinals])
    verdict_record(solution=bad, suite=new, verdict="WA", passed=0, total=len(ordinals), complete=True,
                   results=[{"ordinal": o, "verdict": "WA", "time_ms": 9, "wall_ms": 15, "memory_kb": 3000}
                            for o in ordinals])
    verdict_record(solution=bad, suite=old, verdict="AC", passed=5, total=5, complete=True, results=[])
    run = GenerationRun.objects.create(
        problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, model_name="fake-model",
        status=GenerationRun.Status.SUCCEEDED, stage=GenerationRun.Stage.DONE, suite=new, kit=kit,
        counts={"direct": {"generated": 10, "invalid": 1, "duplicate": 0, "disagreement": 0, "kept": 2}},
        stage_seconds={"llm_validator": 1.5, "generating": 0.4}, log="line 1\n<b>line 2</b>\n",
    )
    GenerationRun.objects.create(problem=problem, mode=GenerationRun.Mode.FROM_KIT, status=GenerationRun.Status.FAILED,
                                 failure_reason=FailureReason.NO_VALID_ORACLE, stage=GenerationRun.Stage.ORACLES)
    call = LLMCall.objects.create(
        run=run, purpose="validator", model_name="fake-model",
        messages=[{"role": "system", "content": "You write validators."},
                  {"role": "user", "content": "Problem: <img src=x onerror=alert(1)>"}],
        reply="```json\n{\"input_validator\": \"<script>alert(2)</script>\"}\n```", prompt_tokens=100,
        completion_tokens=50, latency_ms=1234,
    )
    return World(problem=problem, old_suite=old, suite=new, oracle=oracle, good=good, bad=bad, run=run,
                 call=call, kit=kit)


@pytest.fixture
def maintainer_client(db: None) -> Client:
    client = Client()
    client.force_login(maintainer())
    return client


@pytest.fixture
def annotator_client(db: None) -> Client:
    client = Client()
    client.force_login(annotator())
    return client


@pytest.fixture
def user_client(db: None) -> Client:
    client = Client()
    client.force_login(UserFactory(username="reader"))
    return client


def many_problems(n: int, **fields: Any) -> list[Problem]:
    return Problem.objects.bulk_create(
        [Problem(source="bulk", pid=f"bulk/{i:04d}", title=f"Bulk problem {i}", statement=f"Statement number {i}",
                 platform=fields.get("platform", "atcoder")) for i in range(n)]
    )


__all__ = ["HTMX", "htmx", "World", "many_problems", "TestCase"]
