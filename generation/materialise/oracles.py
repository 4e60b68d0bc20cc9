"""Oracle agreement: the one function that turns inputs into trusted outputs.

Used by materialisation (many inputs) and by studies adding one suggested input, with one
set of limits (problems.judging.oracle_limits / checker_limits). Up to HARDTESTS_MAX_ORACLES
usable oracles are tried in order: reliability rank first, and among equal ranks compiled
languages before Python (as HardTestGen prefers C++ oracles, for speed). An oracle is
skipped when it does not compile or fails on most inputs. Each new oracle is compared with
every earlier usable one; the first pair agreeing on at least HARDTESTS_ORACLE_AGREEMENT of
the inputs wins, and the agreeing inputs are kept with the more reliable oracle's output.

Agreement on a pair is decided by the judging function when there is one (on every pair,
not only where the outputs differ), otherwise by the problem's comparison. The share is
counted over inputs where at least one of the pair finished: an input that makes both
oracles crash is dropped, one that makes only one crash counts as a disagreement.

The judging function is checked on the way: it must accept each oracle's output against
itself, and accept outputs that are equal token for token. A judge that does not is wrong
(it would reject correct programs), and JudgeRejects names the cases.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import F

from generation.materialise.inputs import machine_failure_check, run_checker_calls
from generation.materialise.reproducible import compile_oracle
from generation.materialise.testlib import testlib_checker_accepts
from generation.materialise.tolerance import Tolerance, is_standard_judge, within_tolerance
from generation.materialise.types import (
    NO_ORACLE_MESSAGE,
    MaterialiseError,
    NullProgress,
    Progress,
    SandboxClock,
)
from generation.models import FailureReason
from problems.judging import oracle_limits
from problems.models import SUPPORTED_LANGUAGES, Language, Problem, Solution
from sandbox import Sandbox, compare_outputs, compare_tokens

# An oracle that fails (TLE, RE, ...) on more than this share of the inputs is not an oracle here.
MAX_FAILING_SHARE = 0.5
COMPILED = frozenset({Language.CPP, Language.JAVA})
MAX_CASES = 5
# Below this share of agreement (with no judging function), disagreement looks like several right answers.
MANY_ANSWERS = 0.5
# ... or when at least this share of the disagreements look like another answer (another_answer).
WITNESS_SHARE = 0.8
CROSS_INPUTS = 20


@dataclass
class OracleRun:
    solution: Solution
    outputs: list[bytes | None]  # None where the oracle did not finish normally


@dataclass
class Agreement:
    primary: OracleRun
    secondary: OracleRun | None  # None: one oracle only, allowed by HARDTESTS_MIN_ORACLES=1
    mask: list[bool]
    counted: int  # inputs where at least one oracle of the pair finished

    @property
    def share(self) -> float:
        return sum(self.mask) / self.counted if self.counted else 0.0

    @property
    def unverified(self) -> bool:
        return self.secondary is None


@dataclass
class JudgeCase:
    input: str
    candidate: str
    reference: str
    why: str = ""


class JudgeRejects(MaterialiseError):
    """The judging function rejects outputs it must accept; `cases` are fed back to the LLM."""

    def __init__(self, message: str, cases: list[JudgeCase]) -> None:
        super().__init__(FailureReason.JUDGE_INVALID, message)
        self.cases = cases


# What a judging function may accept of answers a correct program printed for other inputs: at most this
# share when it was asked for because oracles disagree, and less than all of them (or it must reject an
# output that is no answer at all) for any judge a suite is made with.
MAX_CROSS_ACCEPTED = 0.8
MIN_CROSS_PAIRS = 5
NOT_AN_ANSWER = "hardtests: this line is not an answer\n"


class JudgeLenient(MaterialiseError):
    """The judging function accepts what no correct judge would (anything at all); `cases` say what."""

    def __init__(self, message: str, cases: list[JudgeCase]) -> None:
        super().__init__(FailureReason.JUDGE_INVALID, message)
        self.cases = cases


def cross_pairs(answers: list[tuple[str, str]]) -> list[tuple[str, bytes, bytes]]:
    """(input, an answer a correct program printed for another input, the reference for this input), where
    the two answers differ: what a judge that checks only an answer's form (or nothing) accepts."""
    pairs: list[tuple[str, bytes, bytes]] = []
    for shift in (1, 2, 3):
        if shift >= len(answers):
            break
        for i, (text, reference) in enumerate(answers):
            other = answers[(i + shift) % len(answers)][1]
            if other.split() != reference.split():
                pairs.append((text, other.encode(), reference.encode()))
    return pairs


def lenient_judge(sb: Sandbox, checker: Checker, answers: list[tuple[str, str]],
                  cross_share: float = 1.0) -> tuple[str, list[JudgeCase]] | None:
    """What a judging function accepts that it must not, said for the model, or None. `answers` are
    (input, correct output) pairs. Refused: an output that is no answer at all, accepted on every input;
    an empty output accepted where the reference is not empty (only when `cross_share` < 1, i.e. for a
    judge asked for because oracles disagree); more than `cross_share` of the answers printed for other
    inputs (all of them, by default, together with the empty output)."""
    given = [(text, ref) for text, ref in answers if ref.strip()]
    if not given:
        return None
    junk = [(text, NOT_AN_ANSWER.encode(), ref.encode()) for text, ref in given]
    empty = [(text, b"", ref.encode()) for text, ref in given]
    cross = cross_pairs(given)
    verdicts = [ok for ok, _ in checker.accepts(sb, junk + empty + cross)]
    junk_ok, empty_ok, cross_ok = (verdicts[:len(junk)], verdicts[len(junk):len(junk) + len(empty)],
                                   verdicts[len(junk) + len(empty):])
    text, ref = given[0]
    if len(given) >= 3 and all(junk_ok):
        return (f"output_judging_function accepts an output that is no answer at all ({NOT_AN_ANSWER.strip()!r}) "
                f"on every one of {len(given)} inputs; it must check the candidate's answer (a parse error is a "
                "wrong answer, never a right one)", [JudgeCase(text, NOT_AN_ANSWER, ref, "accepted")])
    if cross_share < 1.0 and any(empty_ok):
        at = empty_ok.index(True)
        return (f"output_judging_function accepts an empty output, which is never a correct answer here (input "
                f"{given[at][0][:300]!r}); it must check the candidate's answer, not accept everything",
                [JudgeCase(given[at][0], "", given[at][1], "accepted")])
    taken = [t for t, ok in zip(cross, cross_ok, strict=True) if ok]
    # By default only a judge that accepts everything it was shown (empty output included) is refused:
    # "print any number not in the list" rightly accepts most other inputs' answers.
    too_many = (len(taken) > cross_share * len(cross) if cross_share < 1.0
                else len(taken) == len(cross) and all(empty_ok))
    if len(cross) >= MIN_CROSS_PAIRS and too_many:
        text, other, reference = taken[0]
        return (f"output_judging_function accepts {len(taken)} of {len(cross)} answers that a correct program "
                f"printed for OTHER inputs, e.g. for input {text[:300]!r} (reference "
                f"{_text(reference)[:200]!r}) it accepts {_text(other)[:200]!r}; it must check that the candidate's "
                "answer is right for this input, not only its form",
                [JudgeCase(t[0], _text(t[1]), _text(t[2]), "accepted") for t in taken[:MAX_CASES]])
    return None


# Hostile outputs: what no correct answer can be, whatever the statement allows (a tolerance makes
# numbers close, several right answers make other values right; neither makes these right). Each
# replaces the reference's first number, where it has one; the others replace or extend the output.
NEVER_NUMBERS = ("nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e400", "-1e400", "9" * 400)
# Finite values fed too: wrong unless a tolerance or several answers allow them (then not refused).
ODD_NUMBERS = ("-0", "1e308", "-1e308")
GARBAGE = b"\xff\xfe\x00\x1b[2J\xc3("
HOSTILE_ANSWERS = 3
_TOKEN = re.compile(r"\S+")
_NUMBERISH = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def hostile_outputs(reference: str) -> list[tuple[str, bytes, bool]]:
    """(what it is, the output, whether no statement can make it right) for one reference output."""
    spans = [m.span() for m in _TOKEN.finditer(reference)]
    found: list[tuple[str, bytes, bool]] = [
        ("the empty output", b"", True),
        ("garbage bytes", GARBAGE + b"\n", True),
        ("the answer followed by an extra token", (reference.rstrip() + " 0\n").encode(), True),
        ("the answer followed by garbage bytes", reference.rstrip().encode() + b" " + GARBAGE + b"\n", True),
    ]
    number = next(((a, b) for a, b in spans if _NUMBERISH.match(reference[a:b])), None)
    if number is not None:
        a, b = number
        for value, never in [(v, True) for v in NEVER_NUMBERS] + [(v, False) for v in ODD_NUMBERS]:
            if value != reference[a:b]:
                shown = value if len(value) < 20 else f"a {len(value)}-digit number"
                found.append((f"{shown} in place of {reference[a:b][:40]!r}",
                              (reference[:a] + value + reference[b:]).encode(), never))
    return found


def hostile_judge(sb: Sandbox, checker: Checker, answers: list[tuple[str, str]],
                  several_answers: bool) -> tuple[str, list[JudgeCase]] | None:
    """What a judging function accepts of hostile outputs (hostile_outputs) against the first
    HOSTILE_ANSWERS correct (input, output) pairs, said for the model, or None. An output the
    exact comparison rejects is refused unless the statement gives a reason to accept it: numbers
    within the problem's tolerance (checker.tolerance), or, where several answers may be right
    (`several_answers`), a finite value in place of another. NaN is the classic: `abs(a - b) > tol`
    is False for a = nan, so a judge written that way accepts it."""
    given = [(text, ref) for text, ref in answers if ref.strip()][:HOSTILE_ANSWERS]
    probes: list[tuple[str, str, bytes, str]] = []  # (what, input, candidate, reference)
    for text, ref in given:
        for what, candidate, never in hostile_outputs(ref):
            if compare_tokens(ref.encode(), candidate):
                continue
            if not never and (several_answers or (checker.tolerance is not None
                                                  and within_tolerance(ref, candidate, checker.tolerance))):
                continue
            probes.append((what, text, candidate, ref))
    if not probes:
        return None
    verdicts = checker.accepts(sb, [(text, candidate, ref.encode()) for _, text, candidate, ref in probes])
    taken = [probe for probe, (ok, _) in zip(probes, verdicts, strict=True) if ok]
    if not taken:
        return None
    kinds = list(dict.fromkeys(what.split(" in place of ")[0] for what, *_ in taken))
    what, text, candidate, ref = taken[0]
    return (f"output_judging_function accepts outputs that no correct answer can be ({', '.join(kinds[:6])}): "
            f"e.g. for input {text[:200]!r} (reference {ref[:200]!r}) it accepts {_text(candidate)[:200]!r} "
            f"({what}). It must reject any output that is not a valid answer: numbers must be finite (NaN "
            "compares False with everything, so `abs(a - b) > tol` lets it through: test the accepting "
            "condition, e.g. `abs(a - b) <= tol`, and reject nan/inf), the output must hold exactly the "
            "expected tokens (no extra ones), and anything it cannot parse is a wrong answer",
            [JudgeCase(t, _text(c), r, f"accepted: {w}") for w, t, c, r in taken[:MAX_CASES]])


class ManyAnswers(MaterialiseError):
    """Oracles disagree on most inputs with no judging function: `cases` hold an input and the two
    oracles' outputs (candidate = the second oracle's, reference = the first's)."""

    def __init__(self, message: str, cases: list[JudgeCase], first: Solution, second: Solution,
                 answers: list[tuple[str, str]] | None = None) -> None:
        super().__init__(FailureReason.OUTPUT_VERIFICATION_FAILED, message)
        self.cases = cases
        self.oracles = (first, second)
        # (input, the first oracle's output) on up to CROSS_INPUTS inputs: a judging function asked for must
        # not accept one input's answer for another (a judge that accepts anything would hide an oracle bug).
        self.answers = answers or []


@dataclass
class Checker:
    """How two outputs of one input are compared: the judging function, else the problem's comparison
    (with `tolerance`, numbers within it absolute or relative, other tokens exact)."""

    judge_code: str | None
    comparison: str = "tokens"
    clock: SandboxClock = field(default_factory=SandboxClock)
    tolerance: Tolerance | None = None
    # "cpp": judge_code is a testlib checker (generation/materialise/testlib.py), not Python
    language: str = "python3"

    def compare(self, reference: bytes, candidate: bytes) -> bool:
        """The comparison without a judging function."""
        if self.tolerance is not None:
            return within_tolerance(reference, candidate, self.tolerance)
        return compare_outputs(reference, candidate, self.comparison)

    def accepts(self, sb: Sandbox, triples: Sequence[tuple[str, bytes, bytes]]) -> list[tuple[bool, str]]:
        """(accepted, error) for each (input, candidate, reference)."""
        if self.judge_code is None:
            return [(self.compare(ref, cand), "") for _, cand, ref in triples]
        if self.language == "cpp":
            return testlib_checker_accepts(sb, self.judge_code, triples, self.clock)
        args = [(text, _text(cand), _text(ref)) for text, cand, ref in triples]
        results = run_checker_calls(sb, self.judge_code, "output_judging_function", args, self.clock)
        verdicts: list[tuple[bool, str]] = []
        for r in results:
            if r.ok and r.value is True:
                verdicts.append((True, ""))
            elif r.ok:
                verdicts.append((False, f"returned {r.value!r:.80}"))
            else:
                verdicts.append((False, f"failed: {r.error or r.verdict}"))
        return verdicts


def _text(data: bytes | str | None) -> str:
    if isinstance(data, str):
        return data
    return (data or b"").decode("utf-8", "replace")


def oracles_in_order(problem: Problem) -> list[Solution]:
    """Every oracle: reliability rank first, then compiled languages, then age."""
    oracles = list(problem.solutions.filter(role=Solution.Role.ORACLE)
                   .order_by(F("reliability").asc(nulls_last=True), "id"))
    big = 10**9
    return sorted(oracles, key=lambda s: (s.reliability if s.reliability is not None else big,
                                          0 if s.language in COMPILED else 1, s.pk))


def supported_oracles(problem: Problem) -> list[Solution]:
    return [s for s in oracles_in_order(problem) if s.language in SUPPORTED_LANGUAGES]


def _run_oracle(sb: Sandbox, solution: Solution, inputs: list[str], problem: Problem,
                clock: SandboxClock) -> tuple[OracleRun | None, str]:
    prog = compile_oracle(sb, solution)
    machine_failure_check([prog.verdict], f"the compiler on oracle {solution}", prog.message or "")
    if not prog.ok:
        return None, f"does not compile ({prog.verdict}): {prog.message.strip()[-200:]}"
    results = sb.run(prog, inputs, oracle_limits(problem))
    clock.add(results)
    machine_failure_check([r.verdict for r in results], f"oracle {solution}")
    outputs = [r.stdout if r.ok else None for r in results]
    failing = sum(1 for o in outputs if o is None)
    if inputs and failing / len(inputs) > MAX_FAILING_SHARE:
        verdicts = sorted({str(r.verdict) for r in results if not r.ok})
        return None, f"fails on {failing}/{len(inputs)} inputs ({', '.join(verdicts)})"
    note = f"; failed on {failing} input(s)" if failing else ""
    return OracleRun(solution, outputs), f"ran on {len(inputs)} inputs{note}"


def another_answer(expected: bytes, output: bytes) -> bool:
    """Whether an output that differs from the expected one looks like another right answer: as many
    tokens, some of them equal in place (the verdict or the optimal value), others not (the witness).
    "3" for "2" does not; "YES 4 4" for "YES 2 6" does."""
    want, got = expected.split(), output.split()
    return len(want) == len(got) > 1 and any(a == b for a, b in zip(want, got, strict=True))


def cases_text(cases: list[JudgeCase]) -> str:
    return "\n".join(f"- input {c.input[:300]!r}: candidate {c.candidate[:200]!r}, reference {c.reference[:200]!r}"
                     + (f" ({c.why[:200]})" if c.why else "") for c in cases[:MAX_CASES])


def self_check(sb: Sandbox, checker: Checker, run: OracleRun, inputs: list[str]) -> None:
    """The judging function must accept an oracle's output against itself."""
    if checker.judge_code is None:
        return
    finished = [i for i, out in enumerate(run.outputs) if out is not None]
    triples = [(inputs[i], run.outputs[i] or b"", run.outputs[i] or b"") for i in finished]
    rejected = [JudgeCase(t[0], _text(t[1]), _text(t[2]), why)
                for t, (ok, why) in zip(triples, checker.accepts(sb, triples), strict=True) if not ok]
    if rejected:
        raise JudgeRejects(f"the output judging function rejects oracle {run.solution}'s output compared with "
                           f"itself on {len(rejected)} of {len(finished)} inputs:\n{cases_text(rejected)}", rejected)


def compare_runs(sb: Sandbox, checker: Checker, primary: OracleRun, secondary: OracleRun,
                 inputs: list[str]) -> Agreement:
    mask = [False] * len(inputs)
    counted = 0
    pairs: list[int] = []
    for i, (a, b) in enumerate(zip(primary.outputs, secondary.outputs, strict=True)):
        if a is None and b is None:
            continue
        counted += 1
        if a is not None and b is not None:
            pairs.append(i)
    triples = [(inputs[i], secondary.outputs[i] or b"", primary.outputs[i] or b"") for i in pairs]
    wrong: list[JudgeCase] = []
    for i, triple, (ok, why) in zip(pairs, triples, checker.accepts(sb, triples), strict=True):
        mask[i] = ok
        if not ok and checker.judge_code is not None and (compare_tokens(triple[1], triple[2]) or (
                checker.tolerance is not None and within_tolerance(triple[2], triple[1], checker.tolerance))):
            wrong.append(JudgeCase(triple[0], _text(triple[1]), _text(triple[2]),
                                   why or "equal token for token, or numbers within the problem's tolerance"))
    if wrong:
        raise JudgeRejects(f"the output judging function rejects outputs equal token for token (or numbers within "
                           f"the tolerance the problem allows) on {len(wrong)} input(s):\n{cases_text(wrong)}", wrong)
    return Agreement(primary, secondary, mask, counted)


def agree(
    *,
    sb: Sandbox,
    problem: Problem,
    inputs: list[str],
    checker: Checker,
    oracles: list[Solution] | None = None,
    progress: Progress | None = None,
    clock: SandboxClock | None = None,
    min_oracles: int | None = None,
    deadline: float | None = None,
) -> Agreement:
    """Outputs for `inputs` from oracles that agree; raises MaterialiseError (or JudgeRejects)."""
    progress = progress or NullProgress()
    clock = clock or checker.clock
    threshold = settings.HARDTESTS_ORACLE_AGREEMENT
    max_oracles = settings.HARDTESTS_MAX_ORACLES
    need = max(1, settings.HARDTESTS_MIN_ORACLES if min_oracles is None else min_oracles)
    order = supported_oracles(problem) if oracles is None else list(oracles)
    if not order:
        raise MaterialiseError(FailureReason.NO_VALID_ORACLE, NO_ORACLE_MESSAGE)
    if len(order) < need:
        raise MaterialiseError(FailureReason.NO_VALID_ORACLE,
                               f"{len(order)} oracle(s) in a supported language; {need} needed")
    usable: list[OracleRun] = []
    best: Agreement | None = None
    position = 0
    with ThreadPoolExecutor(max_workers=2) as pool:
        while position < len(order) and len(usable) < max_oracles:
            # The first two run side by side: in the common case they agree and we are done.
            wave = order[position: position + (2 if not usable else 1)]
            position += len(wave)
            runs = list(pool.map(lambda sol: (sol, *_run_oracle(sb, sol, inputs, problem, clock)), wave))
            progress.check_cancel()
            if deadline is not None and time.monotonic() > deadline:
                raise MaterialiseError(FailureReason.OUTPUT_BUDGET_EXCEEDED,
                                       f"running oracles on {len(inputs)} inputs took longer than "
                                       f"{settings.HARDTESTS_OUTPUT_BUDGET_S:g} s (HARDTESTS_OUTPUT_BUDGET_S)")
            for solution, run, note in runs:
                progress.log(f"oracle {solution} (rank {solution.reliability}): {note}")
                if run is None:
                    continue
                self_check(sb, checker, run, inputs)
                for earlier in usable:
                    agreement = compare_runs(sb, checker, earlier, run, inputs)
                    progress.log(f"oracles {earlier.solution} and {solution} agree on "
                                 f"{sum(agreement.mask)}/{agreement.counted} inputs where one finished")
                    if best is None or agreement.share > best.share:
                        best = agreement
                    if agreement.share >= threshold and agreement.counted:
                        return agreement
                usable.append(run)
                if len(usable) >= max_oracles:
                    break
    if len(usable) == 1 and need == 1:
        only = usable[0]
        progress.log(f"warning: one working oracle ({only.solution}); its outputs are unverified")
        return Agreement(only, None, [o is not None for o in only.outputs], len(inputs))
    if len(usable) < 2:
        raise MaterialiseError(FailureReason.NO_VALID_ORACLE,
                               f"only {len(usable)} oracle(s) compiled and ran on most inputs; two must agree")
    share = f"{best.share:.0%}" if best else "0%"
    message = f"no two of {len(usable)} oracles agree on {threshold:.0%} of the inputs (best pair: {share})"
    no_judge = checker.judge_code is None or is_standard_judge(checker.judge_code)
    if best is not None and best.secondary is not None and no_judge:
        cases = [JudgeCase(inputs[i], _text(best.secondary.outputs[i]), _text(best.primary.outputs[i]))
                 for i, ok in enumerate(best.mask)
                 if not ok and best.primary.outputs[i] is not None and best.secondary.outputs[i] is not None]
        # Oracles that passed the samples yet disagree on most inputs, or disagree only as other witnesses
        # do (same verdict or value, another pair or path): more likely several right answers compared as
        # text than wrong oracles. The caller may ask for a judging function (whose reply may say no).
        witnesses = sum(another_answer(c.reference.encode(), c.candidate.encode()) for c in cases)
        if cases and (best.share < MANY_ANSWERS or witnesses >= WITNESS_SHARE * len(cases)):
            why = "most inputs" if best.share < MANY_ANSWERS else "inputs where both print another witness"
            raise ManyAnswers(message + f"; oracles {best.primary.solution} and {best.secondary.solution} pass the "
                              f"samples but disagree on {why}, as when several answers are right",
                              cases[:MAX_CASES], best.primary.solution, best.secondary.solution,
                              [(inputs[i], _text(out)) for i, out in enumerate(best.primary.outputs)
                               if out is not None][:CROSS_INPUTS])
    raise MaterialiseError(FailureReason.OUTPUT_VERIFICATION_FAILED, message)
