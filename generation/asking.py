"""The LLM half of a from-scratch run: two calls -> a TestKit, with replies checked before use.

Each reply is parsed (generation.parsing) and, for the validator call, tried in the sandbox
on what is known to be true: the validator must accept every sample and reject every
regression input; the judging function must accept each sample's expected output and the
pre-flight oracles' outputs on the samples. A failing check goes back to the model with the
failing cases while HARDTESTS_LLM_REPLY_RETRIES allow, then fails the run as
`validator_invalid` or `judge_invalid`. `judge_repair` is the one further round trip made
when materialisation finds the judging function rejecting correct oracle outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction

from generation import profiles, prompting
from generation.llm import LLMUnavailable, chat
from generation.materialise import judge_sample_check, sample_pairs
from generation.materialise.inputs import run_checker_calls
from generation.materialise.oracles import MAX_CROSS_ACCEPTED, Checker, JudgeCase, cases_text, lenient_judge
from generation.materialise.types import RunFailed, SandboxClock
from generation.models import FailureReason, GenerationRun, LLMCall
from generation.parsing import (
    InputsReply,
    ReplyInvalid,
    ValidatorReply,
    parse_inputs_reply,
    parse_validator_reply,
)
from generation.preflight import Preflight
from generation.recorder import RunLost, RunRecorder
from problems.models import CodeOrigin, TestKit
from problems.services import judge_create, kit_create, validator_create
from sandbox import Sandbox

T = TypeVar("T")
# (failure reason, message for the model) or None when the reply is fine.
Review = Callable[[T], tuple[str, str] | None]


@dataclass
class Conversation:
    """The validator call's messages and final reply, kept for a judge repair."""

    messages: list[dict[str, str]] = field(default_factory=list)
    parsed: ValidatorReply | None = None
    inputs: InputsReply | None = None
    review: Review[ValidatorReply] | None = None


def ask(run: GenerationRun, rec: RunRecorder, *, purpose: str, prompt_version: str,
        messages: list[dict[str, str]], parse: Callable[[str], T],
        review: Review[T] | None = None) -> tuple[T, list[dict[str, str]]]:
    """One LLM call plus up to HARDTESTS_LLM_REPLY_RETRIES retries with the problem fed back.

    Returns the parsed reply and the conversation ending with it. A reply that parses but
    fails `review` is fed back the same way, and fails the run when the last attempt still does.
    """
    retries = max(0, settings.HARDTESTS_LLM_REPLY_RETRIES)
    last: LLMCall | None = None
    last_error = ""
    for attempt in range(retries + 1):
        label = purpose if attempt == 0 else f"{purpose}_retry{attempt}"
        try:
            reply, last = chat(run=run, purpose=label, messages=messages, prompt_version=prompt_version, llm=rec.llm)
        except LLMUnavailable as exc:
            raise RunFailed(FailureReason.LLM_UNAVAILABLE, str(exc)) from exc
        try:
            parsed = parse(reply)
        except ReplyInvalid as exc:
            last_error = str(exc)
            if last.finish_reason == "length":
                # "No JSON found" would send the model looking for the wrong mistake.
                last_error = (f"your reply was cut off at the token limit ({rec.llm.max_tokens} "
                              f"tokens) before it was complete; shorten it: keep the reasoning brief and the "
                              f"code compact ({exc})")
            LLMCall.objects.filter(pk=last.pk).update(parse_error=last_error)
            rec.log(f"{label}: reply rejected: {last_error}")
            messages = prompting.retry_messages(messages, reply, last_error)
            rec.check_cancel()
            continue
        found = review(parsed) if review is not None else None
        if found is None:
            return parsed, [*messages, {"role": "assistant", "content": reply}]
        reason, problem = found
        LLMCall.objects.filter(pk=last.pk).update(parse_error=problem)
        if attempt == retries:
            raise RunFailed(reason, f"the {purpose} reply is still wrong after {retries + 1} attempt(s): {problem}")
        rec.log(f"{label}: reply sent back: {problem}")
        messages = prompting.retry_messages(messages, reply, problem)
        rec.check_cancel()
    cut = (f"; the reply was cut off at HARDTESTS_LLM_MAX_TOKENS ({rec.llm.max_tokens}): raise it, "
           "or use a model that reasons more briefly, and run again" if last and last.finish_reason == "length" else "")
    raise RunFailed(FailureReason.LLM_REPLY_INVALID,
                    f"the {purpose} reply was invalid after {retries + 1} attempt(s): {last_error}"
                    f" (reply kept on LLM call #{last.pk if last else '?'}){cut}")


def validator_review(run: GenerationRun, rec: RunRecorder, sb: Sandbox,
                     flight: Preflight) -> Review[ValidatorReply]:
    """Try a proposed validator and judge on what we know: samples are valid and their outputs
    right, the pre-flight oracles' sample outputs are right, regression inputs are invalid."""
    problem = run.problem
    samples = sample_pairs(problem)
    inputs = [text for text, _ in samples]
    previous = problem.inputvalidators.order_by("-version").first()
    regression = [x for x in (previous.regression_inputs if previous else []) if isinstance(x, str)]
    oracle_outputs = [(i, out) for outs in flight.sample_outputs.values() for i, out in enumerate(outs)
                      if out is not None and i < len(samples)]

    def review(parsed: ValidatorReply) -> tuple[str, str] | None:
        if inputs or regression:
            rec.log(f"trying the proposed validator on {len(inputs)} sample(s) and {len(regression)} "
                    "regression input(s)")
            results = run_checker_calls(sb, parsed.input_validator, "validate_input",
                                        [(x,) for x in inputs + regression], SandboxClock())
            for i, result in enumerate(results[: len(inputs)], 1):
                if not (result.ok and result.value is True):
                    why = f"it returned {result.value!r}" if result.ok else f"it failed: {result.error}"
                    return (FailureReason.VALIDATOR_INVALID,
                            f"validate_input rejects sample input #{i}, which is valid by definition ({why}):\n"
                            f"{inputs[i - 1][:2000]!r}")
            for i, result in enumerate(results[len(inputs):], 1):
                if result.ok and result.value is True:
                    return (FailureReason.VALIDATOR_INVALID,
                            f"validate_input accepts this input, which a reviewer showed to be invalid:\n"
                            f"{regression[i - 1][:2000]!r}")
        if parsed.output_judging_function and samples:
            checker = Checker(parsed.output_judging_function, problem.comparison)
            rejected = judge_sample_check(sb, checker, samples, oracle_outputs)
            if rejected:
                return FailureReason.JUDGE_INVALID, judge_feedback(rejected)
        return None

    return review


def judge_feedback(cases: list[JudgeCase]) -> str:
    return ("output_judging_function(input_str, candidate_output, reference_output) returns False (or fails) "
            "on these cases, where the candidate output is correct (it is the reference output itself, or "
            "the output of a trusted correct solution):\n" + cases_text(cases)
            + "\nFix the judging function so that it accepts every correct output; keep the other keys.")


def llm_kit(run: GenerationRun, rec: RunRecorder, sb: Sandbox, flight: Preflight) -> tuple[TestKit, Conversation]:
    problem = run.problem
    oracle = flight.oracles[0]
    model = run.model_name or rec.llm.model
    common: dict[str, Any] = {"statement": problem.statement, "samples": problem.samples or [],
                              "time_limit_ms": problem.time_limit_ms, "memory_limit_mb": problem.memory_limit_mb,
                              "oracle_language": oracle.language, "oracle_code": oracle.code}
    rec.stage(GenerationRun.Stage.LLM_VALIDATOR)
    rec.log(f"asking {model} for a validator (reference oracle: {oracle}, rank {oracle.reliability})")
    review = validator_review(run, rec, sb, flight)
    first, convo = ask(run, rec, purpose="validator", prompt_version=prompting.VALIDATOR_PROMPT,
                       messages=prompting.validator_prompt(**common, comparison=problem.comparison),
                       parse=parse_validator_reply, review=review)
    for note in first.notes:
        rec.log(note)
    rec.log("output judging function: " + ("yes" if first.needs_output_judge else "not needed"))
    rec.stage(GenerationRun.Stage.LLM_INPUTS)
    try:  # the run's generation profile picks call 2's prompt (generation.profiles)
        version, messages = profiles.inputs_messages(profile_name=run.profile, problem=problem, common=common,
                                                     validator_code=first.input_validator,
                                                     direct_count=settings.HARDTESTS_DIRECT_INPUTS)
    except profiles.ProfileUnusable as exc:
        raise RunFailed(FailureReason.INPUT_GENERATION_FAILED, str(exc)) from exc
    second, _ = ask(run, rec, purpose="inputs", prompt_version=version, messages=messages, parse=parse_inputs_reply)
    session = Conversation(convo, first, second, review)
    return save_kit(run, rec, session), session


def save_kit(run: GenerationRun, rec: RunRecorder, session: Conversation) -> TestKit:
    problem, first, second = run.problem, session.parsed, session.inputs
    # Both replies are set when llm_kit makes the session, and only ever replaced by new replies.
    assert first is not None and second is not None
    model = run.model_name or rec.llm.model
    with transaction.atomic():
        validator = validator_create(problem=problem, code=first.input_validator, origin=CodeOrigin.LLM,
                                     model_name=model, change_note=f"generation run #{run.pk}")
        judge = (judge_create(problem=problem, code=first.output_judging_function, origin=CodeOrigin.LLM,
                              model_name=model, change_note=f"generation run #{run.pk}")
                 if first.output_judging_function else None)
        kit = kit_create(
            problem=problem, origin=CodeOrigin.LLM, validator=validator, output_judge=judge,
            needs_output_judge=first.needs_output_judge, direct_inputs=second.direct_inputs,
            regular_generator=second.regular_generator or "", hacking_generator=second.hacking_generator or "",
            model_name=model, created_by=run.created_by, extra={"generation_run": run.pk},
        )
        if not rec.owned().update(kit=kit):
            # the sweep took the run back meanwhile (its worker looked dead): the exception rolls
            # the validator, judge and kit back, so nothing of this attempt is kept
            raise RunLost(f"run {run.pk} was taken back before its kit was saved")
    rec.log(f"kit v{kit.version} saved (validator v{validator.version}"
            + (f", judge v{judge.version})" if judge else ")"))
    return TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=kit.pk)


def judge_repair(run: GenerationRun, rec: RunRecorder, session: Conversation, cases: list[JudgeCase],
                 problem: str | None = None) -> TestKit:
    """Send the judging function back once with the correct outputs it rejected (or, with `problem`, what
    it wrongly accepts); a new kit version."""
    rec.stage(GenerationRun.Stage.LLM_VALIDATOR)
    if problem is None:
        problem = judge_feedback(cases)
        rec.log(f"judging function sent back: it rejects {len(cases)} correct output(s)")
    else:
        rec.log(f"judging function sent back: {problem.splitlines()[0][:300]}")
    messages = [*session.messages, {"role": "user", "content": "Your reply could not be used: " + problem
                                    + "\n\nAnswer again: reason briefly, then give the complete JSON object "
                                    "in a ```json fenced block."}]
    fixed, convo = ask(run, rec, purpose="judge_repair", prompt_version=prompting.VALIDATOR_PROMPT,
                       messages=messages, parse=parse_validator_reply, review=session.review)
    session.messages, session.parsed = convo, fixed
    return save_kit(run, rec, session)


def _judge_request_review(sb: Sandbox, session: Conversation, cases: list[JudgeCase],
                          answers: list[tuple[str, str]]) -> Review[ValidatorReply]:
    """The call-1 self-checks, and: a judging function exists, it accepts both oracles' outputs on every
    disagreeing input (each against the other), it rejects an empty output, and it rejects most answers
    printed for other inputs. The last two keep a judge that accepts anything (or only checks an answer's
    form) from hiding oracles that truly disagree, which is an oracle bug, not several right answers."""

    def review(parsed: ValidatorReply) -> tuple[str, str] | None:
        if not parsed.output_judging_function:
            return None  # the model says the answer is unique: judge_request stops the run
        found = session.review(parsed) if session.review is not None else None
        if found is not None:
            return found
        checker = Checker(parsed.output_judging_function)
        both = [(c.input, c.candidate.encode(), c.reference.encode()) for c in cases]
        both += [(c.input, c.reference.encode(), c.candidate.encode()) for c in cases]
        rejected = [JudgeCase(t[0], t[1].decode(), t[2].decode(), why)
                    for t, (ok, why) in zip(both, checker.accepts(sb, both), strict=True) if not ok]
        if rejected:
            return FailureReason.JUDGE_INVALID, judge_feedback(rejected)
        empty = [(c.input, b"", c.reference.encode()) for c in cases if c.reference.strip()]
        accepted_empty = [t for t, (ok, _) in zip(empty, checker.accepts(sb, empty), strict=True) if ok]
        if accepted_empty:
            return (FailureReason.JUDGE_INVALID,
                    "output_judging_function accepts an empty output, which is never a correct answer here "
                    f"(input {accepted_empty[0][0][:300]!r}); it must check the candidate's answer, not accept "
                    "everything")
        lenient = lenient_judge(sb, checker, answers, cross_share=MAX_CROSS_ACCEPTED)
        return (FailureReason.JUDGE_INVALID, lenient[0]) if lenient else None

    return review


def judge_request(run: GenerationRun, rec: RunRecorder, sb: Sandbox, session: Conversation,
                  cases: list[JudgeCase], why: str, answers: list[tuple[str, str]] | None = None) -> TestKit:
    """Oracles that pass the samples disagree on most inputs and there is no judging function: ask the
    model for one, showing the disagreeing outputs (Klear sends inconsistent outputs back; HardTestGen's
    judge exists for this). A new kit version with the judge; RunFailed when the model cannot give one."""
    rec.stage(GenerationRun.Stage.LLM_VALIDATOR)
    rec.log(f"asking for a judging function: {why.splitlines()[0][:300]}")
    shown = "\n".join(f"- input {c.input[:300]!r}: one correct program printed {c.reference[:200]!r}, another "
                      f"printed {c.candidate[:200]!r}" for c in cases)
    problem = ("two programs believed correct pass the samples but print different outputs on most generated "
               "inputs. Either this problem accepts more than one correct answer, so outputs cannot be compared "
               "as text, or the answer is unique and one of the programs is wrong. Examples:\n" + shown + "\nIf "
               "several answers are correct, set needs_custom_output_judging_function to true and write "
               "output_judging_function(input_str, candidate_output, reference_output) that checks whether the "
               "candidate's answer is valid for the input (using the reference only for what every correct "
               "answer shares, such as an optimal value); it must accept both outputs above and reject wrong "
               "ones, including answers meant for other inputs. If the answer is unique, keep "
               "needs_custom_output_judging_function false and output_judging_function null: no suite will be "
               "made from a wrong program. Keep the input validator.")
    messages = [*session.messages, {"role": "user", "content": "Your reply could not be used: " + problem
                                    + "\n\nAnswer again: reason briefly, then give the complete JSON object "
                                    "in a ```json fenced block."}]
    fixed, convo = ask(run, rec, purpose="judge_request", prompt_version=prompting.VALIDATOR_PROMPT,
                       messages=messages, parse=parse_validator_reply,
                       review=_judge_request_review(sb, session, cases, answers or []))
    if not fixed.output_judging_function:
        raise RunFailed(FailureReason.OUTPUT_VERIFICATION_FAILED,
                        f"{why.splitlines()[0][:500]}; asked for a judging function, the model answers that the "
                        "answer is unique: the oracles truly disagree (fix or remove the wrong one)")
    session.messages, session.parsed = convo, fixed
    kit = save_kit(run, rec, session)
    rec.log(f"kit v{kit.version}: judging function for several right answers (accepts both oracles' outputs on "
            f"{len(cases)} disagreeing input(s))")
    return kit
