"""Generator repair: a generator that is broken in the LLM's first version goes back with the
evidence, and the repaired one yields its inputs. Loopback fake LLM, real sandbox."""

from __future__ import annotations

import json

import pytest

from generation.models import GenerationRun, LLMCall
from generation.pipeline import generation_run_execute
from generation.refine.repair import probe
from generation.services import generation_run_start
from problems.models import TestKit
from sandbox import get_sandbox
from tests.generation.conftest import REGULAR, FakeLLM, inputs_reply, make_problem, validator_reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]

CRASHING = '''
import random


def gen_range_based_input():
    values = [random.randint(0, 10**9)]
    return f"{values[0]} {values[3]}\\n"
'''
# Returns inputs, but always three numbers: every one is invalid.
INVALID_ONLY = '''
def gen_range_based_input():
    return "1 2 3\\n"
'''


def repair_reply(regular: str = REGULAR) -> str:
    obj = {"LLMGen_input": None, "RPGen_SPGen_input_generator": regular, "HackGen_input_generator": None}
    return "The index 3 is out of range; use two values.\n```json\n" + json.dumps(obj) + "\n```"


def run_with(fake_llm: FakeLLM, regular: str, *replies: str) -> GenerationRun:
    problem = make_problem()
    fake_llm.reply(validator_reply(), inputs_reply(regular=regular, hacking=None), *replies)
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False)
    return generation_run_execute(run_id=run.pk)


def test_a_crashing_generator_is_repaired_and_its_inputs_are_used(fake_llm: FakeLLM, client, admin_user) -> None:
    run = run_with(fake_llm, CRASHING, repair_reply())
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.suite.counts_by_kind.get("regular", 0) >= 2
    call = LLMCall.objects.get(run=run, purpose="repair1")
    assert call.prompt_version == "repair_v1"
    sent = call.messages[-1]["content"]
    assert "gen_range_based_input" in sent and "IndexError" in sent and "values[3]" in sent
    kits = list(TestKit.objects.filter(problem=run.problem).order_by("version"))
    assert [k.extra.get("stage") for k in kits] == [None, "repair"]
    assert kits[1].extra["parent_version"] == kits[0].version and "values[3]" not in kits[1].regular_generator
    assert run.suite.kit_id == kits[1].pk
    client.force_login(admin_user)
    page = client.get(f"/problems/{run.problem.pk}/kit/").content.decode()
    chain = page.split('id="kit-chain"', 1)[1]
    assert f'data-kit-version="{kits[1].version}"' in chain and 'data-origin="repair"' in chain
    assert 'data-origin="LLM"' in chain and f"from v{kits[0].version}" in chain


def test_a_generator_with_only_invalid_inputs_goes_back_with_the_validator_answer(fake_llm: FakeLLM) -> None:
    run = run_with(fake_llm, INVALID_ONLY, repair_reply())
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    sent = LLMCall.objects.get(run=run, purpose="repair1").messages[-1]["content"]
    assert "validate_input -> False" in sent and "1 2 3" in sent
    assert run.suite.counts_by_kind.get("regular", 0) >= 2


def test_repair_stops_after_the_configured_rounds(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_REPAIR_ROUNDS = 2
    still_crashing = CRASHING.replace("values[3]", "values[4]")  # changed, yet still broken
    run = run_with(fake_llm, CRASHING, repair_reply(still_crashing), repair_reply(CRASHING))
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error  # the direct inputs still make a suite
    assert list(LLMCall.objects.filter(run=run, purpose__startswith="repair").values_list("purpose", flat=True)) \
        == ["repair1", "repair2"]
    assert run.suite.counts_by_kind.get("regular", 0) == 0
    assert "still broken after 2 repair round(s)" in run.log


def test_working_generators_make_no_repair_call(fake_llm: FakeLLM) -> None:
    run = run_with(fake_llm, REGULAR)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert not LLMCall.objects.filter(run=run, purpose__startswith="repair").exists()
    assert probe(sb=get_sandbox(), kit=run.kit) == []
