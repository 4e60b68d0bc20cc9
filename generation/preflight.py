"""Pre-flight of a generation run: enough trustworthy oracles before anything is paid for.

Before any LLM call (and before materialising a kit), every oracle in a supported language
is compiled and run on the problem's samples and, where the problem has an active official
suite, on its first official tests. An oracle passes when it compiles, finishes on every one
of them and its outputs are accepted leniently, so that no oracle the final judge would accept
is dropped: by the current kit's judging function, or by the problem's comparison with the
real-number tolerance the problem allows (generation.materialise.tolerance.answer_tolerance), or
as the same tokens in another order. A test whose expected output no running
oracle reproduces (a problem with several right answers and no judging function yet) is not
held against any of them. While there is no judging function, an oracle that finishes everywhere but
prints what looks like another right answer (as many tokens, some equal in place, as "YES 4 4" for
"YES 2 6") is kept provisionally when the strict ones are too few: another witness is not yet a wrong
answer; materialisation's agreement, or a judging function asked for, decides.
At least HARDTESTS_MIN_ORACLES must pass, else the run fails as `no_valid_oracle` with no LLM call made.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.conf import settings

from generation.materialise.inputs import machine_failure_check
from generation.materialise.oracles import Checker, another_answer, oracles_in_order
from generation.materialise.reproducible import compile_oracle
from generation.materialise.tolerance import answer_tolerance
from generation.materialise.types import NO_ORACLE_MESSAGE, MaterialiseError, Progress
from generation.models import FailureReason
from generation.selectors import kit_to_materialise
from problems.blobs import blob_pairs
from problems.judging import oracle_limits
from problems.models import SUPPORTED_LANGUAGES, Problem, Solution, TestSuite
from sandbox import Sandbox, Verdict

MAX_OFFICIAL_TESTS = 20


@dataclass
class Preflight:
    oracles: list[Solution]
    # Per passing oracle (by pk): its output on each sample, None where it did not finish.
    sample_outputs: dict[int, list[bytes | None]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _official_tests(problem: Problem) -> list[tuple[str, str]]:
    suite = problem.suites.filter(origin=TestSuite.Origin.OFFICIAL, status=TestSuite.Status.ACTIVE).first()
    if suite is None:
        return []
    rows = list(suite.tests.order_by("ordinal").values_list("input_sha256", "output_sha256")[:MAX_OFFICIAL_TESTS])
    return [(i.decode("utf-8", "replace"), o.decode("utf-8", "replace")) for i, o in blob_pairs(rows)]


def _lenient(checker: Checker, reference: bytes, candidate: bytes) -> bool:
    """Accepted by the comparison (with the problem's real-number tolerance), or the same tokens in
    another order: several right answers (an order, a set) must not cost an oracle its place
    before a judging function exists."""
    return checker.compare(reference, candidate) or sorted(reference.split()) == sorted(candidate.split())


def preflight(*, problem: Problem, sb: Sandbox, progress: Progress) -> Preflight:
    need = max(1, settings.HARDTESTS_MIN_ORACLES)
    samples = [(s["input"], s["output"]) for s in problem.samples or []
               if isinstance(s, dict) and isinstance(s.get("input"), str) and isinstance(s.get("output"), str)]
    tests = samples + _official_tests(problem)
    every = oracles_in_order(problem)
    supported = [s for s in every if s.language in SUPPORTED_LANGUAGES]
    candidates = supported[: max(need, settings.HARDTESTS_MAX_ORACLES)]
    skipped = len(every) - len(supported)
    if not candidates and not skipped:
        raise MaterialiseError(FailureReason.NO_VALID_ORACLE, NO_ORACLE_MESSAGE)
    kit = kit_to_materialise(problem)
    judge = kit.output_judge.code if kit is not None and kit.output_judge is not None else None
    checker = Checker(judge, problem.comparison, tolerance=answer_tolerance(problem, kit))
    plain = Checker(None, problem.comparison, tolerance=checker.tolerance)
    limits = oracle_limits(problem)

    def run(solution: Solution) -> tuple[Solution, list[bytes] | None, str]:
        prog = compile_oracle(sb, solution)
        # an SE (a full disk) is the machine's: the run fails as a sandbox error, not the oracle
        machine_failure_check([prog.verdict], f"the compiler on oracle {solution}", prog.message or "")
        if not prog.ok:
            return solution, None, f"does not compile ({prog.verdict})"
        results = sb.run(prog, [t[0] for t in tests], limits) if tests else []
        machine_failure_check([r.verdict for r in results], f"oracle {solution}",
                              next((r.stderr for r in results if r.verdict == Verdict.SE), ""))
        failing = [(i, r) for i, r in enumerate(results, 1) if not r.ok]
        if failing:
            return solution, None, f"{failing[0][1].verdict} on test #{failing[0][0]} of the pre-flight"
        return solution, [r.stdout for r in results], "ran"

    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(run, candidates))
    finished = [(s, outs) for s, outs, _ in runs if outs is not None]
    accepted: dict[int, list[bool]] = {}
    outs: list[bytes] | None
    for solution, outs in finished:
        triples = [(text, out, expected.encode()) for (text, expected), out in zip(tests, outs, strict=True)]
        judged = checker.accepts(sb, triples) if judge is not None else [(False, "")] * len(triples)
        # Leniently: what the judge accepts, or what the comparison accepts (the judge may be an old, wrong one).
        accepted[solution.pk] = [ok or _lenient(plain, ref, out or b"")
                                 for (ok, _), (_, out, ref) in zip(judged, triples, strict=True)]
    # A test no oracle reproduces says more about the test (several right answers) than about the oracles.
    disputed = {i for i in range(len(tests)) if len(finished) >= 2 and not any(accepted[s.pk][i] for s, _ in finished)}
    notes = []
    if disputed:
        notes.append(f"pre-flight: no oracle reproduces the expected output of test(s) "
                     f"#{', #'.join(str(i + 1) for i in sorted(disputed))}; not held against them")
    passed: list[Solution] = []
    outputs: dict[int, list[bytes | None]] = {}
    mismatched: list[tuple[Solution, int]] = []
    for solution, outs, note in runs:
        if outs is not None:
            wrong = [i for i, ok in enumerate(accepted[solution.pk]) if not ok and i not in disputed]
            if wrong:
                note = f"wrong answer on pre-flight test #{wrong[0] + 1}"
                if all(another_answer(tests[i][1].encode(), outs[i] or b"") for i in wrong):
                    mismatched.append((solution, wrong[0] + 1))
            else:
                passed.append(solution)
                outputs[solution.pk] = list(outs[: len(samples)])
                note = f"passes {len(tests)} sample/official test(s)"
        notes.append(f"oracle {solution} (rank {solution.reliability}): {note}")
    if judge is None and passed and len(passed) < need:
        # Without a judging function a different output is not yet a wrong one (another witness, another
        # order): an oracle that finishes everywhere is kept provisionally so that the run can find out
        # (agreement on the generated inputs, or a judging function asked for), as HardTestGen only asks
        # an oracle to compile and run here. Its outputs are not used in the judge's self-checks.
        for solution, test in mismatched[: need - len(passed)]:
            passed.append(solution)
            notes.append(f"oracle {solution}: kept provisionally (its output on pre-flight test #{test} differs from "
                         "the expected one, which a problem with several right answers allows; no judging function "
                         "yet)")
        passed.sort(key=lambda s: [c.pk for c in candidates].index(s.pk))
    for line in notes:
        progress.log(line)
    if len(passed) < need:
        unsupported = f"; {skipped} more in unsupported languages" if skipped else ""
        raise MaterialiseError(
            FailureReason.NO_VALID_ORACLE,
            f"{len(passed)} of {len(candidates)} oracle(s) in a supported language compile and pass the samples"
            f"{' and official tests' if len(tests) > len(samples) else ''}{unsupported}; at least {need} needed "
            f"(HARDTESTS_MIN_ORACLES)\n" + "\n".join(notes),
        )
    return Preflight(passed, outputs, notes)
