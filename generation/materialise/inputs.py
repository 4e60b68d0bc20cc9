"""Inputs of a kit: call the generators in the sandbox, drop duplicates, keep what the validator accepts.

Generators are untrusted code. Each call is a fresh sandboxed process with its own limits,
so a generator that raises or loops costs its own calls and nothing else; one whose first
calls all exceed the time limit is not called again (its remaining calls would only burn
the same limit each).
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.conf import settings

from generation.materialise.batching import call_many
from generation.materialise.testlib import testlib_candidates
from generation.materialise.types import (
    Candidate,
    MaterialiseError,
    Progress,
    SandboxClock,
    Tally,
    batch_generator_limits,
    checker_limits,
    generator_limits,
    threads,
)
from generation.models import FailureReason
from generation.parsing import (
    BATCH_FUNCTION,
    REGULAR_FUNCTION,
    ReplyInvalid,
    hacking_functions,
    regular_functions,
)
from problems.models import TestCase, TestKit
from sandbox import CallResult, Limits, Sandbox, Verdict

T = TypeVar("T")
PROBE_CALLS = 2
MAX_INPUT_BYTES = 32 * 1024 * 1024


@dataclass
class GeneratorJob:
    code: str
    function: str
    kind: str
    calls: int
    seeds: list[int] = field(default_factory=list)


def generator_seed(kit: TestKit, function: str, call_number: int) -> int:
    """The seed of one generator call: a function of the problem, the generator and the call number only,
    so materialising the same kit again yields the same inputs, and a new kit version that changes
    only the validator or the judge (a refinement, a person's edit) keeps every input."""
    key = f"{kit.problem_id}:{function}:{call_number}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 1


def check_calls() -> int:
    """How many calls of each generator are made twice to catch one that is not reproducible."""
    return max(0, settings.HARDTESTS_REPRODUCIBLE_CHECK_CALLS)


def generator_jobs(kit: TestKit) -> tuple[list[GeneratorJob], list[str]]:
    """The generator functions of a kit and how many times each is called (the paper's counts)."""
    jobs: list[GeneratorJob] = []
    problems: list[str] = []
    if kit.regular_generator.strip():
        try:
            names = regular_functions(kit.regular_generator)
        except ReplyInvalid as exc:
            names = []
            problems.append(str(exc))
        stratified = [n for n in names if n != REGULAR_FUNCTION]
        if REGULAR_FUNCTION in names:
            jobs.append(GeneratorJob(kit.regular_generator, REGULAR_FUNCTION, TestCase.Kind.REGULAR,
                                     settings.HARDTESTS_REGULAR_CALLS))
        for name in stratified:
            jobs.append(GeneratorJob(kit.regular_generator, name, TestCase.Kind.STRATIFIED,
                                     settings.HARDTESTS_STRATIFIED_CALLS))
        if not names and not problems:
            problems.append("the regular generator defines no generator function")
    if kit.hacking_generator.strip():
        try:
            names = hacking_functions(kit.hacking_generator)
        except ReplyInvalid as exc:
            names = []
            problems.append(str(exc))
        for name in names:
            jobs.append(GeneratorJob(kit.hacking_generator, name, TestCase.Kind.HACKING,
                                     settings.HARDTESTS_HACKING_CALLS))
        if not names and not problems:
            problems.append("the hacking generator defines no generator function")
    jobs = [j for j in jobs if j.calls > 0]
    for job in jobs:
        job.seeds = [generator_seed(kit, job.function, n) for n in range(1, job.calls + 1)]
    return jobs, problems


def describe_failure(result: CallResult, limits: Limits | None = None) -> str:
    """Why one generator call gave no usable input, naming limits as limits (not "raises")."""
    limits = limits or generator_limits()
    error = result.error or ""
    if result.verdict == Verdict.MLE or "MemoryError" in error:
        return f"exceeds the memory limit ({limits.memory_mb} MB, HARDTESTS_GENERATOR_MEMORY_MB)"
    if result.verdict == Verdict.TLE:
        return f"exceeds the time limit ({limits.time_s:g} s of CPU, HARDTESTS_GENERATOR_TIME_S)"
    if result.verdict == Verdict.OLE:
        return "exceeds the output limit (its input is too large to return)"
    if result.ok and isinstance(result.value, str):
        size = len(result.value.encode("utf-8"))
        if size > MAX_INPUT_BYTES:
            return f"returns an input of {size / 2**20:.0f} MB, over the {MAX_INPUT_BYTES // 2**20} MB limit"
        return "returns an empty input" if not result.value.strip() else "returns a usable input"
    if result.ok:
        return f"returns {type(result.value).__name__}, not a string"
    return error or f"fails ({result.verdict})"


@dataclass
class GeneratorRun:
    results: list[CallResult]
    # the first calls made again in a fresh process, with the same seeds
    again: list[CallResult] = field(default_factory=list)

    def unreproducible_call(self) -> int | None:
        """The first call (1-based) whose input differs between the two runs, if any."""
        for number, (first, second) in enumerate(zip(self.results, self.again, strict=False), 1):
            if usable_input(first) and (not usable_input(second) or first.value != second.value):
                return number
        return None


def _run_generator(sb: Sandbox, job: GeneratorJob, limits: Limits, clock: SandboxClock) -> GeneratorRun:
    results = call_many(sb, job.code, job.function, [()] * job.calls, limits, clock, probe=PROBE_CALLS,
                        seeds=job.seeds)
    n = min(check_calls(), job.calls)
    if n == 0 or not any(usable_input(r) for r in results[:n]):
        return GeneratorRun(results)
    # The same first calls in a new process whose clock reads later: what differs now differs from one
    # run to the next.
    again = call_many(sb, job.code, job.function, [()] * n, limits, clock, seeds=job.seeds[:n], shift_clock=True)
    return GeneratorRun(results, again)


def usable_input(result: CallResult) -> bool:
    return result.ok and isinstance(result.value, str) and len(result.value.encode("utf-8")) <= MAX_INPUT_BYTES


def generate_candidates(
    *, sb: Sandbox, kit: TestKit, tally: Tally, progress: Progress, clock: SandboxClock,
    unreproducible: list[str] | None = None,
) -> list[Candidate]:
    """Every input the kit yields, in kit order (direct, regular/stratified, hacking, batch).

    A generator whose first calls give other inputs when made again with the same seed is not
    reproducible: its inputs are dropped (a generator failure) and its name added to `unreproducible`.
    """
    unreproducible = unreproducible if unreproducible is not None else []
    candidates: list[Candidate] = []
    for index, text in enumerate(kit.direct_inputs or [], 1):
        tally.add(TestCase.Kind.DIRECT, "generated")
        if isinstance(text, str):
            candidates.append(Candidate(text, TestCase.Kind.DIRECT, "LLMGen_input", index))
        else:
            tally.add(TestCase.Kind.DIRECT, "failed")
    # A C++ kit's testlib generator (generation/materialise/testlib.py): its commands, after the direct inputs.
    candidates += testlib_candidates(sb=sb, kit=kit, tally=tally, progress=progress, clock=clock,
                                     check_calls=check_calls(), unreproducible=unreproducible)
    jobs, problems = generator_jobs(kit)
    for problem in problems:
        progress.log(f"generator code skipped: {problem}")
    limits = generator_limits()
    with ThreadPoolExecutor(max_workers=threads()) as pool:
        futures = [(job, pool.submit(_run_generator, sb, job, limits, clock)) for job in jobs]
        batch_seed = generator_seed(kit, BATCH_FUNCTION, 1)
        batch_futures = (
            [pool.submit(call_many, sb, kit.batch_generator, BATCH_FUNCTION, [()], batch_generator_limits(),
                         SandboxClock(), seeds=[batch_seed], shift_clock=again)
             for again in ((False, True) if check_calls() else (False,))]
            if kit.batch_generator.strip() else []
        )
        for job, future in futures:
            run = future.result()
            results = run.results
            progress.check_cancel()
            machine_failure_check([r.verdict for r in results], f"generator {job.function}",
                                  next((r.error or "" for r in results if r.verdict == Verdict.SE), ""))
            differs = run.unreproducible_call()
            if differs is not None:
                unreproducible.append(job.function)
                tally.add(job.kind, "generated", len(results))
                tally.add(job.kind, "failed", len(results))
                progress.log(f"{job.function} is not reproducible: call {differs} gave a different input when made "
                             f"again with the same seed (seeded from the clock or the process?); all its "
                             f"{len(results)} calls count as failed")
                continue
            ok = 0
            for call_number, result in enumerate(results, 1):
                tally.add(job.kind, "generated")
                if usable_input(result):
                    ok += 1
                    candidates.append(Candidate(result.value, job.kind, job.function, call_number,
                                                seed=job.seeds[call_number - 1]))
                else:
                    tally.add(job.kind, "failed")
            failures = [r for r in results if not usable_input(r)]
            note = f"; first failure: {describe_failure(failures[0], limits)[:300]}" if failures else ""
            progress.log(f"{job.function}: {ok}/{len(results)} calls gave an input{note}")
        if batch_futures:
            first = batch_futures[0].result()
            if len(batch_futures) > 1 and _batch_differs(first, batch_futures[1].result()):
                unreproducible.append(BATCH_FUNCTION)
                tally.add(TestCase.Kind.REGULAR, "failed")
                progress.log(f"{BATCH_FUNCTION} is not reproducible: two runs with the same seed gave different "
                             "inputs; none of them is used")
            else:
                candidates += _batch_candidates(first, tally, progress, clock, batch_seed)
    return candidates


def _batch_differs(first: list[CallResult], second: list[CallResult]) -> bool:
    return bool(first and first[0].ok and isinstance(first[0].value, list)
                and (not second or not second[0].ok or second[0].value != first[0].value))


def _batch_candidates(results: list[CallResult], tally: Tally, progress: Progress,
                      clock: SandboxClock, seed: int) -> list[Candidate]:
    clock.add(results)
    kind = TestCase.Kind.REGULAR
    result = results[0]
    if not result.ok or not isinstance(result.value, list):
        tally.add(kind, "failed")
        progress.log(f"{BATCH_FUNCTION}: no list of inputs ({describe_failure(result, batch_generator_limits())[:300]})")
        return []
    out = []
    for index, text in enumerate(result.value, 1):
        tally.add(kind, "generated")
        if isinstance(text, str) and len(text.encode("utf-8")) <= MAX_INPUT_BYTES:
            out.append(Candidate(text, kind, BATCH_FUNCTION, index, seed=seed))
        else:
            tally.add(kind, "failed")
    progress.log(f"{BATCH_FUNCTION}: {len(out)}/{len(result.value)} items are input strings")
    return out


def drop_duplicates(candidates: list[Candidate], tally: Tally) -> list[Candidate]:
    """The first occurrence of each input wins (kit order puts hand-written inputs first)."""
    seen: set[str] = set()
    unique = []
    for cand in candidates:
        if cand.text in seen:
            tally.add(cand.kind, "duplicate")
            continue
        seen.add(cand.text)
        unique.append(cand)
    return unique


def _chunks(items: list[T], parts: int) -> list[list[T]]:
    size = max(1, -(-len(items) // parts))
    return [items[i:i + size] for i in range(0, len(items), size)]


def machine_failure_check(verdicts: list[Verdict], what: str, detail: str = "") -> None:
    """An SE is the machine's (a full disk, the sandbox unavailable), never the kit's or an
    oracle's: a program cannot cause one. Fail the run as a sandbox error, so it is not
    recorded as an invalid validator or as oracles that do not work."""
    if Verdict.SE in verdicts:
        raise MaterialiseError(FailureReason.SANDBOX_ERROR,
                               f"the sandbox failed while running {what} (SE){': ' + detail[-300:] if detail else ''}")


def run_checker_calls(sb: Sandbox, code: str, function: str, args: list[tuple[Any, ...]], clock: SandboxClock,
                      limits: Limits | None = None) -> list[CallResult]:
    """`function(*a)` for each a in args (validators, judging functions), split across threads."""
    if not args:
        return []
    limits = limits or checker_limits()
    chunks = _chunks(args, threads())
    with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
        parts = list(pool.map(lambda chunk: call_many(sb, code, function, chunk, limits, clock), chunks))
    return [r for part in parts for r in part]


@dataclass
class Validated:
    kept: list[Candidate]
    # Inputs the validator crashed or timed out on, for the run page:
    # {"kind", "generator", "call_number", "error", "input"} (input cut to a preview).
    errors: list[dict[str, Any]] = field(default_factory=list)


def _validator_error(result: CallResult) -> str | None:
    if not result.ok:
        return result.error or str(result.verdict)
    if not isinstance(result.value, bool):
        return f"validate_input returned {result.value!r:.80}, not True or False"
    return None


def validate_candidates(
    *,
    sb: Sandbox,
    kit: TestKit,
    candidates: list[Candidate],
    tally: Tally,
    progress: Progress,
    clock: SandboxClock,
    samples: list[str],
) -> Validated:
    """Keep the inputs the kit's validator accepts.

    The validator must accept every sample (valid by definition) and reject every regression
    input, else the run fails as validator_invalid. A crash or timeout is not a verdict: it is
    recorded per input, and when it hits any hacking input or more than
    HARDTESTS_VALIDATOR_ERROR_SHARE of the inputs the run fails as validator_error, so that
    the hardest inputs never vanish silently.
    """
    validator = kit.validator
    if validator is None:
        # Imported kits (Klear-CodeTest) may ship generators without a validator; their
        # inputs are taken as the dataset made them, and the log says so.
        progress.log(f"kit v{kit.version} has no input validator: all {len(candidates)} distinct inputs kept")
        return Validated(list(candidates))
    regression = [x for x in (validator.regression_inputs or []) if isinstance(x, str)]
    texts = [c.text for c in candidates] + regression + samples
    results = run_checker_calls(sb, validator.code, "validate_input", [(t,) for t in texts], clock)
    progress.check_cancel()
    machine_failure_check([r.verdict for r in results], f"validator v{validator.version}",
                          next((r.error or "" for r in results if r.verdict == Verdict.SE), ""))
    verdicts = results[: len(candidates)]
    regression_results = results[len(candidates): len(candidates) + len(regression)]
    sample_results = results[len(candidates) + len(regression):]
    accepted_regressions = [i for i, r in enumerate(regression_results, 1) if r.ok and r.value is True]
    if accepted_regressions:
        raise MaterialiseError(
            FailureReason.VALIDATOR_INVALID,
            f"validator v{validator.version} accepts regression input(s) #"
            + ", #".join(map(str, accepted_regressions))
            + " that a reviewer showed to be invalid",
        )
    rejected_samples = [(i, r) for i, r in enumerate(sample_results, 1) if not (r.ok and r.value is True)]
    if rejected_samples:
        i, r = rejected_samples[0]
        why = _validator_error(r) or "it returned False"
        raise MaterialiseError(
            FailureReason.VALIDATOR_INVALID,
            f"validator v{validator.version} rejects sample input(s) #{', #'.join(str(i) for i, _ in rejected_samples)}"
            f", which are valid by definition (#{i}: {why}): {samples[i - 1][:300]!r}",
        )
    kept: list[Candidate] = []
    errors: list[dict[str, Any]] = []
    for cand, result in zip(candidates, verdicts, strict=True):
        error = _validator_error(result)
        if error is not None:
            tally.add(cand.kind, "validator_error")
            errors.append({"kind": cand.kind, "generator": cand.generator, "call_number": cand.call_number,
                           "error": error[:500], "input": cand.text[:200], "input_size": len(cand.text)})
        elif result.value is True:
            kept.append(cand)
        else:
            tally.add(cand.kind, "invalid")
    share = float(settings.HARDTESTS_VALIDATOR_ERROR_SHARE)
    hacking = [e for e in errors if e["kind"] == TestCase.Kind.HACKING]
    if errors:
        progress.log(f"validator v{validator.version} crashed or timed out on {len(errors)} input(s); first: "
                     f"{errors[0]['generator']} call {errors[0]['call_number']}: {errors[0]['error'][:300]}")
    if hacking or (candidates and len(errors) > share * len(candidates)):
        listed = "\n".join(f"- {e['kind']} {e['generator']} call {e['call_number']} ({e['input_size']} chars): "
                           f"{e['error'][:200]}" for e in errors[:20])
        why = (f"{len(hacking)} hacking input(s)" if hacking
               else f"{len(errors)} of {len(candidates)} inputs (over {share:.0%})")
        raise ValidatorErrors(
            f"validator v{validator.version} crashed or timed out on {why}; these inputs would be lost:\n{listed}",
            errors)
    progress.log(f"validator v{validator.version} accepted {len(kept)} of {len(candidates)} distinct inputs")
    return Validated(kept, errors)


class ValidatorErrors(MaterialiseError):
    def __init__(self, message: str, errors: list[dict[str, Any]]) -> None:
        super().__init__(FailureReason.VALIDATOR_ERROR, message)
        self.errors = errors
