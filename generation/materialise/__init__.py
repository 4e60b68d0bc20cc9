"""Materialising a test kit (no LLM): DESIGN.md "The data flow", step 3.

    generate (sandbox, seeded) -> drop duplicates -> validate (sandbox) -> oracles agree (sandbox)

`materialise_kit` returns the tests with their provenance; writing the suite is the
caller's job (generation.pipeline), so the bench and tests can materialise without a run.
Generator calls are seeded from the problem, the generator and the call number (not the kit
version), every Python program runs with a fixed hash seed (generation.materialise.reproducible),
and a sample of generator calls is made twice: the same kit gives the same suite byte for byte,
and a generator that is not reproducible is named and its inputs dropped.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from generation.materialise.inputs import (
    ValidatorErrors,
    drop_duplicates,
    generate_candidates,
    validate_candidates,
)
from generation.materialise.oracles import (
    CROSS_INPUTS,
    Checker,
    JudgeCase,
    JudgeLenient,
    JudgeRejects,
    agree,
    hostile_judge,
    lenient_judge,
)
from generation.materialise.testlib import testlib_parts
from generation.materialise.tolerance import answer_tolerance, is_standard_judge
from generation.materialise.types import (
    Cancelled,
    MaterialiseError,
    NullProgress,
    Progress,
    SandboxClock,
    Tally,
)
from generation.models import FailureReason, GenerationRun
from problems.models import Problem, Solution, TestKit
from problems.services import NewTest
from sandbox import Sandbox, get_sandbox

__all__ = ["Cancelled", "JudgeLenient", "JudgeRejects", "Materialised", "MaterialiseError", "NullProgress", "Progress",
           "ValidatorErrors", "kit_checker", "materialise_kit"]


@dataclass
class Materialised:
    tests: list[NewTest]
    counts: dict[str, dict[str, int]]
    oracle_id: int
    second_oracle_id: int | None
    agreement: float
    unverified: bool = False
    validator_errors: list[dict[str, Any]] = field(default_factory=list)
    sandbox_ms: int = 0
    sandbox_runs: int = 0
    wall_ms: int = 0
    notes: list[str] = field(default_factory=list)
    # generator functions whose output changed between two runs of the same call (dropped)
    unreproducible: list[str] = field(default_factory=list)


def _str(data: str | bytes) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def sample_pairs(problem: Problem) -> list[tuple[str, str]]:
    return [(s["input"], s["output"]) for s in problem.samples or []
            if isinstance(s, dict) and isinstance(s.get("input"), str) and isinstance(s.get("output"), str)]


def judge_sample_check(sb: Sandbox, checker: Checker, samples: list[tuple[str, str]],
                       oracle_outputs: Sequence[tuple[int, bytes]] = ()) -> list[JudgeCase]:
    """Cases a judging function must accept but does not: each sample's expected output against
    itself, and (sample index, an oracle's output) against the expected output."""
    if checker.judge_code is None:
        return []
    triples = [(text, out.encode(), out.encode()) for text, out in samples]
    triples += [(samples[i][0], output, samples[i][1].encode()) for i, output in oracle_outputs]
    return [JudgeCase(t[0], t[1].decode("utf-8", "replace"), t[2].decode("utf-8", "replace"), why)
            for t, (ok, why) in zip(triples, checker.accepts(sb, triples), strict=True) if not ok]


def kit_checker(kit: TestKit, clock: SandboxClock | None = None) -> Checker:
    """How a kit compares outputs: its testlib checker (a C++ kit), its judging function, else the
    problem's comparison (with the real-number tolerance when there is one)."""
    testlib = testlib_parts(kit).checker
    code = testlib or (kit.output_judge.code if kit.output_judge else None)
    return Checker(code, kit.problem.comparison, clock or SandboxClock(),
                   tolerance=answer_tolerance(kit.problem, kit), language="cpp" if testlib else "python3")


def materialise_kit(*, kit: TestKit, progress: Progress | None = None, sb: Sandbox | None = None,
                    oracles: list[Solution] | None = None) -> Materialised:
    """Run the kit's generators, validator and the problem's oracles; raise MaterialiseError on failure.

    `oracles`: the ones that passed the run's pre-flight (default: every supported oracle).
    """
    progress = progress or NullProgress()
    started = time.monotonic()
    problem = kit.problem
    tally = Tally()
    clock = SandboxClock()
    if sb is None:
        try:
            sb = get_sandbox()
        except Exception as exc:  # noqa: BLE001 - SandboxUnavailable or a backend start failure
            raise MaterialiseError(FailureReason.SANDBOX_ERROR, f"sandbox unavailable: {exc}") from exc
    checker = kit_checker(kit, clock)
    samples = sample_pairs(problem)
    rejected = judge_sample_check(sb, checker, samples)
    if rejected:
        raise JudgeRejects(f"the output judging function rejects {len(rejected)} sample output(s) compared with "
                           f"themselves: {rejected[0].input[:200]!r} -> {rejected[0].reference[:200]!r}", rejected)

    progress.stage(GenerationRun.Stage.GENERATING)
    unreproducible: list[str] = []
    candidates = generate_candidates(sb=sb, kit=kit, tally=tally, progress=progress, clock=clock,
                                     unreproducible=unreproducible)
    unique = drop_duplicates(candidates, tally)
    progress.log(f"{len(candidates)} inputs generated, {len(unique)} distinct")
    progress.counts(tally.as_dict())
    if not unique:
        why = (f"; not reproducible (dropped): {', '.join(unreproducible)}" if unreproducible else "")
        raise MaterialiseError(FailureReason.INPUT_GENERATION_FAILED, f"the kit produced no inputs{why}")

    progress.stage(GenerationRun.Stage.VALIDATING)
    try:
        validated = validate_candidates(sb=sb, kit=kit, candidates=unique, tally=tally, progress=progress,
                                        clock=clock, samples=[text for text, _ in samples])
    finally:
        progress.counts(tally.as_dict())
    valid = validated.kept
    if not valid:
        raise MaterialiseError(FailureReason.INPUT_GENERATION_FAILED, "the validator rejected every input")
    input_s = time.monotonic() - started
    if input_s > settings.HARDTESTS_INPUT_BUDGET_S:
        raise MaterialiseError(FailureReason.INPUT_BUDGET_EXCEEDED,
                               f"generating and validating the inputs took {input_s:.0f} s, over the "
                               f"{settings.HARDTESTS_INPUT_BUDGET_S:g} s budget (HARDTESTS_INPUT_BUDGET_S)")

    progress.stage(GenerationRun.Stage.ORACLES)
    oracle_started = time.monotonic()
    agreement = agree(sb=sb, problem=problem, inputs=[c.text for c in valid], checker=checker, oracles=oracles,
                      progress=progress, clock=clock, deadline=oracle_started + settings.HARDTESTS_OUTPUT_BUDGET_S)
    output_s = time.monotonic() - oracle_started
    if output_s > settings.HARDTESTS_OUTPUT_BUDGET_S:
        raise MaterialiseError(FailureReason.OUTPUT_BUDGET_EXCEEDED,
                               f"running the oracles took {output_s:.0f} s, over the "
                               f"{settings.HARDTESTS_OUTPUT_BUDGET_S:g} s budget (HARDTESTS_OUTPUT_BUDGET_S)")
    primary = agreement.primary
    tests: list[NewTest] = []
    validator_version = kit.validator.version if kit.validator else None
    size = 0
    for cand, agreed, output in zip(valid, agreement.mask, primary.outputs, strict=True):
        if not agreed or output is None:
            tally.add(cand.kind, "disagreement")
            continue
        tally.add(cand.kind, "kept")
        size += len(cand.text.encode("utf-8")) + len(output)
        tests.append(NewTest(input=cand.text, output=output, kind=cand.kind, generator=cand.generator,
                             call_number=cand.call_number, validator_version=validator_version,
                             oracle_id=primary.solution.pk, seed=cand.seed))
    progress.counts(tally.as_dict())
    if checker.judge_code is not None and not is_standard_judge(checker.judge_code):
        # A judge that accepts anything makes every agreement trivial and every program pass.
        answers = [(_str(t.input), _str(t.output)) for t in tests[:CROSS_INPUTS]]
        found = lenient_judge(sb, checker, answers)
        if found is None:
            # ... and one that accepts NaN, inf, garbage or extra tokens lets through programs that
            # print them; several answers are a reason only where no real-number tolerance is known
            found = hostile_judge(sb, checker, answers, several_answers=checker.tolerance is None)
        if found is not None:
            raise JudgeLenient(found[0], found[1])
    if size > settings.HARDTESTS_SUITE_MAX_MB * 1024 * 1024:
        raise MaterialiseError(FailureReason.SUITE_TOO_LARGE,
                               f"the suite would hold {size / 1024 / 1024:.1f} MB of tests, over the "
                               f"{settings.HARDTESTS_SUITE_MAX_MB:g} MB budget (HARDTESTS_SUITE_MAX_MB)")
    second = agreement.secondary
    progress.log(f"{len(tests)} tests kept; outputs from oracle {primary.solution} "
                 + (f"(agreeing with {second.solution} on {agreement.share:.0%} of the inputs where one finished); "
                    if second else "(UNVERIFIED: no second oracle); ")
                 + f"sandbox CPU {clock.ms} ms over {clock.runs} runs")
    return Materialised(
        tests=tests, counts=tally.as_dict(), oracle_id=primary.solution.pk,
        second_oracle_id=second.solution.pk if second else None, agreement=agreement.share,
        unverified=agreement.unverified, validator_errors=validated.errors,
        sandbox_ms=clock.ms, sandbox_runs=clock.runs, wall_ms=int((time.monotonic() - started) * 1000),
        unreproducible=unreproducible,
    )
