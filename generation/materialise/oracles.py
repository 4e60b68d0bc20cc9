"""Outputs: run oracles in reliability order until two of them agree.

Up to HARDTESTS_MAX_ORACLES usable oracles are tried, rank 1 first. An oracle is skipped
when its language is not supported, it does not compile, or it fails on most inputs. Each
new oracle is compared with every earlier usable one; the first pair agreeing on at least
HARDTESTS_ORACLE_AGREEMENT of the inputs wins, the inputs where the pair agrees are kept,
and their outputs come from the more reliable oracle of the pair. A buggy rank-1 oracle is
thus outvoted by two lower-ranked ones that agree with each other.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings
from django.db.models import F

from generation.materialise.inputs import run_checker_calls
from generation.materialise.types import Candidate, MaterialiseError, Progress, SandboxClock, oracle_limits
from generation.models import FailureReason
from problems.models import SUPPORTED_LANGUAGES, OutputJudge, Problem, Solution
from sandbox import Limits, Sandbox, compare_default

# An oracle that fails (TLE, RE, ...) on more than this share of the inputs is not an oracle here.
MAX_FAILING_SHARE = 0.5


@dataclass
class OracleRun:
    solution: Solution
    outputs: list[bytes | None]  # None where the oracle did not finish normally


@dataclass
class Agreement:
    primary: OracleRun
    secondary: OracleRun
    mask: list[bool]

    @property
    def share(self) -> float:
        return sum(self.mask) / len(self.mask) if self.mask else 0.0


def oracles_in_order(problem: Problem) -> list[Solution]:
    return list(
        problem.solutions.filter(role=Solution.Role.ORACLE).order_by(F("reliability").asc(nulls_last=True), "id")
    )


def _run_oracle(sb: Sandbox, solution: Solution, inputs: list[str], limits: Limits,
                clock: SandboxClock) -> tuple[OracleRun | None, str]:
    prog = sb.compile(solution.language, solution.code)
    if not prog.ok:
        return None, f"does not compile ({prog.verdict}): {prog.message.strip()[-200:]}"
    results = sb.run(prog, inputs, limits)
    clock.add(results)
    outputs = [r.stdout if r.ok else None for r in results]
    failing = sum(1 for o in outputs if o is None)
    if inputs and failing / len(inputs) > MAX_FAILING_SHARE:
        verdicts = sorted({str(r.verdict) for r in results if not r.ok})
        return None, f"fails on {failing}/{len(inputs)} inputs ({', '.join(verdicts)})"
    note = f"; failed on {failing} input(s)" if failing else ""
    return OracleRun(solution, outputs), f"ran on {len(inputs)} inputs{note}"


def _agreement(sb: Sandbox, primary: OracleRun, secondary: OracleRun, inputs: list[str],
               judge: OutputJudge | None, clock: SandboxClock) -> Agreement:
    mask = [False] * len(inputs)
    to_judge: list[int] = []
    for i, (a, b) in enumerate(zip(primary.outputs, secondary.outputs, strict=True)):
        if a is None or b is None:
            continue
        # Identical outputs (up to trailing whitespace) are accepted by any correct judge,
        # so the judging function only runs where the outputs differ.
        if compare_default(a, b):
            mask[i] = True
        elif judge is not None:
            to_judge.append(i)
    if to_judge and judge is not None:
        args = [(inputs[i], _text(secondary.outputs[i]), _text(primary.outputs[i])) for i in to_judge]
        for i, result in zip(to_judge, run_checker_calls(sb, judge.code, "output_judging_function", args, clock),
                             strict=True):
            mask[i] = result.ok and result.value is True
    return Agreement(primary, secondary, mask)


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")


def agree_outputs(
    *,
    sb: Sandbox,
    problem: Problem,
    candidates: list[Candidate],
    judge: OutputJudge | None,
    progress: Progress,
    clock: SandboxClock,
) -> Agreement:
    inputs = [c.text for c in candidates]
    limits = oracle_limits(problem.time_limit_ms, problem.memory_limit_mb)
    threshold = settings.HARDTESTS_ORACLE_AGREEMENT
    max_oracles = settings.HARDTESTS_MAX_ORACLES
    order: list[Solution] = []
    for solution in oracles_in_order(problem):
        if solution.language not in SUPPORTED_LANGUAGES:
            progress.log(f"oracle {solution} skipped: language {solution.language} is not supported")
            continue
        order.append(solution)
    if len(order) < 2:
        raise MaterialiseError(FailureReason.NO_VALID_ORACLE,
                               f"{len(order)} oracle(s) in a supported language; two must agree")
    usable: list[OracleRun] = []
    best: Agreement | None = None
    position = 0
    with ThreadPoolExecutor(max_workers=2) as pool:
        while position < len(order) and len(usable) < max_oracles:
            # The first two run side by side: in the common case they agree and we are done.
            wave = order[position: position + (2 if not usable else 1)]
            position += len(wave)
            runs = list(pool.map(lambda sol: (sol, *_run_oracle(sb, sol, inputs, limits, clock)), wave))
            progress.check_cancel()
            for solution, run, note in runs:
                progress.log(f"oracle {solution} (rank {solution.reliability}): {note}")
                if run is None:
                    continue
                for earlier in usable:
                    agreement = _agreement(sb, earlier, run, inputs, judge, clock)
                    progress.log(f"oracles {earlier.solution} and {solution} agree on "
                                 f"{sum(agreement.mask)}/{len(inputs)} inputs")
                    if best is None or agreement.share > best.share:
                        best = agreement
                    if agreement.share >= threshold:
                        return agreement
                usable.append(run)
                if len(usable) >= max_oracles:
                    break
    if len(usable) < 2:
        raise MaterialiseError(FailureReason.NO_VALID_ORACLE,
                               f"only {len(usable)} oracle(s) compiled and ran on most inputs; two must agree")
    share = f"{best.share:.0%}" if best else "0%"
    raise MaterialiseError(FailureReason.OUTPUT_VERIFICATION_FAILED,
                           f"no two of {len(usable)} oracles agree on {threshold:.0%} of the inputs "
                           f"(best pair: {share})")
