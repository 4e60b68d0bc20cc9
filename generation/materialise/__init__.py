"""Materialising a test kit (no LLM): DESIGN.md "The data flow", step 3.

    generate (sandbox) -> drop duplicates -> validate (sandbox) -> oracles agree (sandbox)

`materialise_kit` returns the tests with their provenance; writing the suite is the
caller's job (generation.pipeline), so the bench and tests can materialise without a run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from generation.materialise.inputs import drop_duplicates, generate_candidates, validate_candidates
from generation.materialise.oracles import agree_outputs
from generation.materialise.types import (
    Cancelled,
    MaterialiseError,
    NullProgress,
    Progress,
    SandboxClock,
    Tally,
)
from generation.models import FailureReason, GenerationRun
from problems.models import TestKit
from problems.services import NewTest
from sandbox import Sandbox, get_sandbox

__all__ = ["Cancelled", "Materialised", "MaterialiseError", "NullProgress", "Progress", "materialise_kit"]


@dataclass
class Materialised:
    tests: list[NewTest]
    counts: dict[str, dict[str, int]]
    oracle_id: int
    second_oracle_id: int
    agreement: float
    sandbox_ms: int = 0
    sandbox_runs: int = 0
    wall_ms: int = 0
    notes: list[str] = field(default_factory=list)


def materialise_kit(*, kit: TestKit, progress: Progress | None = None, sb: Sandbox | None = None) -> Materialised:
    """Run the kit's generators, validator and the problem's oracles; raise MaterialiseError on failure."""
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

    progress.stage(GenerationRun.Stage.GENERATING)
    candidates = generate_candidates(sb=sb, kit=kit, tally=tally, progress=progress, clock=clock)
    unique = drop_duplicates(candidates, tally)
    progress.log(f"{len(candidates)} inputs generated, {len(unique)} distinct")
    progress.counts(tally.as_dict())
    if not unique:
        raise MaterialiseError(FailureReason.INPUT_GENERATION_FAILED, "the kit produced no inputs")

    progress.stage(GenerationRun.Stage.VALIDATING)
    samples = [s["input"] for s in problem.samples or [] if isinstance(s, dict) and isinstance(s.get("input"), str)]
    valid = validate_candidates(sb=sb, kit=kit, candidates=unique, tally=tally, progress=progress, clock=clock,
                                samples=samples)
    progress.counts(tally.as_dict())
    if not valid:
        raise MaterialiseError(FailureReason.INPUT_GENERATION_FAILED, "the validator rejected every input")

    progress.stage(GenerationRun.Stage.ORACLES)
    agreement = agree_outputs(sb=sb, problem=problem, candidates=valid, judge=kit.output_judge,
                              progress=progress, clock=clock)
    primary = agreement.primary
    tests: list[NewTest] = []
    validator_version = kit.validator.version if kit.validator else None
    for cand, agreed, output in zip(valid, agreement.mask, primary.outputs, strict=True):
        if not agreed or output is None:
            tally.add(cand.kind, "disagreement")
            continue
        tally.add(cand.kind, "kept")
        tests.append(NewTest(input=cand.text, output=output, kind=cand.kind, generator=cand.generator,
                             call_number=cand.call_number, validator_version=validator_version,
                             oracle_id=primary.solution.pk))
    progress.counts(tally.as_dict())
    progress.log(f"{len(tests)} tests kept; outputs from oracle {primary.solution} "
                 f"(agreeing with {agreement.secondary.solution} on {agreement.share:.0%}); "
                 f"sandbox CPU {clock.ms} ms over {clock.runs} runs")
    return Materialised(
        tests=tests, counts=tally.as_dict(), oracle_id=primary.solution.pk,
        second_oracle_id=agreement.secondary.solution.pk, agreement=agreement.share,
        sandbox_ms=clock.ms, sandbox_runs=clock.runs, wall_ms=int((time.monotonic() - started) * 1000),
    )
