"""The synthesis pipeline of one GenerationRun: pre-flight -> LLM calls -> kit -> materialise -> suite.

Run by generation.jobs on the `generation` queue (and by a campaign run's materialisation job),
or in-process by `generate_tests --sync`. The run's status changes are generation.services'
(its lifecycle): every way it can end is recorded there with a reason from FailureReason; the
new suite is activated only when complete, and only if the run is still RUNNING at that
moment (a sweeper that declared the worker dead wins, and the suite is failed instead).
No LLM call is made before the pre-flight has found enough working oracles.
"""

from __future__ import annotations

import logging
import traceback

from django.db import transaction

from generation import oracle_free
from generation.asking import Conversation, judge_repair, judge_request, llm_kit
from generation.asking_testlib import llm_testlib_kit
from generation.llm import LLMConfig
from generation.materialise import (
    JudgeLenient,
    JudgeRejects,
    Materialised,
    MaterialiseError,
    ValidatorErrors,
    materialise_kit,
)
from generation.materialise.oracles import ManyAnswers
from generation.materialise.testlib import checker_judge, testlib_missing, testlib_parts
from generation.materialise.tolerance import answer_tolerance, tolerance_judge_code
from generation.materialise.types import RunFailed
from generation.models import FailureReason, GenerationRun
from generation.preflight import Preflight, preflight
from generation.recorder import RunRecorder
from generation.refine.feedback import known_correct_gate, refine_suite
from generation.refine.repair import generators_repair
from generation.refine.review import checkers_review
from generation.selectors import kit_to_materialise
from generation.services import (
    run_activate,
    run_claim,
    run_fail_recorded,
    run_succeed_unchanged,
    testlib_checker_row,
)
from problems.blobs import blob_sha256
from problems.models import CodeOrigin, Solution, TestKit, TestSuite
from problems.services import judge_create, kit_create, suite_add_tests, suite_create
from sandbox import Sandbox, SandboxUnavailable, get_sandbox

__all__ = ["RunFailed", "generation_run_execute", "open_sandbox"]

log = logging.getLogger(__name__)
SAVE_CHUNK = 500


def _kit_for(run: GenerationRun) -> TestKit:
    kit = run.kit or kit_to_materialise(run.problem)
    if kit is None:
        raise RunFailed(FailureReason.INPUT_GENERATION_FAILED,
                        "the problem has no test kit to materialise; generate from scratch first")
    if run.kit_id != kit.pk:
        GenerationRun.objects.filter(pk=run.pk).update(kit=kit)
    return TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=kit.pk)


def _unchanged_from(kit: TestKit, result: Materialised) -> TestSuite | None:
    """The active generated suite when it holds exactly these tests with the same code, else None."""
    active = (kit.problem.suites.filter(origin=TestSuite.Origin.GENERATED, status=TestSuite.Status.ACTIVE)
              .select_related("checker").first())
    if (active is None or active.test_count != len(result.tests) or active.validator_id != kit.validator_id
            or active.output_judge_id != kit.output_judge_id or active.unverified != result.unverified):
        return None
    testlib = testlib_parts(kit).checker
    if (active.checker.digest if active.checker else None) != (checker_judge(testlib).digest if testlib else None):
        return None
    ours = [(t.kind, blob_sha256(t.input), blob_sha256(t.output)) for t in result.tests]
    theirs = list(active.tests.order_by("ordinal").values_list("kind", "input_sha256", "output_sha256"))
    return active if ours == [tuple(row) for row in theirs] else None


def _build_suite(run: GenerationRun, rec: RunRecorder, kit: TestKit, result: Materialised) -> TestSuite:
    """Write the tests into a new BUILDING suite (not yet visible to judging)."""
    rec.stage(GenerationRun.Stage.SAVING)
    tests = result.tests
    testlib = testlib_parts(kit).checker
    with transaction.atomic():
        suite = suite_create(problem=run.problem, origin=TestSuite.Origin.GENERATED, kit=kit, validator=kit.validator,
                             output_judge=kit.output_judge, note=f"generation run #{run.pk} from kit v{kit.version}",
                             unverified=result.unverified)
        if testlib:
            # a C++ kit's suite is judged by its testlib checker, as a package's checker is (FAIL: SE)
            suite.checker = testlib_checker_row(problem=run.problem, code=testlib)
            suite.save(update_fields=["checker"])
        GenerationRun.objects.filter(pk=run.pk).update(suite=suite)
    for start in range(0, len(tests), SAVE_CHUNK):
        rec.check_cancel()
        suite_add_tests(suite=suite, tests=tests[start:start + SAVE_CHUNK])
    return suite


def _with_tolerance_judge(run: GenerationRun, rec: RunRecorder, kit: TestKit) -> TestKit:
    """A kit without a judging function for a problem whose answers are real numbers gets the standard
    tolerance judge (a new kit version): suites are judged as the statement accepts, not token by token."""
    tolerance = answer_tolerance(run.problem, kit)
    if kit.output_judge_id is not None or tolerance is None or testlib_parts(kit).checker:
        return kit
    with transaction.atomic():
        judge = judge_create(problem=kit.problem, code=tolerance_judge_code(tolerance), origin=CodeOrigin.IMPORTED,
                             change_note=f"standard real-number judge (tolerance {tolerance}), "
                                         f"generation run #{run.pk}")
        new = kit_create(
            problem=kit.problem, origin=kit.origin, validator=kit.validator, output_judge=judge,
            needs_output_judge=True, direct_inputs=kit.direct_inputs, regular_generator=kit.regular_generator,
            hacking_generator=kit.hacking_generator, batch_generator=kit.batch_generator, model_name=kit.model_name,
            created_by=run.created_by,
            extra={**(kit.extra or {}), "generation_run": run.pk, "stage": "tolerance", "parent_version": kit.version,
                   "float_tolerance": tolerance.bound, "float_tolerance_relative": tolerance.relative,
                   **({"languages": {**kit.extra["languages"], "checker": "python3"}}
                      if isinstance((kit.extra or {}).get("languages"), dict) else {})},
        )
        GenerationRun.objects.filter(pk=run.pk).update(kit=new)
    rec.log(f"answers are real numbers (tolerance {tolerance}) and kit v{kit.version} has no judging function: "
            f"kit v{new.version} uses the standard tolerance judge")
    return TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=new.pk)


def _materialise(run: GenerationRun, rec: RunRecorder, sb: Sandbox, kit: TestKit, flight: Preflight,
                 session: Conversation | None) -> tuple[TestKit, Materialised]:
    """Materialise. With the LLM at hand (from-scratch runs): oracles disagreeing as if several answers
    were right send the run back for a judging function once, and a judging function that rejects
    correct outputs goes back once."""
    kit = _with_tolerance_judge(run, rec, kit)
    if testlib_parts(kit).present:
        # The judge round trips ask for Python judging functions (generation.asking); a C++ kit's checker
        # is fixed by refinement instead.
        session = None
    asked_judge = repaired_judge = False
    while True:
        try:
            return kit, materialise_kit(kit=kit, progress=rec, oracles=flight.oracles)
        except ManyAnswers as exc:
            if session is None or asked_judge:
                raise
            asked_judge = True
            try:
                kit = judge_request(run, rec, sb, session, exc.cases, str(exc), exc.answers)
            except RunFailed as failed:
                if failed.reason not in (FailureReason.LLM_UNAVAILABLE, FailureReason.LLM_REPLY_INVALID):
                    raise
                raise MaterialiseError(exc.reason, f"{exc}; asked for a judging function, got none: "
                                                   f"{str(failed).splitlines()[0][:500]}") from failed
        except JudgeRejects as exc:
            if session is None or repaired_judge:
                raise
            repaired_judge = True
            rec.log(f"judge self-check failed: {str(exc).splitlines()[0]}")
            kit = judge_repair(run, rec, session, exc.cases)
        except JudgeLenient as exc:
            if session is None or repaired_judge:
                raise
            repaired_judge = True
            kit = judge_repair(run, rec, session, exc.cases, problem=f"{exc}. Fix the judging function so that it "
                               "rejects wrong answers; keep the other keys.")


def _make_kit(run: GenerationRun, rec: RunRecorder, sb: Sandbox, flight: Preflight
              ) -> tuple[TestKit, Conversation | None]:
    """Where a run chooses its mode: the kit to materialise, and the conversation when the model is at
    hand for the later round trips (judge requests and repairs, refinement); None for runs from a kit."""
    # A kit already saved by this run (the campaign LLM stage, or before a crash) is never asked again.
    if run.mode == GenerationRun.Mode.FROM_SCRATCH and run.kit_id is None and run.kit_language == "cpp":
        # C++ kit parts (testlib): compile errors go back in calls 1 and 2; the Python review and repair
        # steps do not apply to them, refinement does.
        return llm_testlib_kit(run, rec, sb, flight)
    if run.mode == GenerationRun.Mode.FROM_SCRATCH and run.kit_id is None:
        kit, session = llm_kit(run, rec, sb, flight)
        kit = checkers_review(run, rec, sb, flight, session, kit)
        return generators_repair(run, rec, sb, kit, session), session
    kit = _kit_for(run)
    rec.log(f"materialising kit v{kit.version} ({kit.get_origin_display()})")
    return kit, None


def _testlib_refusal(run: GenerationRun) -> None:
    """A run that needs testlib.h (C++ kit parts) and has none is refused before anything runs."""
    cpp = run.kit_language == "cpp" if run.mode == GenerationRun.Mode.FROM_SCRATCH and run.kit_id is None else \
        testlib_parts(run.kit or kit_to_materialise(run.problem)).present
    missing = testlib_missing() if cpp else None
    if missing:
        raise RunFailed(FailureReason.INPUT_GENERATION_FAILED, f"refused before anything runs: {missing}")


def open_sandbox() -> Sandbox:
    try:
        return get_sandbox()
    except SandboxUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - a backend that fails to start is the sandbox being unavailable
        raise SandboxUnavailable(str(exc)) from exc


def generation_run_execute(*, run_id: int, llm: LLMConfig | None = None) -> GenerationRun:
    """Run the pipeline for a QUEUED run, its LLM calls sent to `llm` (None: the settings'
    endpoint); returns the run as it ended (or as it was, if not ours)."""
    claimed = run_claim(run_id=run_id)
    run = GenerationRun.objects.select_related("problem", "kit").get(pk=run_id)
    if not claimed:
        log.info("run %s is %s, not queued; nothing to do", run_id, run.status)
        return run
    rec = RunRecorder(run, llm=llm)
    rec.start_heartbeat()
    try:
        rec.log(f"run #{run.pk} started: {run.get_mode_display()} for {run.problem.pid}")
        _testlib_refusal(run)
        sb = open_sandbox()
        if run.mode in GenerationRun.ORACLE_FREE_MODES:  # no oracle, no pre-flight: generation/oracle_free
            suite = oracle_free.execute(run, rec, sb)
            if run.judge_candidates:
                _queue_judging(rec, suite)
            return GenerationRun.objects.get(pk=run_id)
        flight = preflight(problem=run.problem, sb=sb, progress=rec)
        kit, session = _make_kit(run, rec, sb, flight)
        kit, result = _materialise(run, rec, sb, kit, flight, session)
        GenerationRun.objects.filter(pk=run.pk).update(counts=result.counts, validator_errors=result.validator_errors)
        # Refinement against the tuning candidates (from-scratch runs only: it asks the LLM).
        refined = (refine_suite(run, rec, sb, flight, session, kit, result, build=_build_suite)
                   if session is not None else None)
        unchanged = _unchanged_from(kit, result) if refined is None else None
        if unchanged is not None:
            run_succeed_unchanged(run, rec, unchanged)
        else:
            if refined is None:
                refined = _build_suite(run, rec, kit, result)
                known_correct_gate(run, rec, sb, refined)
            suite = run_activate(run, rec, refined)
            rec.log(f"suite v{suite.version} active: {suite.test_count} tests {suite.counts_by_kind}"
                    + (" (UNVERIFIED: one oracle)" if suite.unverified else ""))
            if run.judge_candidates:
                _queue_judging(rec, suite)
    except ValidatorErrors as exc:
        GenerationRun.objects.filter(pk=run_id).update(validator_errors=exc.errors)
        run_fail_recorded(rec, run_id, exc.reason, str(exc))
    except (RunFailed, MaterialiseError) as exc:
        run_fail_recorded(rec, run_id, exc.reason, str(exc))
    except SandboxUnavailable as exc:
        run_fail_recorded(rec, run_id, FailureReason.SANDBOX_ERROR, f"sandbox unavailable: {exc}")
    except Exception as exc:  # noqa: BLE001 - recorded on the row; the job itself ends cleanly
        log.exception("run %s crashed", run_id)
        run_fail_recorded(rec, run_id, FailureReason.INTERNAL_ERROR,
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
