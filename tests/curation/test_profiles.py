"""Generation profiles (the verification-limits study's suite complexity levels): each run's
call 2 uses its profile's versioned prompt, showing the model exactly what the level shows, and
the reply becomes a suite through the same pipeline (fake LLM, real sandbox)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from generation.models import GenerationRun
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.models import Solution, TestSuite
from problems.services import solution_upsert
from tests.generation.conftest import (
    ORACLE_PY,
    FakeLLM,
    inputs_reply,
    make_problem,
    start_fake_llm,
    validator_reply,
)

WRONG = "a, b = map(int, input().split())\nprint((a + b) % 1000)\n"
CANDIDATE = "print(sum(map(int, input().split())))  # candidate\n"

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake_llm(settings: Any) -> Iterator[FakeLLM]:
    """tests/generation's scripted loopback server, with its settings and fewer generator calls."""
    fake, server = start_fake_llm()
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY, settings.HARDTESTS_LLM_MODEL = fake.url, "test-key", "fake-model"
    settings.HARDTESTS_LLM_TIMEOUT_S, settings.HARDTESTS_LLM_MAX_RETRIES = 5.0, 2
    settings.HARDTESTS_LLM_REPLY_RETRIES, settings.HARDTESTS_CHECKER_REVIEW = 1, False
    settings.HARDTESTS_REGULAR_CALLS, settings.HARDTESTS_STRATIFIED_CALLS, settings.HARDTESTS_HACKING_CALLS = 4, 3, 3
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def _run(problem, profile: str) -> GenerationRun:
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False, profile=profile)
    return generation_run_execute(run_id=run.pk)


def _with_candidates(pid: str):
    problem = make_problem(pid)
    solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3", code=WRONG, name="wrong.py",
                    gold_verdict=Solution.GoldVerdict.WA)
    solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3", code=CANDIDATE,
                    name="cand.py", gold_verdict=Solution.GoldVerdict.AC)
    return problem


@pytest.mark.parametrize(("profile", "shown", "hidden"), [
    ("minimal", ["Print $a+b$", "Input 1:"], [ORACLE_PY.strip(), "validate_input", WRONG.strip()]),
    ("structured", ["Print $a+b$", "Given tests", WRONG.strip()], ["validate_input"]),
    ("contrastive", ["Print $a+b$", ORACLE_PY.strip(), WRONG.strip(), "INCORRECT"], ["validate_input"]),
])
def test_each_profile_shows_its_level_and_makes_a_suite(fake_llm: FakeLLM, profile: str, shown, hidden) -> None:
    problem = _with_candidates(f"test/{profile}")
    fake_llm.reply(validator_reply(), inputs_reply(direct=["5 6\n", "999999999 1\n", "0 0\n"], regular=None,
                                                   hacking=None))
    run = _run(problem, profile)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.profile == profile
    calls = list(run.llm_calls.order_by("id"))
    assert [c.prompt_version for c in calls] == ["validator_v2", f"{profile}_v1"]
    prompt = "\n".join(m["content"] for m in fake_llm.requests[1]["messages"])
    for text in shown:
        assert text in prompt, text
    for text in hidden:
        assert text not in prompt, text
    suite = run.suite
    assert suite.status == TestSuite.Status.ACTIVE
    assert sorted(suite.tests.values_list("output_preview", flat=True)) == ["0\n", "1000000000\n", "11\n"]


def test_the_default_profile_is_hardtestgen(fake_llm: FakeLLM) -> None:
    problem = make_problem("test/default")
    fake_llm.reply(validator_reply(), inputs_reply())
    run = _run(problem, "hardtestgen")
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert [c.prompt_version for c in run.llm_calls.order_by("id")] == ["validator_v2", "inputs_v2"]


def test_contrastive_without_an_incorrect_solution_fails_with_a_reason(fake_llm: FakeLLM) -> None:
    problem = make_problem("test/nowrong")
    fake_llm.reply(validator_reply())
    run = _run(problem, "contrastive")
    assert run.status == GenerationRun.Status.FAILED
    assert run.failure_reason == "input_generation_failed" and "incorrect solution" in run.error


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown generation profile"):
        generation_run_start(problem=make_problem("test/x"), mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False,
                             profile="maximal")
