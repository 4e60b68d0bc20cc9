"""Checker review, the second stage of call 1 (Klear-CodeTest): the LLM reviews its validator and
judging function against concrete cases and may revise them.

The cases are the samples with their expected outputs, the pre-flight oracles' outputs on them,
and the direct inputs with what the validator answered (the rejected ones first). The reply is
{validator_ok, judge_ok, problems, input_validator?, output_judging_function?}. A revision goes
through the same self-checks as call 1 (asking.validator_review) and, when it fails them, back to
the model while HARDTESTS_LLM_REPLY_RETRIES allow; a revision that never passes is dropped and the
original checkers stay. A passing revision is a new kit version (extra["stage"] = "review").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from generation.asking import Conversation, ask
from generation.materialise import sample_pairs
from generation.materialise.inputs import run_checker_calls
from generation.materialise.types import RunFailed, SandboxClock
from generation.models import FailureReason, GenerationRun
from generation.parsing import ReplyInvalid, ValidatorReply, extract_json
from generation.preflight import Preflight
from generation.recorder import RunRecorder
from generation.refine.repair import prompt_messages
from problems.models import CodeOrigin, TestKit
from problems.services import judge_create, kit_create, validator_create
from sandbox import Sandbox

REVIEW_PROMPT = "review_v1"
REVIEW_KEYS = ("validator_ok", "judge_ok", "problems", "input_validator", "output_judging_function")
MAX_CASES = 8
PREVIEW = 600


@dataclass
class Verdict:
    validator_ok: bool
    judge_ok: bool
    problems: list[str] = field(default_factory=list)
    input_validator: str | None = None
    output_judging_function: str | None = None


def parse_review_reply(reply: str) -> Verdict:
    data = extract_json(reply, REVIEW_KEYS)
    for key in ("validator_ok", "judge_ok"):
        if not isinstance(data.get(key), bool):
            raise ReplyInvalid(f"'{key}' must be true or false")
    problems = data.get("problems") or []
    if not isinstance(problems, list):
        raise ReplyInvalid("'problems' must be a list of strings")
    verdict = Verdict(data["validator_ok"], data["judge_ok"], [str(p)[:500] for p in problems])
    for key, function in (("input_validator", "validate_input"), ("output_judging_function", "output_judging_function")):
        code = data.get(key)
        if code is None or (isinstance(code, str) and not code.strip()):
            continue
        if not isinstance(code, str) or function not in code:
            raise ReplyInvalid(f"'{key}' must be Python source defining {function}, or null")
        setattr(verdict, key, code)
    if not verdict.validator_ok and verdict.input_validator is None:
        raise ReplyInvalid("validator_ok is false but no revised 'input_validator' is given")
    if not verdict.judge_ok and verdict.output_judging_function is None:
        raise ReplyInvalid("judge_ok is false but no revised 'output_judging_function' is given")
    return verdict


def _cases(sb: Sandbox, kit: TestKit, flight: Preflight) -> str:
    problem = kit.problem
    samples = sample_pairs(problem)
    parts = []
    for i, (text, expected) in enumerate(samples[:MAX_CASES], 1):
        outs = [out for outs in flight.sample_outputs.values() if len(outs) >= i
                for out in (outs[i - 1],) if out is not None]
        oracle = outs[0].decode("utf-8", "replace")[:PREVIEW] if outs else "(none)"
        parts.append(f"Sample {i} (valid by definition): input\n```\n{text[:PREVIEW]}\n```\nexpected output\n```\n"
                     f"{expected[:PREVIEW]}\n```\na trusted correct program's output\n```\n{oracle}\n```")
    direct = [t for t in kit.direct_inputs or [] if isinstance(t, str)]
    if kit.validator is not None and direct:
        results = run_checker_calls(sb, kit.validator.code, "validate_input", [(t,) for t in direct], SandboxClock())
        answered = [(t, repr(r.value) if r.ok else f"error: {(r.error or '')[-200:]}")
                    for t, r in zip(direct, results, strict=True)]
        answered.sort(key=lambda pair: pair[1] == "True")  # rejected (and failing) first
        for text, answer in answered[:MAX_CASES]:
            parts.append(f"Input written for the tests; validate_input returned {answer}:\n```\n{text[:PREVIEW]}\n```")
    return "\n\n".join(parts) or "(no cases)"


def _new_kit(run: GenerationRun, kit: TestKit, verdict: Verdict) -> TestKit:
    model = run.model_name or settings.HARDTESTS_LLM_MODEL
    note = f"generation run #{run.pk}, checker review: " + "; ".join(verdict.problems)[:200]
    with transaction.atomic():
        validator = kit.validator
        if verdict.input_validator:
            validator = validator_create(problem=kit.problem, code=verdict.input_validator, origin=CodeOrigin.LLM,
                                         model_name=model, change_note=note)
        judge = kit.output_judge
        if verdict.output_judging_function:
            judge = judge_create(problem=kit.problem, code=verdict.output_judging_function, origin=CodeOrigin.LLM,
                                 model_name=model, change_note=note)
        new = kit_create(
            problem=kit.problem, origin=CodeOrigin.LLM, validator=validator, output_judge=judge,
            needs_output_judge=kit.needs_output_judge or judge is not None, direct_inputs=kit.direct_inputs,
            regular_generator=kit.regular_generator, hacking_generator=kit.hacking_generator,
            batch_generator=kit.batch_generator, model_name=model, created_by=run.created_by,
            extra={"generation_run": run.pk, "stage": "review", "parent_version": kit.version,
                   "changed": [k for k in ("input_validator", "output_judging_function") if getattr(verdict, k)],
                   "about": verdict.problems[:20]},
        )
        GenerationRun.objects.filter(pk=run.pk).update(kit=new)
    return TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=new.pk)


def checkers_review(run: GenerationRun, rec: RunRecorder, sb: Sandbox, flight: Preflight,
                    session: Conversation | None, kit: TestKit) -> TestKit:
    if not settings.HARDTESTS_CHECKER_REVIEW or session is None or session.review is None:
        return kit
    check = session.review

    def self_check(verdict: Verdict) -> tuple[str, str] | None:
        if verdict.input_validator is None and verdict.output_judging_function is None:
            return None
        proposed = ValidatorReply(
            input_validator=verdict.input_validator or (kit.validator.code if kit.validator else ""),
            needs_output_judge=kit.needs_output_judge or bool(verdict.output_judging_function),
            output_judging_function=verdict.output_judging_function
            or (kit.output_judge.code if kit.output_judge else None))
        found = check(proposed)
        return None if found is None else (found[0], "your revision fails a check: " + found[1])

    rec.stage(GenerationRun.Stage.LLM_VALIDATOR)
    rec.log("asking for a review of the validator and judging function against concrete cases")
    messages = prompt_messages(REVIEW_PROMPT, {
        "statement": kit.problem.statement.strip(),
        "validator_code": (kit.validator.code if kit.validator else "(none)").rstrip(),
        "judge_code": (kit.output_judge.code if kit.output_judge else
                       f"(none: outputs are compared as {kit.problem.comparison})").rstrip(),
        "cases": _cases(sb, kit, flight),
    })
    try:
        verdict, _ = ask(run, rec, purpose="review", prompt_version=REVIEW_PROMPT, messages=messages,
                         parse=parse_review_reply, review=self_check)
    except RunFailed as exc:
        if exc.reason == FailureReason.CANCELLED:
            raise
        # The originals passed the self-checks already; a review that cannot help changes nothing.
        rec.log(f"checker review not applied ({exc.reason}): {str(exc).splitlines()[0][:300]}")
        return kit
    if verdict.input_validator is None and verdict.output_judging_function is None:
        rec.log("checker review: validator and judging function kept"
                + (f" ({'; '.join(verdict.problems)[:300]})" if verdict.problems else ""))
        return kit
    kit = _new_kit(run, kit, verdict)
    rec.log(f"kit v{kit.version}: checker review revised "
            + ", ".join(k for k in ("input_validator", "output_judging_function") if getattr(verdict, k))
            + " (passed the self-checks)")
    if isinstance(session.parsed, ValidatorReply):
        session.parsed = ValidatorReply(kit.validator.code if kit.validator else "", kit.needs_output_judge,
                                        kit.output_judge.code if kit.output_judge else None)
    return kit
