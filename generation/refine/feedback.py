"""Feedback refinement (CodeContests-O): judge the tuning candidates, send the misjudged back, repeat.

Round 0 is the suite the run made. While its TPR (gold-AC candidates accepted) is below
HARDTESTS_REFINE_ALPHA or its TNR (gold non-AC candidates rejected) below HARDTESTS_REFINE_BETA,
and fewer than HARDTESTS_REFINE_MAX_ROUNDS rounds have run, the false negatives (program, failing
test, expected and actual output, judge message) and false positives (program, the candidate's
note) go to the LLM with the current kit; its revised keys make a new kit version and a new
suite, which is judged again. Only tuning candidates are shown or used to choose; held-out
candidates are judged for the record, and veto: a round whose suite fails a candidate known to be
correct (gold AC, tuning or held out) is never activated, and the log names the program and the test; among the
others the best (TNR, then TPR, then fewer tests) is returned for activation; the other suites
are failed. When every round fails a correct program the run fails as `correct_program_rejected`. A revised validator or judge is used
only after passing the same self-checks as call 1.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Sum

from generation.asking import Conversation, Review, ask
from generation.materialise import Materialised, MaterialiseError, materialise_kit
from generation.materialise.testlib import testlib_parts
from generation.materialise.types import RunFailed
from generation.models import FailureReason, GenerationRun, LLMCall, RefinementRound
from generation.parsing import ReplyInvalid, ValidatorReply, extract_json
from generation.preflight import Preflight
from generation.recorder import RunRecorder
from generation.refine.repair import (
    DIRECT_KEY,
    HACKING_KEY,
    REGULAR_KEY,
    KitChanges,
    kit_unchanged,
    parse_repair_reply,
    prompt_messages,
)
from generation.refine.split import HELD_OUT, TUNING, Split, candidate_split
from generation.refine.testlib import (
    REFINE_TESTLIB_PROMPT,
    refine_parser,
    refine_review,
    refine_values,
    revised_testlib_kit,
)
from problems.judging import judge_code, limits_for, suite_cache
from problems.models import CodeOrigin, Solution, TestKit, TestSuite
from problems.services import judge_create, kit_create, suite_fail, validator_create
from sandbox import Sandbox

REFINE_PROMPT = "refine_v1"
KIT_KEYS = ("input_validator", "needs_custom_output_judging_function", "output_judging_function",
            DIRECT_KEY, REGULAR_KEY, HACKING_KEY)
MAX_SHOWN = 3
CODE_CHARS = 6000
PREVIEW_CHARS = 1500
Build = Callable[[GenerationRun, RunRecorder, TestKit, Materialised], TestSuite]


@dataclass
class Miss:
    solution: Solution
    kind: str  # false_negative | false_positive
    verdict: str
    ordinal: int | None = None
    message: str = ""


@dataclass
class Score:
    tp: int = 0
    fn: int = 0
    tn: int = 0
    fp: int = 0
    misses: list[Miss] = field(default_factory=list)

    @property
    def tpr(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def tnr(self) -> float | None:
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else None

    def as_dict(self) -> dict[str, object]:
        return {"tp": self.tp, "fn": self.fn, "tn": self.tn, "fp": self.fp, "tpr": self.tpr, "tnr": self.tnr,
                "candidates": self.tp + self.fn + self.tn + self.fp}

    def good_enough(self) -> bool:
        # A rejected correct program is never good enough, whatever HARDTESTS_REFINE_ALPHA says.
        return (self.fn == 0 and (self.tpr is None or self.tpr >= settings.HARDTESTS_REFINE_ALPHA)
                and (self.tnr is None or self.tnr >= settings.HARDTESTS_REFINE_BETA))

    def false_negatives(self) -> list[Miss]:
        return [m for m in self.misses if m.kind == "false_negative"]


def ruled_out(score: Score, held: Score | None = None) -> str:
    """Why a suite with these scores may not become active ("" when it may): the programs known to be
    correct that it fails, tuning or held out, each with the test that failed it. Held-out programs
    only ever veto a suite: they are never shown to the model nor used to rank rounds."""
    misses = [(m, "") for m in score.false_negatives()] + [(m, ", held out") for m in (held.false_negatives()
                                                                                        if held else [])]
    return "; ".join(f"known-correct program {m.solution.name or m.solution.pk!s} (#{m.solution.pk}{side}) gets "
                     f"{m.verdict} on test #{m.ordinal}" for m, side in misses[:5])


def score_suite(sb: Sandbox, suite: TestSuite, solutions: list[Solution]) -> Score:
    """Judge each candidate (first failure ends it); a sandbox error is an error, never a verdict."""
    score = Score()
    for solution in solutions:
        result = judge_code(problem=suite.problem, suite=suite, language=solution.language, code=solution.code,
                            sandbox=sb)
        if result.verdict == "SE":
            raise RunFailed(FailureReason.SANDBOX_ERROR,
                            f"sandbox error judging candidate {solution} during refinement: {result.message[:300]}")
        accepted = result.verdict == "AC"
        failing = next((t.ordinal for t in result.tests if t.verdict != "AC"), None)
        if solution.gold_verdict == Solution.GoldVerdict.AC:
            if accepted:
                score.tp += 1
            else:
                score.fn += 1
                score.misses.append(Miss(solution, "false_negative", result.verdict, failing, result.message))
        elif accepted:
            score.fp += 1
            score.misses.append(Miss(solution, "false_positive", result.verdict))
        else:
            score.tn += 1
    return score


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")[:PREVIEW_CHARS]


def _feedback(sb: Sandbox, suite: TestSuite, misses: list[Miss]) -> tuple[str, list[dict[str, object]]]:
    """The prompt text about the misjudged programs, and what was sent, for the round record."""
    parts: list[str] = []
    sent: list[dict[str, object]] = []
    loaded = {t.ordinal: t for t in suite_cache.get(suite).tests}
    negatives = [m for m in misses if m.kind == "false_negative"][:MAX_SHOWN]
    positives = [m for m in misses if m.kind == "false_positive"][:MAX_SHOWN]
    for i, miss in enumerate(negatives, 1):
        test = loaded.get(miss.ordinal) if miss.ordinal is not None else None
        actual = ""
        if test is not None:
            prog = sb.compile(miss.solution.language, miss.solution.code)
            if prog.ok:
                actual = _text(sb.run(prog, [test.input], limits_for(suite.problem))[0].stdout)
        row: Mapping[str, Any] = (suite.tests.filter(ordinal=miss.ordinal).values("kind", "generator").first()
                                  if miss.ordinal is not None else None) or {}
        parts.append(
            f"## False negative {i}: a correct program got {miss.verdict} on test #{miss.ordinal} "
            f"({row.get('kind', '?')}, from {row.get('generator') or '?'})\n"
            f"Program ({miss.solution.language}):\n```\n{miss.solution.code[:CODE_CHARS]}\n```\n"
            f"Test input:\n```\n{_text(test.input) if test else '?'}\n```\n"
            f"Expected output:\n```\n{_text(test.output) if test else '?'}\n```\n"
            f"Program's output:\n```\n{actual}\n```\n"
            + (f"Judge message: {miss.message[:500]}\n" if miss.message else ""))
        sent.append({"kind": miss.kind, "solution": miss.solution.pk, "name": miss.solution.name,
                     "verdict": miss.verdict, "test": miss.ordinal, "generator": row.get("generator", "")})
    for i, miss in enumerate(positives, 1):
        note = miss.solution.note.strip()
        parts.append(
            f"## False positive {i}: a wrong program (gold verdict {miss.solution.gold_verdict}) passed every test\n"
            f"Program ({miss.solution.language}):\n```\n{miss.solution.code[:CODE_CHARS]}\n```\n"
            + (f"What it does wrong: {note}\n" if note else "What it does wrong is not known.\n"))
        sent.append({"kind": miss.kind, "solution": miss.solution.pk, "name": miss.solution.name,
                     "verdict": miss.solution.gold_verdict, "note": note[:200]})
    return "\n".join(parts), sent


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def parse_refine_reply(reply: str) -> KitChanges:
    """The kit keys of calls 1 and 2, each optional (null or absent = unchanged)."""
    data = extract_json(reply, KIT_KEYS)
    changed: KitChanges = {}
    validator = data.get("input_validator")
    if validator is not None:
        if not isinstance(validator, str) or "validate_input" not in validator:
            raise ReplyInvalid("'input_validator' must be Python source defining validate_input, or null")
        changed["input_validator"] = validator
    judge = data.get("output_judging_function")
    if judge is not None:
        if not isinstance(judge, str) or "output_judging_function" not in judge:
            raise ReplyInvalid("'output_judging_function' must be Python source defining output_judging_function, "
                               "or null")
        changed["output_judging_function"] = judge
    try:
        changed.update(parse_repair_reply(reply))
    except ReplyInvalid as exc:
        if "changes nothing" not in str(exc):
            raise
    if not changed:
        raise ReplyInvalid("the reply changes nothing: revise the generators, validator or judge")
    return changed


def _revised_kit(run: GenerationRun, kit: TestKit, changed: KitChanges, number: int,
                 misses: list[Miss]) -> TestKit:
    model = run.model_name or settings.HARDTESTS_LLM_MODEL
    note = f"generation run #{run.pk}, refinement round {number}"
    with transaction.atomic():
        validator = kit.validator
        if "input_validator" in changed:
            validator = validator_create(problem=kit.problem, code=changed["input_validator"], origin=CodeOrigin.LLM,
                                         model_name=model, change_note=note)
        judge = kit.output_judge
        if "output_judging_function" in changed:
            judge = judge_create(problem=kit.problem, code=changed["output_judging_function"], origin=CodeOrigin.LLM,
                                 model_name=model, change_note=note)
        new = kit_create(
            problem=kit.problem, origin=CodeOrigin.LLM, validator=validator, output_judge=judge,
            needs_output_judge=kit.needs_output_judge or judge is not None,
            direct_inputs=changed.get(DIRECT_KEY, kit.direct_inputs),
            regular_generator=changed.get(REGULAR_KEY, kit.regular_generator),
            hacking_generator=changed.get(HACKING_KEY, kit.hacking_generator),
            batch_generator=kit.batch_generator, model_name=model, created_by=run.created_by,
            extra={"generation_run": run.pk, "stage": "refinement", "round": number,
                   "parent_version": kit.version, "changed": sorted(changed),
                   "about": [f"{m.kind}: {m.solution.name or m.solution.pk}" for m in misses[:20]]},
        )
        GenerationRun.objects.filter(pk=run.pk).update(kit=new)
    return TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=new.pk)


def _self_check(session: Conversation | None, kit: TestKit) -> Review[KitChanges] | None:
    """The call-1 self-checks for a revised validator or judge, fed back through ask()."""
    if session is None or session.review is None:
        return None
    check = session.review

    def review(changed: KitChanges) -> tuple[str, str] | None:
        if "input_validator" not in changed and "output_judging_function" not in changed:
            return None
        proposed = ValidatorReply(
            input_validator=str(changed.get("input_validator") or (kit.validator.code if kit.validator else "")),
            needs_output_judge=bool(changed.get("output_judging_function")) or kit.output_judge is not None,
            output_judging_function=changed.get("output_judging_function")
            or (kit.output_judge.code if kit.output_judge else None))
        return check(proposed)

    return review


def _tokens(run: GenerationRun, purpose: str) -> tuple[int, int]:
    sums = LLMCall.objects.filter(run=run, purpose__startswith=purpose).aggregate(
        p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    return sums["p"] or 0, sums["c"] or 0


def _inputs_of(suite: TestSuite) -> set[str]:
    return set(suite.tests.values_list("input_sha256", flat=True))


@dataclass
class Round:
    number: int
    kit: TestKit
    result: Materialised
    suite: TestSuite
    tuning: Score
    held: Score
    record: RefinementRound


def _record(run: GenerationRun, number: int, kit: TestKit, suite: TestSuite, tuning: Score, held: Score,
            split: Split, previous: TestSuite | None, sent: list[dict[str, object]], tokens: tuple[int, int],
            note: str = "") -> RefinementRound:
    now = _inputs_of(suite)
    before = _inputs_of(previous) if previous is not None else set()
    return RefinementRound.objects.create(
        run=run, number=number, kit=kit, suite=suite, test_count=len(now),
        tests_added=len(now - before) if previous is not None else len(now),
        tests_removed=len(before - now), sent=sent, prompt_tokens=tokens[0], completion_tokens=tokens[1],
        scores={TUNING: tuning.as_dict(), HELD_OUT: held.as_dict() if split.held_out else None,
                "split": split.name, "split_note": split.note}, note=note[:500])


def _rank(r: Round) -> tuple[bool, float, float, int]:
    """Zero false negatives first, held-out programs known to be correct included (a hard requirement:
    the caller never activates a round without it), then TNR, then TPR, then fewer tests (tuning)."""
    tnr = r.tuning.tnr if r.tuning.tnr is not None else 1.0
    tpr = r.tuning.tpr if r.tuning.tpr is not None else 1.0
    return (r.tuning.fn == 0 and r.held.fn == 0, tnr, tpr, -r.record.test_count)


def known_correct_gate(run: GenerationRun, rec: RunRecorder, sb: Sandbox, suite: TestSuite) -> None:
    """For runs without refinement (from a kit): a new suite that fails a tuning candidate known to be
    correct is never activated; raises RunFailed(correct_program_rejected) naming program and test."""
    split = candidate_split(run.problem)
    correct = [s for s in split.tuning if s.gold_verdict == Solution.GoldVerdict.AC]
    held = [s for s in split.held_out if s.gold_verdict == Solution.GoldVerdict.AC]
    if not correct and not held:
        return
    rec.stage(GenerationRun.Stage.JUDGING)
    why = ruled_out(score_suite(sb, suite, correct), score_suite(sb, suite, held))
    if why:
        suite_fail(suite=suite, note=f"generation run #{run.pk}: {why}")
        raise RunFailed(FailureReason.CORRECT_PROGRAM_REJECTED, f"suite v{suite.version} not activated: {why}")
    rec.log(f"suite v{suite.version} accepts all {len(correct) + len(held)} known-correct candidate(s)")


def _python_round(run: GenerationRun, rec: RunRecorder, sb: Sandbox, flight: Preflight,
                  session: Conversation | None, k: TestKit, number: int, scores: str, text: str,
                  misses: list[Miss]) -> tuple[TestKit, Materialised]:
    """One round of a Python kit: the kit keys back, whole modules per key."""
    messages = prompt_messages(REFINE_PROMPT, {
        "statement": run.problem.statement.strip(), "time_limit_ms": run.problem.time_limit_ms,
        "memory_limit_mb": run.problem.memory_limit_mb,
        "validator_code": (k.validator.code if k.validator else "(none)").rstrip(),
        "judge_code": (k.output_judge.code if k.output_judge else "(none)").rstrip(),
        "judge_note": "used" if k.output_judge else f"none: outputs are compared as {run.problem.comparison}",
        "direct_inputs": json.dumps(k.direct_inputs or [], indent=1)[:6000],
        "regular_code": k.regular_generator.rstrip() or "(none)",
        "hacking_code": k.hacking_generator.rstrip() or "(none)",
        "scores": scores, "feedback": text,
    })
    changed, _ = ask(run, rec, purpose=f"refine{number}", prompt_version=REFINE_PROMPT, messages=messages,
                     parse=parse_refine_reply, review=_self_check(session, k))
    if kit_unchanged(k, changed):
        raise RunFailed(FailureReason.LLM_REPLY_INVALID, "the model returned the kit unchanged")
    new_kit = _revised_kit(run, k, changed, number, misses)
    rec.log(f"kit v{new_kit.version}: revised {', '.join(sorted(changed))}")
    return new_kit, materialise_kit(kit=new_kit, progress=rec, sb=sb, oracles=flight.oracles)


def _testlib_round(run: GenerationRun, rec: RunRecorder, sb: Sandbox, flight: Preflight,
                   session: Conversation | None, k: TestKit, number: int, scores: str, text: str,
                   misses: list[Miss]) -> tuple[TestKit, Materialised]:
    """One round of a C++ kit (generation/refine/testlib.py): SEARCH/REPLACE blocks against its testlib
    programs and commands to add; a block that does not apply exactly is refused and sent back."""
    messages = prompt_messages(REFINE_TESTLIB_PROMPT, {**refine_values(run, k), "scores": scores, "feedback": text})
    changes, _ = ask(run, rec, purpose=f"refine{number}", prompt_version=REFINE_TESTLIB_PROMPT, messages=messages,
                     parse=refine_parser(k), review=refine_review(run, rec, sb))
    new_kit = revised_testlib_kit(run, k, changes, number,
                                  [f"{m.kind}: {m.solution.name or m.solution.pk}" for m in misses])
    rec.log(f"kit v{new_kit.version}: revised {', '.join(changes.changed)} ({changes.edits} SEARCH/REPLACE block(s))")
    return new_kit, materialise_kit(kit=new_kit, progress=rec, sb=sb, oracles=flight.oracles)


def refine_suite(run: GenerationRun, rec: RunRecorder, sb: Sandbox, flight: Preflight,
                 session: Conversation | None, kit: TestKit, result: Materialised, *, build: Build
                 ) -> TestSuite | None:
    """Build round 0's suite and refine it; the best round's BUILDING suite, or None when the
    problem has no labelled candidates (the caller then saves the suite as before)."""
    split = candidate_split(run.problem)
    if not split.tuning:
        return None
    rec.log(f"refinement: {split.note}")
    suite = build(run, rec, kit, result)
    rec.stage(GenerationRun.Stage.JUDGING)
    tuning, held = score_suite(sb, suite, split.tuning), score_suite(sb, suite, split.held_out)
    rounds = [Round(0, kit, result, suite, tuning, held,
                    # Round 0's cost is every call that made its kit (calls 1 and 2, review, repairs).
                    _record(run, 0, kit, suite, tuning, held, split, None, [], _tokens(run, "")))]
    rec.log(f"round 0: TPR {_percent(tuning.tpr)}, TNR {_percent(tuning.tnr)} on {len(split.tuning)} tuning "
            f"candidate(s), {suite.test_count} tests")
    max_rounds = max(0, settings.HARDTESTS_REFINE_MAX_ROUNDS)
    while not rounds[-1].tuning.good_enough() and len(rounds) <= max_rounds:
        last = rounds[-1]
        number = last.number + 1
        text, sent = _feedback(sb, last.suite, last.tuning.misses)
        scores = (f"TPR (correct programs accepted): {_percent(last.tuning.tpr)}, target at least "
                  f"{settings.HARDTESTS_REFINE_ALPHA:.0%}\nTNR (wrong programs rejected): "
                  f"{_percent(last.tuning.tnr)}, target at least {settings.HARDTESTS_REFINE_BETA:.0%}")
        k = last.kit
        rec.stage(GenerationRun.Stage.LLM_INPUTS)
        rec.log(f"refinement round {number}: sending {len(sent)} misjudged program(s)")
        revise = _testlib_round if testlib_parts(k).present else _python_round
        try:
            new_kit, new_result = revise(run, rec, sb, flight, session, k, number, scores, text, last.tuning.misses)
        except (RunFailed, MaterialiseError) as exc:
            if getattr(exc, "reason", "") in (FailureReason.CANCELLED, FailureReason.SANDBOX_ERROR):
                raise
            # A round that cannot make a suite (the LLM down or its reply unusable, the kit
            # failing) ends the loop; the earlier rounds are complete suites and still count.
            rec.log(f"refinement round {number} gave no suite: {str(exc).splitlines()[0][:300]}")
            RefinementRound.objects.create(run=run, number=number, sent=sent, note=str(exc)[:500],
                                           prompt_tokens=_tokens(run, f"refine{number}")[0],
                                           completion_tokens=_tokens(run, f"refine{number}")[1])
            break
        new_suite = build(run, rec, new_kit, new_result)
        rec.stage(GenerationRun.Stage.JUDGING)
        tuning, held = score_suite(sb, new_suite, split.tuning), score_suite(sb, new_suite, split.held_out)
        record = _record(run, number, new_kit, new_suite, tuning, held, split, last.suite, sent,
                         _tokens(run, f"refine{number}"))
        rounds.append(Round(number, new_kit, new_result, new_suite, tuning, held, record))
        rec.log(f"round {number}: TPR {_percent(tuning.tpr)}, TNR {_percent(tuning.tnr)}, "
                f"{new_suite.test_count} tests (+{record.tests_added} -{record.tests_removed})")
    for r in rounds:
        why = ruled_out(r.tuning, r.held)
        if why:
            rec.log(f"round {r.number} ruled out: {why}")
    best = max(rounds, key=_rank)
    if best.tuning.fn or best.held.fn:
        for r in rounds:
            suite_fail(suite=r.suite,
                       note=f"refinement round {r.number} of run #{run.pk}: {ruled_out(r.tuning, r.held)}")
        raise RunFailed(FailureReason.CORRECT_PROGRAM_REJECTED,
                        f"every round's suite fails a program known to be correct; round {best.number}: "
                        f"{ruled_out(best.tuning, best.held)}")
    for r in rounds:
        if r is not best:
            suite_fail(suite=r.suite, note=f"refinement round {r.number} of run #{run.pk}; round {best.number} chosen")
    RefinementRound.objects.filter(pk=best.record.pk).update(chosen=True)
    GenerationRun.objects.filter(pk=run.pk).update(kit=best.kit, counts=best.result.counts,
                                                   validator_errors=best.result.validator_errors)
    if len(rounds) > 1:
        rec.log(f"round {best.number} chosen (TNR {_percent(best.tuning.tnr)}, TPR {_percent(best.tuning.tpr)})")
    return best.suite
