"""The synthesis pipeline of one GenerationRun: LLM calls -> kit -> materialise -> suite.

Run by generation.jobs on the `generation` queue, or in-process by `generate_tests --sync`.
Every way it can end is recorded on the run with a reason from FailureReason; the new
suite is activated only when complete, and only if the run is still RUNNING at that
moment (a sweeper that declared the worker dead wins, and the suite is failed instead).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from generation import prompting
from generation.llm import LLMUnavailable, chat
from generation.materialise import MaterialiseError, materialise_kit
from generation.materialise.inputs import run_checker_calls
from generation.materialise.oracles import oracles_in_order
from generation.materialise.types import SandboxClock
from generation.models import FailureReason, GenerationRun, LLMCall
from generation.parsing import ReplyInvalid, ValidatorReply, parse_inputs_reply, parse_validator_reply
from generation.runs import RunRecorder, run_fail
from problems.models import SUPPORTED_LANGUAGES, CodeOrigin, Solution, TestKit, TestSuite
from problems.services import (
    judge_create,
    kit_create,
    suite_activate,
    suite_add_tests,
    suite_create,
    suite_fail,
    validator_create,
)
from sandbox import SandboxUnavailable, get_sandbox

log = logging.getLogger(__name__)
T = TypeVar("T")
SAVE_CHUNK = 500


class RunFailed(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _reference_oracle(run: GenerationRun) -> Solution:
    for solution in oracles_in_order(run.problem):
        if solution.language in SUPPORTED_LANGUAGES:
            return solution
    raise RunFailed(FailureReason.NO_VALID_ORACLE, "the problem has no oracle in a supported language")


def _ask(run: GenerationRun, rec: RunRecorder, *, purpose: str, prompt_version: str,
         messages: list[dict[str, str]], parse: Callable[[str], T],
         review: Callable[[T], str | None] | None = None) -> T:
    """One LLM call plus up to HARDTESTS_LLM_REPLY_RETRIES retries with the parse error fed back.

    `review` may find a problem in a well-formed reply (a validator that rejects a sample);
    that is fed back the same way while retries remain, and only logged on the last attempt.
    """
    retries = max(0, settings.HARDTESTS_LLM_REPLY_RETRIES)
    last: LLMCall | None = None
    for attempt in range(retries + 1):
        label = purpose if attempt == 0 else f"{purpose}_retry{attempt}"
        try:
            reply, last = chat(run=run, purpose=label, messages=messages, prompt_version=prompt_version)
        except LLMUnavailable as exc:
            raise RunFailed(FailureReason.LLM_UNAVAILABLE, str(exc)) from exc
        try:
            parsed = parse(reply)
        except ReplyInvalid as exc:
            LLMCall.objects.filter(pk=last.pk).update(parse_error=str(exc))
            rec.log(f"{label}: reply rejected: {exc}")
            messages = prompting.retry_messages(messages, reply, str(exc))
            rec.check_cancel()
            continue
        problem = review(parsed) if review is not None else None
        if problem is None:
            return parsed
        if attempt == retries:
            rec.log(f"{label}: warning: {problem}")
            return parsed
        LLMCall.objects.filter(pk=last.pk).update(parse_error=problem)
        rec.log(f"{label}: reply sent back: {problem}")
        messages = prompting.retry_messages(messages, reply, problem)
        rec.check_cancel()
    raise RunFailed(FailureReason.LLM_REPLY_INVALID,
                    f"the {purpose} reply was invalid after {retries + 1} attempt(s): {last.parse_error if last else ''}"
                    f" (reply kept on LLM call #{last.pk if last else '?'})")


def _validator_review(run: GenerationRun, rec: RunRecorder) -> Callable[[ValidatorReply], str | None]:
    """Try a proposed validator on what we know: samples are valid, regression inputs are not."""
    problem = run.problem
    samples = [s["input"] for s in problem.samples or [] if isinstance(s, dict) and isinstance(s.get("input"), str)]
    previous = problem.inputvalidators.order_by("-version").first()
    regression = [x for x in (previous.regression_inputs if previous else []) if isinstance(x, str)]

    def review(parsed: ValidatorReply) -> str | None:
        if not samples and not regression:
            return None
        rec.log(f"trying the proposed validator on {len(samples)} sample(s) and {len(regression)} "
                "regression input(s)")
        results = run_checker_calls(get_sandbox(), parsed.input_validator, "validate_input",
                                    [(x,) for x in samples + regression], SandboxClock())
        for i, result in enumerate(results[: len(samples)], 1):
            if not (result.ok and result.value is True):
                why = f"it returned {result.value!r}" if result.ok else f"it failed: {result.error}"
                return (f"validate_input rejects sample input #{i}, which is valid by definition ({why}):\n"
                        f"{samples[i - 1][:2000]!r}")
        for i, result in enumerate(results[len(samples):], 1):
            if result.ok and result.value is True:
                return (f"validate_input accepts this input, which a reviewer showed to be invalid:\n"
                        f"{regression[i - 1][:2000]!r}")
        return None

    return review


def _llm_kit(run: GenerationRun, rec: RunRecorder) -> TestKit:
    problem = run.problem
    oracle = _reference_oracle(run)
    model = run.model_name or settings.HARDTESTS_LLM_MODEL
    common = {"statement": problem.statement, "samples": problem.samples or [],
              "time_limit_ms": problem.time_limit_ms, "memory_limit_mb": problem.memory_limit_mb,
              "oracle_language": oracle.language, "oracle_code": oracle.code}
    rec.stage(GenerationRun.Stage.LLM_VALIDATOR)
    rec.log(f"asking {model} for a validator (reference oracle: {oracle}, rank {oracle.reliability})")
    first = _ask(run, rec, purpose="validator", prompt_version=prompting.VALIDATOR_PROMPT,
                 messages=prompting.validator_prompt(**common), parse=parse_validator_reply,
                 review=_validator_review(run, rec))
    for note in first.notes:
        rec.log(note)
    rec.log("output judging function: " + ("yes" if first.needs_output_judge else "not needed"))
    rec.stage(GenerationRun.Stage.LLM_INPUTS)
    second = _ask(run, rec, purpose="inputs", prompt_version=prompting.INPUTS_PROMPT,
                  messages=prompting.inputs_prompt(**common, validator_code=first.input_validator,
                                                   direct_count=settings.HARDTESTS_DIRECT_INPUTS),
                  parse=parse_inputs_reply)
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
        GenerationRun.objects.filter(pk=run.pk).update(kit=kit)
    rec.log(f"kit v{kit.version} saved (validator v{validator.version}"
            + (f", judge v{judge.version})" if judge else ")"))
    return kit


def _kit_for(run: GenerationRun) -> TestKit:
    kit = run.kit or run.problem.kits.order_by("-version").first()
    if kit is None:
        raise RunFailed(FailureReason.INPUT_GENERATION_FAILED,
                        "the problem has no test kit to materialise; generate from scratch first")
    if run.kit_id != kit.pk:
        GenerationRun.objects.filter(pk=run.pk).update(kit=kit)
    return TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=kit.pk)


def _save_suite(run: GenerationRun, rec: RunRecorder, kit: TestKit, tests: list) -> TestSuite:
    rec.stage(GenerationRun.Stage.SAVING)
    with transaction.atomic():
        suite = suite_create(problem=run.problem, origin=TestSuite.Origin.GENERATED, kit=kit, validator=kit.validator,
                             output_judge=kit.output_judge, note=f"generation run #{run.pk} from kit v{kit.version}")
        GenerationRun.objects.filter(pk=run.pk).update(suite=suite)
    for start in range(0, len(tests), SAVE_CHUNK):
        rec.check_cancel()
        suite_add_tests(suite=suite, tests=tests[start:start + SAVE_CHUNK])
    rec.check_cancel()
    with transaction.atomic():
        # The run must still be ours: if a sweeper declared the worker dead, it has failed
        # the run and this suite stays unused.
        finished = GenerationRun.objects.filter(pk=run.pk, status=GenerationRun.Status.RUNNING,
                                                cancel_requested=False).update(
            status=GenerationRun.Status.SUCCEEDED, stage=GenerationRun.Stage.DONE, finished_at=timezone.now(),
            stage_seconds=rec.finish_stages(),
        )
        if finished == 1:
            suite = suite_activate(suite=suite)
    if finished != 1:
        suite_fail(suite=suite, note=f"generation run #{run.pk} was cancelled or declared dead before activation")
        raise RunFailed(FailureReason.CANCELLED, "the run was cancelled or declared dead before activation")
    return suite


def execute(run_id: int) -> GenerationRun:
    """Run the pipeline for a QUEUED run; returns the run as it ended (or as it was, if not ours)."""
    now = timezone.now()
    claimed = GenerationRun.objects.filter(pk=run_id, status=GenerationRun.Status.QUEUED).update(
        status=GenerationRun.Status.RUNNING, started_at=now, heartbeat_at=now
    )
    run = GenerationRun.objects.select_related("problem", "kit").get(pk=run_id)
    if claimed != 1:
        log.info("run %s is %s, not queued; nothing to do", run_id, run.status)
        return run
    rec = RunRecorder(run)
    rec.start_heartbeat()
    try:
        rec.log(f"run #{run.pk} started: {run.get_mode_display()} for {run.problem.pid}")
        # A kit already saved by this run (the campaign LLM stage, or before a crash) is never asked again.
        if run.mode == GenerationRun.Mode.FROM_SCRATCH and run.kit_id is None:
            kit = _llm_kit(run, rec)
            kit = TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=kit.pk)
        else:
            kit = _kit_for(run)
            rec.log(f"materialising kit v{kit.version} ({kit.get_origin_display()})")
        result = materialise_kit(kit=kit, progress=rec)
        GenerationRun.objects.filter(pk=run.pk).update(counts=result.counts)
        suite = _save_suite(run, rec, kit, result.tests)
        rec.log(f"suite v{suite.version} active: {suite.test_count} tests {suite.counts_by_kind}")
        if run.judge_candidates:
            _queue_judging(rec, suite)
    except (RunFailed, MaterialiseError) as exc:
        _record_failure(rec, run_id, exc.reason, str(exc))
    except SandboxUnavailable as exc:
        _record_failure(rec, run_id, FailureReason.SANDBOX_ERROR, f"sandbox unavailable: {exc}")
    except Exception as exc:  # noqa: BLE001 - recorded on the row; the job itself ends cleanly
        log.exception("run %s crashed", run_id)
        _record_failure(rec, run_id, FailureReason.INTERNAL_ERROR,
                        f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-4000:]}")
    finally:
        rec.stop_heartbeat()
    return GenerationRun.objects.get(pk=run_id)


def _queue_judging(rec: RunRecorder, suite: TestSuite) -> None:
    """Queue the candidates' judging on the `sandbox` queue; the run has already succeeded."""
    try:
        from problems.jobs import judging_enqueue

        candidates = list(suite.problem.solutions.filter(role=Solution.Role.CANDIDATE))
        if candidates:
            with transaction.atomic():
                count = judging_enqueue(suite=suite, solutions=candidates)
            rec.log(f"queued judging of {count} candidate(s) against suite v{suite.version}")
    except Exception as exc:  # noqa: BLE001 - the suite is built; judging can be asked for again
        log.warning("run %s: could not queue judging", rec.run_id, exc_info=True)
        rec.log(f"warning: could not queue judging of the candidates: {exc}")


def _record_failure(rec: RunRecorder, run_id: int, reason: str, message: str) -> None:
    cancelled = reason == FailureReason.CANCELLED
    try:
        rec.log(("cancelled: " if cancelled else f"failed ({reason}): ") + message.splitlines()[0][:1000])
    except Exception:  # noqa: BLE001 - the failure itself matters more than its log line
        log.warning("run %s: could not write the log", run_id, exc_info=True)
    GenerationRun.objects.filter(pk=run_id).update(stage_seconds=rec.finish_stages())
    run_fail(run_id=run_id, reason=reason, error=message,
             status=GenerationRun.Status.CANCELLED if cancelled else GenerationRun.Status.FAILED)
