"""HardTests appendix A.7: a suite for a problem with no human solution.

The LLM writes a brute force (exhaustive, slow, obviously correct), an efficient solution, an
input validator, a judging function where one is needed, small edge-case input generators and
one maximum-size input generator. Before any output is trusted:

1. the brute force must reproduce every sample of the statement (judged with the judging
   function when there is one); a brute force that does not goes back to the model, and the
   run fails as `brute_force_rejected` when it still does not;
2. on the small inputs, a second brute force sampled independently (a fresh conversation) or
   the efficient solution must agree with it on at least HARDTESTS_ORACLE_AGREEMENT of the
   inputs where one finished (the first one that passes the samples and agrees wins); only the
   inputs where both finished and agree are kept; no agreeing program: `brute_force_unconfirmed`.

The maximum-size input, if the validator accepts it, becomes a `time_only` test: passed by
ending normally within the limits, never compared with anything.
"""

from __future__ import annotations

import ast

from django.conf import settings
from django.db import transaction

from core import pysource
from generation.asking import Review, ask, judge_feedback
from generation.materialise import judge_sample_check, sample_pairs
from generation.materialise.batching import call_many
from generation.materialise.inputs import (
    MAX_INPUT_BYTES,
    drop_duplicates,
    generator_seed,
    run_checker_calls,
    validate_candidates,
)
from generation.materialise.oracles import Checker, compare_runs, self_check
from generation.materialise.tolerance import answer_tolerance, tolerance_judge_code
from generation.materialise.types import (
    Candidate,
    MaterialiseError,
    RunFailed,
    SandboxClock,
    Tally,
    generator_limits,
)
from generation.models import FailureReason, GenerationRun
from generation.oracle_free.common import A7, Built, brute_force_limits, model_program, run_program
from generation.oracle_free.replies import (
    A7_PROMPT,
    MAX_FUNCTION,
    SECOND_BRUTE_PROMPT,
    A7Reply,
    a7_prompt,
    parse_a7_reply,
    parse_brute_reply,
    second_brute_prompt,
)
from generation.recorder import RunRecorder
from problems.judging import TIME_ONLY, limits_for
from problems.models import CodeOrigin, InputValidator, OutputJudge, Problem, Solution, TestCase, TestKit
from problems.services import NewTest, judge_create, kit_create, validator_create
from sandbox import CallResult, Sandbox, Verdict

EDGE = TestCase.Kind.EDGE
# What a maintainer can do after a refused brute force (a run failure says it).
NEXT_STEP = ("Next: start another oracle-free run (a new sample of the programs; the problem page's regenerate "
             "form), or add a human oracle and run from scratch.")


SAME = "the same program as the brute force: not an independent check"


def same_program(a: str, b: str) -> bool:
    """Whether two Python programs are one program (layout and comments aside): a model asked twice at a
    low temperature may well answer with the same code, and a program always agrees with itself."""
    try:
        return ast.dump(pysource.parse(a)) == ast.dump(pysource.parse(b))
    except (SyntaxError, ValueError):
        return a.strip() == b.strip()


def sample_failures(sb: Sandbox, code: str, samples: list[tuple[str, str]], checker: Checker,
                    problem: Problem) -> list[str]:
    """Why a program fails the statement's samples (empty when it reproduces every one)."""
    if not samples:
        return []
    run, note = run_program(sb, model_program(code, "sample check"), [s[0] for s in samples],
                            brute_force_limits(problem), checker.clock)
    if run is None:
        return [note]
    wrong: list[str] = []
    finished = [(i, out) for i, out in enumerate(run.outputs) if out is not None]
    wrong += [f"sample #{i + 1}: it did not finish normally (crash or time limit)"
              for i, out in enumerate(run.outputs) if out is None]
    triples = [(samples[i][0], out, samples[i][1].encode()) for i, out in finished]
    for (i, out), (ok, why) in zip(finished, checker.accepts(sb, triples), strict=True):
        if not ok:
            wrong.append(f"sample #{i + 1}: input {samples[i][0][:300]!r}, expected {samples[i][1][:200]!r}, "
                         f"it printed {out.decode('utf-8', 'replace')[:200]!r}" + (f" ({why})" if why else ""))
    return wrong


def lenient_judge_cases(sb: Sandbox, checker: Checker, samples: list[tuple[str, str]]) -> list[str]:
    """Wrong outputs a judging function accepts: an empty output, and another sample's output that
    differs token for token. With no oracle in the loop, a judge that accepts anything would pass
    a wrong brute force, confirm it, and then reward every program that runs."""
    if checker.judge_code is None:
        return []
    triples = [(text, b"", out.encode()) for text, out in samples if out.strip()]
    for i, (text, out) in enumerate(samples):
        for j, (_, other) in enumerate(samples):
            if i != j and other.split() != out.split():
                triples.append((text, other.encode(), out.encode()))
                break
    return [f"input {t[0][:200]!r}: it accepts {t[1].decode('utf-8', 'replace')[:100]!r} where the answer is "
            f"{t[2].decode('utf-8', 'replace')[:100]!r}"
            for t, (ok, _) in zip(triples, checker.accepts(sb, triples), strict=True) if ok]


def _review(sb: Sandbox, problem: Problem, samples: list[tuple[str, str]]) -> Review[A7Reply]:
    """The validator accepts every sample, the judge accepts their outputs, the brute force reproduces them."""

    def review(parsed: A7Reply) -> tuple[str, str] | None:
        if not samples:
            return None
        results = run_checker_calls(sb, parsed.input_validator, "validate_input", [(s[0],) for s in samples],
                                    SandboxClock())
        for i, result in enumerate(results, 1):
            if not (result.ok and result.value is True):
                why = f"it returned {result.value!r}" if result.ok else f"it failed: {result.error}"
                return (FailureReason.VALIDATOR_INVALID, f"validate_input rejects sample input #{i}, which is valid "
                        f"by definition ({why}):\n{samples[i - 1][0][:2000]!r}")
        judge = parsed.output_judging_function
        checker = Checker(judge, problem.comparison, tolerance=None if judge else answer_tolerance(problem))
        rejected = judge_sample_check(sb, checker, samples)
        if rejected:
            return FailureReason.JUDGE_INVALID, judge_feedback(rejected)
        lenient = lenient_judge_cases(sb, checker, samples)
        if lenient:
            return (FailureReason.JUDGE_INVALID, "output_judging_function accepts wrong outputs:\n- "
                    + "\n- ".join(lenient[:5]) + "\nIt must accept exactly the correct outputs.")
        wrong = sample_failures(sb, parsed.brute_force, samples, checker, problem)
        if wrong:
            return (FailureReason.BRUTE_FORCE_REJECTED, "brute_force_solution does not reproduce the statement's "
                    "samples, so its outputs cannot be trusted:\n- " + "\n- ".join(wrong[:5]))
        return None

    return review


def _second_review(sb: Sandbox, problem: Problem, samples: list[tuple[str, str]],
                   judge: str | None) -> Review[str]:
    def review(code: str) -> tuple[str, str] | None:
        checker = Checker(judge, problem.comparison, tolerance=None if judge else answer_tolerance(problem))
        wrong = sample_failures(sb, code, samples, checker, problem)
        if wrong:
            return (FailureReason.BRUTE_FORCE_REJECTED, "brute_force_solution does not reproduce the samples:\n- "
                    + "\n- ".join(wrong[:5]))
        return None

    return review


def _save_kit(run: GenerationRun, rec: RunRecorder, reply: A7Reply, references: dict[str, str]) -> TestKit:
    problem = run.problem
    model = run.model_name or rec.llm.model
    with transaction.atomic():
        validator = validator_create(problem=problem, code=reply.input_validator, origin=CodeOrigin.LLM,
                                     model_name=model, change_note=f"oracle-free run #{run.pk}")
        judge = (judge_create(problem=problem, code=reply.output_judging_function,
                              origin=CodeOrigin.IMPORTED if reply.standard_judge else CodeOrigin.LLM,
                              model_name=model, change_note=f"oracle-free run #{run.pk}")
                 if reply.output_judging_function else None)
        # The model's programs stay in the kit, never as Solutions (which later runs would trust as oracles).
        kit = kit_create(problem=problem, origin=CodeOrigin.LLM, validator=validator, output_judge=judge,
                         needs_output_judge=reply.needs_output_judge, model_name=model, created_by=run.created_by,
                         extra={"generation_run": run.pk, "mode": "oracle_free", "brute_force": reply.brute_force,
                                "efficient_solution": reply.efficient, "edge_input_generator": reply.edge_generator,
                                "max_input_generator": reply.max_generator, "cross_check_programs": references})
        GenerationRun.objects.filter(pk=run.pk).update(kit=kit)
    rec.log(f"kit v{kit.version} saved (validator v{validator.version}" + (f", judge v{judge.version})" if judge else ")"))
    return TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=kit.pk)


def _memory_kit(run: GenerationRun, reply: A7Reply) -> TestKit:
    """The kit unsaved (an evaluation must not add kit versions: the latest kit's judge judges the
    problem's other suites)."""
    problem = run.problem
    previous = problem.inputvalidators.order_by("-version").first()
    validator = InputValidator(problem=problem, version=0, code=reply.input_validator, origin=CodeOrigin.LLM,
                               regression_inputs=list(previous.regression_inputs) if previous else [])
    judge = (OutputJudge(problem=problem, version=0, code=reply.output_judging_function, origin=CodeOrigin.LLM)
             if reply.output_judging_function else None)
    return TestKit(problem=problem, version=0, origin=CodeOrigin.LLM, validator=validator, output_judge=judge,
                   needs_output_judge=reply.needs_output_judge, extra={"mode": "oracle_free", "evaluation": run.pk})


def _usable(result: CallResult) -> bool:
    return result.ok and isinstance(result.value, str) and len(result.value.encode("utf-8")) <= MAX_INPUT_BYTES


def _edge_candidates(sb: Sandbox, kit: TestKit, reply: A7Reply, tally: Tally, rec: RunRecorder,
                     clock: SandboxClock) -> list[Candidate]:
    calls = max(1, int(settings.HARDTESTS_ORACLE_FREE_EDGE_CALLS))
    out: list[Candidate] = []
    for function in reply.edge_functions:
        seeds = [generator_seed(kit, function, n) for n in range(1, calls + 1)]
        results = call_many(sb, reply.edge_generator, function, [()] * calls, generator_limits(), clock, seeds=seeds)
        for number, result in enumerate(results, 1):
            tally.add(EDGE, "generated")
            if _usable(result):
                out.append(Candidate(result.value, EDGE, function, number, seed=seeds[number - 1]))
            else:
                tally.add(EDGE, "failed")
        rec.check_cancel()
    rec.log(f"{len(reply.edge_functions)} edge generator(s) x {calls} call(s): {len(out)} inputs")
    return out


def _max_test(sb: Sandbox, kit: TestKit, reply: A7Reply, problem: Problem, efficient: str | None,
              clock: SandboxClock) -> tuple[NewTest | None, dict[str, object]]:
    """The one maximum-size input as a time-only test, when it is a valid input."""
    if reply.max_generator is None:
        return None, {"status": "missing", "why": "the reply has no max_input_generator"}
    seed = generator_seed(kit, MAX_FUNCTION, 1)
    result = call_many(sb, reply.max_generator, MAX_FUNCTION, [()], generator_limits(), clock, seeds=[seed])[0]
    if not _usable(result):
        return None, {"status": "missing", "why": f"gen_max_input gave no input: {result.error or result.value!r:.200}"}
    text = result.value
    assert kit.validator is not None
    verdict = run_checker_calls(sb, kit.validator.code, "validate_input", [(text,)], clock)[0]
    if not (verdict.ok and verdict.value is True):
        return None, {"status": "missing", "why": "the validator rejects the maximum-size input"}
    info: dict[str, object] = {"status": "added", "input_size": len(text.encode("utf-8"))}
    if efficient is not None:
        # A Python solution that is slow here says little about a C++ one: a time-out is recorded only.
        # But the solution that agreed with the brute force on every small input crashing here says
        # the input is likely outside the constraints the validator let through: a test that right
        # programs with bounded arrays would fail is worse than no test.
        prog = sb.compile("python3", efficient)
        if prog.ok:
            run = sb.run(prog, [text], limits_for(problem))[0]
            clock.add([run])
            info["efficient_solution"] = {"verdict": str(run.verdict), "time_ms": run.time_ms}
            if run.verdict == Verdict.RE:
                return None, {**info, "status": "dropped",
                              "why": "the efficient solution, which agrees with the brute force on the small "
                                     "inputs, crashes on the maximum-size input (outside the constraints?)"}
    test = NewTest(input=text, output=b"", kind=TIME_ONLY, generator=MAX_FUNCTION, call_number=1, seed=seed,
                   validator_version=kit.validator.version, output_origin=TestCase.OutputOrigin.NONE)
    return test, info


def build_a7(run: GenerationRun, rec: RunRecorder, sb: Sandbox, *, persist: bool = True) -> Built:
    problem = run.problem
    samples = sample_pairs(problem)
    model = run.model_name or rec.llm.model
    clock = SandboxClock()
    rec.stage(GenerationRun.Stage.LLM_VALIDATOR)
    rec.log(f"oracle-free (HardTests A.7): asking {model} for a brute force, a validator and edge-case generators")
    if not samples:
        rec.log("warning: the problem has no samples; the brute force is checked only by the cross-check")
    try:
        reply, _ = ask(run, rec, purpose="oracle_free", prompt_version=A7_PROMPT, messages=a7_prompt(problem),
                       parse=parse_a7_reply, review=_review(sb, problem, samples))
    except RunFailed as exc:
        if exc.reason != FailureReason.BRUTE_FORCE_REJECTED:
            raise
        raise RunFailed(exc.reason, f"{exc} No suite was made. {NEXT_STEP}") from exc
    for note in reply.notes:
        rec.log(note)
    tolerance = answer_tolerance(problem) if reply.output_judging_function is None else None
    if tolerance is not None:
        # Real-number answers and no judging function from the model: the standard tolerance judge,
        # as oracle-based runs get (generation.pipeline); else the cross-check would compare digits
        # and the suite would reject right programs that print other digits.
        reply.output_judging_function = tolerance_judge_code(tolerance)
        reply.needs_output_judge = reply.standard_judge = True
        rec.log(f"answers are real numbers (tolerance {tolerance}): the standard tolerance judge is used")
    rec.log(f"brute force reproduces {len(samples)} sample(s)")
    checker = Checker(reply.output_judging_function, problem.comparison, clock)
    references: list[tuple[str, Solution]] = []
    tried: list[dict[str, object]] = []
    if settings.HARDTESTS_ORACLE_FREE_SECOND_BRUTE_FORCE:
        try:
            second, _ = ask(run, rec, purpose="oracle_free_second_brute_force", prompt_version=SECOND_BRUTE_PROMPT,
                            messages=second_brute_prompt(problem), parse=parse_brute_reply,
                            review=_second_review(sb, problem, samples, reply.output_judging_function))
            if same_program(second, reply.brute_force):
                rec.log("second brute force is the first one again: not an independent check")
                tried.append({"with": "second_brute_force", "used": False, "why": SAME})
            else:
                references.append(("second_brute_force", model_program(second, "second brute force")))
        except RunFailed as exc:
            if exc.reason in (FailureReason.LLM_UNAVAILABLE, FailureReason.CANCELLED):
                raise
            rec.log(f"second brute force not usable: {str(exc).splitlines()[0][:300]}")
            tried.append({"with": "second_brute_force", "used": False, "why": str(exc)[:300]})
    if reply.efficient is not None and same_program(reply.efficient, reply.brute_force):
        rec.log("efficient solution is the brute force again: not an independent check")
        tried.append({"with": "efficient_solution", "used": False, "why": SAME})
    elif reply.efficient is not None:
        wrong = sample_failures(sb, reply.efficient, samples, checker, problem)
        if wrong:
            rec.log(f"efficient solution fails the samples; not used to cross-check: {wrong[0][:300]}")
            tried.append({"with": "efficient_solution", "used": False, "why": "fails the samples: " + wrong[0][:300]})
        else:
            references.append(("efficient_solution", model_program(reply.efficient, "efficient solution")))
    kit = (_save_kit(run, rec, reply, {name: program.code for name, program in references}) if persist
           else _memory_kit(run, reply))

    tally = Tally()
    rec.stage(GenerationRun.Stage.GENERATING)
    unique = drop_duplicates(_edge_candidates(sb, kit, reply, tally, rec, clock), tally)
    if not unique:
        raise MaterialiseError(FailureReason.INPUT_GENERATION_FAILED, "the edge generators produced no inputs")
    rec.stage(GenerationRun.Stage.VALIDATING)
    validated = validate_candidates(sb=sb, kit=kit, candidates=unique, tally=tally, progress=rec, clock=clock,
                                    samples=[s[0] for s in samples])
    rec.counts(tally.as_dict())
    kept = validated.kept
    if not kept:
        raise MaterialiseError(FailureReason.INPUT_GENERATION_FAILED, "the validator rejected every edge input")
    inputs = [c.text for c in kept]

    rec.stage(GenerationRun.Stage.ORACLES)
    brute, note = run_program(sb, model_program(reply.brute_force, "brute force"), inputs,
                              brute_force_limits(problem), clock)
    rec.log(f"brute force: {note}")
    if brute is None or not any(out is not None for out in brute.outputs):
        raise RunFailed(FailureReason.BRUTE_FORCE_REJECTED, f"the brute force gives no output on the edge inputs "
                        f"({note}); keep edge inputs small or the search exhaustive but bounded")
    self_check(sb, checker, brute, inputs)
    threshold = float(settings.HARDTESTS_ORACLE_AGREEMENT)
    chosen = None
    disagreements: list[str] = []
    for name, program in references:
        other, note = run_program(sb, program, inputs, brute_force_limits(problem), clock)
        if other is None:
            tried.append({"with": name, "used": False, "why": note})
            continue
        agreement = compare_runs(sb, checker, brute, other, inputs)
        both = [i for i, (a, b) in enumerate(zip(brute.outputs, other.outputs, strict=True))
                if a is not None and b is not None]
        disagreed = [i for i in both if not agreement.mask[i]]
        entry = {"with": name, "used": False, "agreed": sum(agreement.mask), "compared": agreement.counted,
                 "share": round(agreement.share, 4), "disagreed": len(disagreed)}
        tried.append(entry)
        rec.log(f"brute force and {name.replace('_', ' ')} agree on {sum(agreement.mask)}/{agreement.counted} inputs"
                + (f", disagree on {len(disagreed)}" if disagreed else ""))
        if disagreed:
            # Two programs that both finished on a valid input and disagree: one of them is wrong there,
            # and nothing says which. Keeping the brute force minus those inputs would drop exactly the
            # tests that tell a program with the same mistake from a right one (the oracle pipeline's
            # HARDTESTS_ORACLE_AGREEMENT tolerates that for human oracles; a model's brute force gets none).
            first = disagreed[0]
            theirs = (other.outputs[first] or b"").decode("utf-8", "replace")
            ours = (brute.outputs[first] or b"").decode("utf-8", "replace")
            entry["example"] = {"input": inputs[first][:300], "brute_force": ours[:200], name: theirs[:200]}
            disagreements.append(f"the {name.replace('_', ' ')} disagrees on {len(disagreed)} of "
                                 f"{agreement.counted} inputs, e.g. input {inputs[first][:120]!r}: brute force "
                                 f"{ours[:60]!r}, {name.replace('_', ' ')} {theirs[:60]!r}")
            continue
        entry["confirms"] = bool(agreement.counted and agreement.share >= threshold)
        if entry["confirms"] and chosen is None:
            entry["used"] = True
            chosen = (name, agreement, entry)
    if chosen is None:
        detail = "; ".join(disagreements)
        unused = "; ".join(f"the {str(t['with']).replace('_', ' ')} is not used: {str(t['why'])[:200]}"
                           for t in tried if t.get("why"))
        detail = "; ".join(part for part in (detail, unused) if part)
        raise RunFailed(FailureReason.BRUTE_FORCE_UNCONFIRMED,
                        f"no independent program confirms the brute force on the small inputs (every input where "
                        f"both finish must agree, and both must finish on {threshold:.0%} of them; tried: "
                        f"{', '.join(str(t['with']) for t in tried) or 'none'})" + (f": {detail}" if detail else "")
                        + f"; its outputs are not used and no suite was made. {NEXT_STEP}")
    name, agreement, entry = chosen

    tests: list[NewTest] = [NewTest(input=i, output=o, kind=TestCase.Kind.PUBLIC, generator="statement",
                                    call_number=n, output_origin=TestCase.OutputOrigin.STATEMENT)
                            for n, (i, o) in enumerate(samples, 1)]
    version = kit.validator.version if kit.validator else None
    for cand, agreed, output in zip(kept, agreement.mask, brute.outputs, strict=True):
        if not agreed or output is None:
            tally.add(EDGE, "disagreement")
            continue
        tally.add(EDGE, "kept")
        tests.append(NewTest(input=cand.text, output=output, kind=EDGE, generator=cand.generator,
                             call_number=cand.call_number, seed=cand.seed, validator_version=version,
                             output_origin=TestCase.OutputOrigin.BRUTE_FORCE))
    efficient_ok = any(t["with"] == "efficient_solution" and t.get("confirms") for t in tried)
    max_test, max_info = _max_test(sb, kit, reply, problem, reply.efficient if efficient_ok else None, clock)
    if max_test is not None:
        tests.append(max_test)
    else:
        rec.log(f"warning: no time-only maximum-size test ({max_info['why']})")
    rec.counts(tally.as_dict())
    made = sum(1 for t in tests if t.output_origin == TestCase.OutputOrigin.BRUTE_FORCE)
    trust = {
        "method": A7, "model": model, "prompt_versions": [A7_PROMPT, SECOND_BRUTE_PROMPT],
        "brute_force": {"samples_checked": len(samples), "samples_passed": len(samples),
                        "finished_on": sum(1 for o in brute.outputs if o is not None), "inputs": len(inputs)},
        "cross_check": {**entry, "judged_with": ("output_judging_function" if reply.output_judging_function
                                                 else f"comparison:{problem.comparison}")},
        "cross_checks_tried": tried,
        "model_made_outputs": made, "statement_outputs": len(samples), "time_only_tests": int(max_test is not None),
        "max_test": max_info,
    }
    rec.log(f"oracle-free suite: {made} brute-force outputs (confirmed by the {name.replace('_', ' ')}), "
            f"{len(samples)} sample(s), {int(max_test is not None)} time-only test; sandbox CPU {clock.ms} ms")
    return Built(tests=tests, trust=trust, kit=kit)
