"""AceCoder's baseline as a mode: model-written input/output pairs, filtered by a model-written solution.

As in AceCoder (and HardTests' Table 8 comparison): the model writes HARDTESTS_ACECODER_TESTS
pairs directly, a solution from HARDTESTS_ACECODER_SOLUTION_MODEL (default: the run's model)
runs on every input, the pairs whose output it reproduces are kept, and a problem left with
fewer than HARDTESTS_ACECODER_MIN_TESTS is dropped (`too_few_tests`). There is no validator,
no brute force and no sample check: that is the baseline's weakness the paper measures.
"""

from __future__ import annotations

from django.conf import settings

from generation.asking import ask
from generation.materialise.oracles import Checker
from generation.materialise.tolerance import answer_tolerance, tolerance_judge_code
from generation.materialise.types import RunFailed, SandboxClock
from generation.models import FailureReason, GenerationRun
from generation.oracle_free.common import ACECODER, Built, model_program, run_program
from generation.oracle_free.replies import (
    ACECODER_SOLUTION_PROMPT,
    ACECODER_TESTS_PROMPT,
    acecoder_solution_prompt,
    acecoder_tests_prompt,
    parse_pairs_reply,
    parse_solution_reply,
)
from generation.recorder import RunRecorder
from problems.judging import oracle_limits
from problems.models import TestCase
from problems.services import NewTest
from sandbox import Sandbox


def build_acecoder(run: GenerationRun, rec: RunRecorder, sb: Sandbox) -> Built:
    problem = run.problem
    model = run.model_name or rec.llm.model
    solver = rec.llm.solution_model or model
    count = max(1, int(settings.HARDTESTS_ACECODER_TESTS))
    clock = SandboxClock()
    rec.stage(GenerationRun.Stage.LLM_INPUTS)
    rec.log(f"AceCoder baseline: asking {model} for {count} input/output pairs")
    pairs, _ = ask(run, rec, purpose="acecoder_tests", prompt_version=ACECODER_TESTS_PROMPT,
                   messages=acecoder_tests_prompt(problem, count), parse=parse_pairs_reply)
    pairs = list(dict.fromkeys(pairs))[:count]
    rec.stage(GenerationRun.Stage.LLM_VALIDATOR)
    rec.log(f"asking {solver} for the filtering solution")
    previous = run.model_name
    run.model_name = solver  # chat() takes the run's model
    try:
        code, _ = ask(run, rec, purpose="acecoder_solution", prompt_version=ACECODER_SOLUTION_PROMPT,
                      messages=acecoder_solution_prompt(problem), parse=parse_solution_reply)
    finally:
        run.model_name = previous
    rec.stage(GenerationRun.Stage.ORACLES)
    result, note = run_program(sb, model_program(code, "AceCoder solution"), [i for i, _ in pairs],
                               oracle_limits(problem), clock)
    rec.log(f"filtering solution: {note}")
    # Filtered as the suite will be judged: the problem's judging function (its latest kit's, which
    # judges every suite without one of its own), else the standard real-number judge when the
    # answers are real numbers, else the problem's comparison. Token equality alone dropped every
    # pair of a real-number problem ("5.0" against "5.000000000") and, on a many-answers problem,
    # kept only pairs whose answer happened to be the solution's.
    kit = problem.kits.select_related("output_judge").order_by("-version").first()
    judge = kit.output_judge if kit is not None else None
    tolerance = answer_tolerance(problem, kit) if judge is None else None
    judge_code = judge.code if judge is not None else (tolerance_judge_code(tolerance) if tolerance else None)
    checker = Checker(judge_code, problem.comparison, clock)
    tests: list[NewTest] = []
    if result is not None:
        finished = [(n, out) for n, out in enumerate(result.outputs) if out is not None]
        verdicts = checker.accepts(sb, [(pairs[n][0], out, pairs[n][1].encode()) for n, out in finished])
        for (n, _out), (ok, _why) in zip(finished, verdicts, strict=True):
            if ok:
                tests.append(NewTest(input=pairs[n][0], output=pairs[n][1], kind=TestCase.Kind.DIRECT,
                                     generator="acecoder", call_number=n + 1,
                                     output_origin=TestCase.OutputOrigin.MODEL_PAIR))
    minimum = int(settings.HARDTESTS_ACECODER_MIN_TESTS)
    rec.log(f"{len(tests)} of {len(pairs)} model-written pairs agree with the solution")
    if len(tests) < minimum:
        raise RunFailed(FailureReason.TOO_FEW_TESTS, f"{len(tests)} of {len(pairs)} model-written tests survive the "
                        f"solution filter; AceCoder drops problems under {minimum} (HARDTESTS_ACECODER_MIN_TESTS)")
    trust = {"method": ACECODER, "model": model, "solution_model": solver,
             "prompt_versions": [ACECODER_TESTS_PROMPT, ACECODER_SOLUTION_PROMPT],
             "brute_force": None, "samples_checked": 0,
             "cross_check": {"with": "model_solution", "agreed": len(tests), "compared": len(pairs),
                             "judged_with": ("output_judging_function" if judge is not None else
                                             f"tolerance:{tolerance}" if tolerance else
                                             f"comparison:{problem.comparison}")},
             "model_made_outputs": len(tests), "statement_outputs": 0, "time_only_tests": 0}
    return Built(tests=tests, trust=trust, judge=judge, judge_code=judge_code)
