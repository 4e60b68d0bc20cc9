"""Generator repair: before materialising, each generator is tried; a broken one goes back to the LLM.

A generator function is broken when its probe calls (HARDTESTS_REPAIR_PROBE_CALLS, seeded like
the real calls) all raise, exceed a limit (time, memory, output; named as such) or return
nothing, when they return other inputs when made again with the same seeds (not reproducible),
or when every input it returns is rejected by the validator; the direct inputs are broken when the validator rejects them all.
The LLM gets the code, the error or stderr tail, and a few rejected inputs with the
validator's answer, and replies in call 2's keys (null = unchanged). Up to
HARDTESTS_REPAIR_ROUNDS rounds; each reply is a new kit version (extra["stage"] = "repair"),
and only the generators of the modules it replaced are tried again.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction

from core import pysource
from generation import prompting
from generation.asking import Conversation, ask
from generation.materialise.batching import call_many
from generation.materialise.inputs import (
    GeneratorJob,
    GeneratorRun,
    describe_failure,
    generator_jobs,
    run_checker_calls,
    usable_input,
)
from generation.materialise.types import RunFailed, SandboxClock, generator_limits
from generation.models import FailureReason, GenerationRun
from generation.parsing import (
    INPUTS_KEYS,
    InputsReply,
    ReplyInvalid,
    extract_json,
    hacking_functions,
    regular_functions,
)
from generation.recorder import RunRecorder
from problems.models import CodeOrigin, TestCase, TestKit
from problems.services import kit_create
from sandbox import CallResult, Sandbox

REPAIR_PROMPT = "repair_v1"
DIRECT_KEY, REGULAR_KEY, HACKING_KEY = "LLMGen_input", "RPGen_SPGen_input_generator", "HackGen_input_generator"
MAX_REJECTED_SHOWN = 3
# A reply's replaced kit keys -> their new values (parse_repair_reply, feedback.parse_refine_reply have
# checked them): a list of strings for DIRECT_KEY, Python source for the others.
KitChanges = dict[str, Any]


@dataclass
class Broken:
    key: str
    function: str
    why: str
    error_tail: str = ""
    # (input preview, what validate_input answered)
    rejected: list[tuple[str, str]] = field(default_factory=list)

    def text(self) -> str:
        lines = [f"## `{self.function}` in `{self.key}`: {self.why}"]
        if self.error_tail:
            lines.append(f"Error / stderr tail:\n```\n{self.error_tail}\n```")
        for text, answer in self.rejected[:MAX_REJECTED_SHOWN]:
            lines.append(f"Rejected input (validate_input -> {answer}):\n```\n{text}\n```")
        return "\n".join(lines)


def prompt_messages(name: str, values: dict[str, object]) -> list[dict[str, str]]:
    """A prompt of this package from its template file (generation.prompting renders it)."""
    return prompting._messages(name, values)


def _key_of(job: GeneratorJob) -> str:
    return HACKING_KEY if job.kind == TestCase.Kind.HACKING else REGULAR_KEY


def _failure(result: CallResult) -> str:
    if result.ok:
        return f"returned {result.value!r:.200}" if isinstance(result.value, str) else \
            f"returned {type(result.value).__name__}, not a string"
    return (result.error or str(result.verdict))[-1500:]


def _validate(sb: Sandbox, kit: TestKit, texts: list[str], clock: SandboxClock) -> list[tuple[bool, str]]:
    if kit.validator is None or not texts:
        return [(True, "no validator")] * len(texts)
    results = run_checker_calls(sb, kit.validator.code, "validate_input", [(t,) for t in texts], clock)
    return [(r.ok and r.value is True, repr(r.value) if r.ok else f"error: {(r.error or '')[-300:]}")
            for r in results]


def probe(*, sb: Sandbox, kit: TestKit, keys: set[str] | None = None) -> list[Broken]:
    """The broken generators of a kit (only those in `keys` when given)."""
    clock = SandboxClock()
    broken: list[Broken] = []
    jobs, problems = generator_jobs(kit)
    for problem in problems:
        key = HACKING_KEY if "hacking" in problem else REGULAR_KEY
        if keys is None or key in keys:
            broken.append(Broken(key, "(module)", "the code cannot be used", problem[-1500:]))
    calls = max(1, settings.HARDTESTS_REPAIR_PROBE_CALLS)
    for job in jobs:
        if keys is not None and _key_of(job) not in keys:
            continue
        n = min(calls, job.calls)
        limits = generator_limits()
        results = call_many(sb, job.code, job.function, [()] * n, limits, clock, seeds=job.seeds[:n])
        texts = [r.value for r in results if usable_input(r) and r.value.strip()]
        if not texts:
            failed = [r for r in results if not (usable_input(r) and r.value.strip())]
            why = (describe_failure(failed[0], limits) if failed else "no result") + f" on {n} of {n} call(s)"
            broken.append(Broken(_key_of(job), job.function, why, _failure(failed[0]) if failed else ""))
            continue
        again = GeneratorRun(results, call_many(sb, job.code, job.function, [()] * n, limits, clock,
                                                seeds=job.seeds[:n], shift_clock=True))
        differs = again.unreproducible_call()
        if differs is not None:
            broken.append(Broken(_key_of(job), job.function,
                                 f"is not reproducible: call {differs} returns a different input when made again "
                                 "with the same seed; draw every random choice from `random` or "
                                 "random.Random(SEED), never from the clock, os.urandom or object ids"))
            continue
        answers = _validate(sb, kit, texts, clock)
        if not any(ok for ok, _ in answers):
            broken.append(Broken(_key_of(job), job.function,
                                 f"the validator rejects all {len(texts)} input(s) it returned",
                                 rejected=[(t[:500], a) for t, (_, a) in zip(texts, answers, strict=True)]))
    direct = [t for t in kit.direct_inputs or [] if isinstance(t, str)]
    if direct and (keys is None or DIRECT_KEY in keys):
        answers = _validate(sb, kit, direct, clock)
        if not any(ok for ok, _ in answers):
            broken.append(Broken(DIRECT_KEY, "LLMGen_input", f"the validator rejects all {len(direct)} direct inputs",
                                 rejected=[(t[:500], a) for t, (_, a) in zip(direct, answers, strict=True)]))
    return broken


def parse_repair_reply(reply: str) -> KitChanges:
    """Call 2's keys, each optional; null or absent = unchanged. Returns only the replaced keys."""
    data = extract_json(reply, INPUTS_KEYS)
    changed: KitChanges = {}
    direct = data.get(DIRECT_KEY)
    if direct is not None:
        if not isinstance(direct, list) or not all(isinstance(x, str) for x in direct):
            raise ReplyInvalid(f"'{DIRECT_KEY}' must be a list of strings or null")
        changed[DIRECT_KEY] = direct
    for key, names in ((REGULAR_KEY, regular_functions), (HACKING_KEY, hacking_functions)):
        code = data.get(key)
        if code is None or (isinstance(code, str) and not code.strip()):
            continue
        if not isinstance(code, str):
            raise ReplyInvalid(f"'{key}' must be Python source or null")
        if not names(code):
            raise ReplyInvalid(f"'{key}' defines no generator function")
        changed[key] = code
    if not changed:
        raise ReplyInvalid("the reply changes nothing: give the fixed code of the broken generators")
    return changed


def _same_code(value: object) -> object:
    """Code as Python reads it (comments, blank lines and layout dropped), else the text stripped."""
    if not isinstance(value, str):
        return value
    try:
        return ast.dump(pysource.parse(value))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return value.strip()


def kit_unchanged(kit: TestKit, changed: KitChanges) -> bool:
    """Whether every key the reply gives equals what the kit already holds: code compared as Python
    reads it, so the same code with a comment added ("# fixed") or reformatted is unchanged."""
    current: dict[str, object] = {
        DIRECT_KEY: kit.direct_inputs or [], REGULAR_KEY: kit.regular_generator, HACKING_KEY: kit.hacking_generator,
        "input_validator": kit.validator.code if kit.validator else None,
        "output_judging_function": kit.output_judge.code if kit.output_judge else None,
    }

    def norm(key: str, value: object) -> object:
        return value if key == DIRECT_KEY else _same_code(value)

    return all(key in current and norm(key, value) == norm(key, current[key]) for key, value in changed.items())


def _kit_from(run: GenerationRun, kit: TestKit, changed: KitChanges, round_number: int,
              stage: str, fixed: list[str]) -> TestKit:
    with transaction.atomic():
        new = kit_create(
            problem=kit.problem, origin=CodeOrigin.LLM, validator=kit.validator, output_judge=kit.output_judge,
            needs_output_judge=kit.needs_output_judge,
            direct_inputs=changed.get(DIRECT_KEY, kit.direct_inputs),
            regular_generator=changed.get(REGULAR_KEY, kit.regular_generator),
            hacking_generator=changed.get(HACKING_KEY, kit.hacking_generator),
            batch_generator=kit.batch_generator, model_name=run.model_name or settings.HARDTESTS_LLM_MODEL,
            created_by=run.created_by,
            extra={"generation_run": run.pk, "stage": stage, "round": round_number, "parent_version": kit.version,
                   "changed": sorted(changed), "about": fixed[:20]},
        )
        GenerationRun.objects.filter(pk=run.pk).update(kit=new)
    return TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=new.pk)


def generators_repair(run: GenerationRun, rec: RunRecorder, sb: Sandbox, kit: TestKit,
                      session: Conversation | None = None) -> TestKit:
    """Try the kit's generators; send broken ones back up to HARDTESTS_REPAIR_ROUNDS times."""
    rounds = max(0, settings.HARDTESTS_REPAIR_ROUNDS)
    if rounds == 0:
        return kit
    rec.stage(GenerationRun.Stage.GENERATING)
    broken = probe(sb=sb, kit=kit)
    done = 0
    for number in range(1, rounds + 1):
        if not broken:
            break
        done = number
        rec.log(f"repair round {number}: {len(broken)} broken generator(s): "
                + "; ".join(f"{b.function} ({b.why})" for b in broken))
        rec.stage(GenerationRun.Stage.LLM_INPUTS)
        messages = prompt_messages(REPAIR_PROMPT, {
            "statement": kit.problem.statement.strip(),
            "validator_code": (kit.validator.code if kit.validator else "(no validator)").rstrip(),
            "broken": "\n\n".join(b.text() for b in broken),
            "direct_inputs": json.dumps(kit.direct_inputs or [], indent=1)[:6000],
            "regular_code": kit.regular_generator.rstrip() or "(none)",
            "hacking_code": kit.hacking_generator.rstrip() or "(none)",
        })
        try:
            changed, _ = ask(run, rec, purpose=f"repair{number}", prompt_version=REPAIR_PROMPT,
                             messages=messages, parse=parse_repair_reply)
        except RunFailed as exc:
            if exc.reason == FailureReason.CANCELLED:
                raise
            # The kit still works without the broken generators; a failed repair is not a failed run.
            rec.log(f"repair round {number} failed ({exc.reason}): {str(exc).splitlines()[0][:300]}")
            break
        if kit_unchanged(kit, changed):
            # Asking again would only buy the same code again.
            rec.log(f"repair round {number}: the model returned the code unchanged; repair stopped")
            break
        kit = _kit_from(run, kit, changed, number, "repair", [b.function for b in broken])
        if session is not None and isinstance(session.inputs, InputsReply):
            # A later judge repair rebuilds the kit from the session: keep the repaired generators.
            session.inputs = InputsReply(direct_inputs=list(kit.direct_inputs or []),
                                         regular_generator=kit.regular_generator or None,
                                         hacking_generator=kit.hacking_generator or None)
        rec.log(f"kit v{kit.version}: repaired {', '.join(sorted(changed))}")
        rec.stage(GenerationRun.Stage.GENERATING)
        # Only the replaced modules are tried again; the others already work.
        broken = probe(sb=sb, kit=kit, keys=set(changed))
    if broken:
        rec.log(f"still broken after {done} repair round(s): {', '.join(b.function for b in broken)}; "
                "materialising with what works")
    return kit
