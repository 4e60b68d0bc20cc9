"""The LLM half of a from-scratch run with C++ kit parts (`generate_tests --kit-language cpp`).

The same two calls as generation.asking, with the prompts of CodeContests-O's paradigm: call 1
asks for the Python input validator (the validator filter is unchanged) and, where the answer is
not unique, a testlib checker; call 2 for direct inputs, one testlib generator and the commands
(argument lists) that run it. Each C++ program is compiled in the sandbox before it is accepted:
a compile error goes back to the model with the compiler's message through the same retry loop
as every other failed check (`ask`, HARDTESTS_LLM_REPLY_RETRIES), and a checker must also accept
every sample's expected output and the pre-flight oracles' outputs.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from generation.asking import Conversation, Review, ask, validator_review
from generation.materialise import judge_sample_check, sample_pairs
from generation.materialise.oracles import Checker, JudgeCase, cases_text
from generation.materialise.testlib import (
    LANGUAGES_KEY,
    TESTLIB_KEY,
    TestlibParts,
    checker_judge,
    compile_error,
    generator_judge,
    languages,
)
from generation.models import FailureReason, GenerationRun
from generation.parsing import (
    TestlibInputsReply,
    TestlibValidatorReply,
    ValidatorReply,
    parse_testlib_inputs_reply,
    parse_testlib_validator_reply,
)
from generation.preflight import Preflight
from generation.prompting import COMPARISON_TEXT, _messages, _samples_text
from generation.recorder import RunRecorder
from problems.models import CodeOrigin, TestKit
from problems.services import kit_create, validator_create
from sandbox import Sandbox

VALIDATOR_PROMPT = "validator_testlib_v1"
INPUTS_PROMPT = "inputs_testlib_v1"


def compile_feedback(what: str, message: str) -> str:
    return (f"the {what} does not compile (g++ -std=gnu++17 with testlib.h); the compiler says:\n{message}\n"
            f"Fix the {what} so that it compiles; keep the other keys.")


def checker_feedback(cases: list[JudgeCase]) -> str:
    return ("the checker (`checker input output answer`) does not accept these cases, where the output is correct "
            "(it is the answer itself, or the output of a trusted correct solution); its verdict and message follow "
            "each case:\n" + cases_text(cases) + "\nFix the checker so that it exits 0 (quitf(_ok, ...)) on every "
            "correct output; keep the other keys.")


def checker_review(run: GenerationRun, rec: RunRecorder, sb: Sandbox, flight: Preflight
                   ) -> Review[TestlibValidatorReply]:
    """The Python validator's checks (generation.asking), then the checker: it compiles, and it accepts
    each sample's expected output and the pre-flight oracles' outputs on the samples."""
    python_review = validator_review(run, rec, sb, flight)
    samples = sample_pairs(run.problem)
    oracle_outputs = [(i, out) for outs in flight.sample_outputs.values() for i, out in enumerate(outs)
                      if out is not None and i < len(samples)]

    def review(parsed: TestlibValidatorReply) -> tuple[str, str] | None:
        found = python_review(ValidatorReply(parsed.input_validator, False, None))
        if found is not None or parsed.checker is None:
            return found
        error = compile_error(sb, checker_judge(parsed.checker))
        if error is not None:
            rec.log(f"the checker does not compile: {error.splitlines()[0][:200] if error else ''}")
            return FailureReason.JUDGE_INVALID, compile_feedback("checker", error)
        rejected = judge_sample_check(sb, Checker(parsed.checker, language="cpp"), samples, oracle_outputs)
        if rejected:
            return FailureReason.JUDGE_INVALID, checker_feedback(rejected)
        return None

    return review


def generator_review(rec: RunRecorder, sb: Sandbox) -> Review[TestlibInputsReply]:
    def review(parsed: TestlibInputsReply) -> tuple[str, str] | None:
        if parsed.generator is None:
            return None
        error = compile_error(sb, generator_judge(parsed.generator))
        if error is None:
            return None
        rec.log(f"the generator does not compile: {error.splitlines()[0][:200]}")
        return FailureReason.INPUT_GENERATION_FAILED, compile_feedback("generator", error)

    return review


def llm_testlib_kit(run: GenerationRun, rec: RunRecorder, sb: Sandbox, flight: Preflight
                    ) -> tuple[TestKit, Conversation]:
    """Calls 1 and 2 of a C++ kit; the kit saved, and the conversation (for refinement)."""
    problem = run.problem
    oracle = flight.oracles[0]
    model = run.model_name or rec.llm.model
    common: dict[str, Any] = {"statement": problem.statement.strip(), "samples": _samples_text(problem.samples or []),
                              "time_limit_ms": problem.time_limit_ms, "memory_limit_mb": problem.memory_limit_mb,
                              "oracle_language": oracle.language, "oracle_code": oracle.code.rstrip()}
    rec.stage(GenerationRun.Stage.LLM_VALIDATOR)
    rec.log(f"asking {model} for a validator and a testlib checker (C++ kit; reference oracle: {oracle})")
    first, convo = ask(run, rec, purpose="validator", prompt_version=VALIDATOR_PROMPT,
                       messages=_messages(VALIDATOR_PROMPT, {**common, "comparison": COMPARISON_TEXT.get(
                           problem.comparison, COMPARISON_TEXT["tokens"])}),
                       parse=parse_testlib_validator_reply, review=checker_review(run, rec, sb, flight))
    for note in first.notes:
        rec.log(note)
    rec.log("testlib checker: " + ("yes" if first.checker else "not needed"))
    rec.stage(GenerationRun.Stage.LLM_INPUTS)
    second, _ = ask(run, rec, purpose="inputs", prompt_version=INPUTS_PROMPT,
                    messages=_messages(INPUTS_PROMPT, {**common, "validator_code": first.input_validator.rstrip(),
                                                       "direct_count": settings.HARDTESTS_DIRECT_INPUTS}),
                    parse=parse_testlib_inputs_reply, review=generator_review(rec, sb))
    parts = TestlibParts(generator=second.generator or "", commands=second.commands,
                         hacking_commands=second.hacking_commands, checker=first.checker or "")
    with transaction.atomic():
        validator = validator_create(problem=problem, code=first.input_validator, origin=CodeOrigin.LLM,
                                     model_name=model, change_note=f"generation run #{run.pk}")
        kit = kit_create(
            problem=problem, origin=CodeOrigin.LLM, validator=validator, output_judge=None,
            needs_output_judge=first.needs_output_judge, direct_inputs=second.direct_inputs, model_name=model,
            created_by=run.created_by,
            extra={"generation_run": run.pk, TESTLIB_KEY: parts.as_extra(),
                   LANGUAGES_KEY: languages(parts, validator=True, python_judge=False)},
        )
        GenerationRun.objects.filter(pk=run.pk).update(kit=kit)
    rec.log(f"kit v{kit.version} saved (C++ kit: testlib generator with {len(parts.commands)} + "
            f"{len(parts.hacking_commands)} hacking command(s)" + (", testlib checker)" if parts.checker else ")"))
    return TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=kit.pk), Conversation(convo)
