"""Refinement of a C++ kit (CodeContests-O): SEARCH/REPLACE edits and new commands.

A refinement round of a kit whose generator and checker are testlib programs shows the model
the programs, the commands and the misjudged candidates (refine_testlib_v1), and reads back
SEARCH/REPLACE blocks against `generator.cpp` / `checker.cpp` (CodeContests-O's prompt B.2)
and the commands to add or replace. A block whose SEARCH text does not occur exactly once in
the current file is refused with the reason and the reply is sent back (generation.parsing
`apply_edits`, through `ask`'s retry loop); so is an edited program that does not compile.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from generation.asking import Review
from generation.asking_testlib import compile_feedback
from generation.materialise import judge_sample_check, sample_pairs
from generation.materialise.oracles import Checker
from generation.materialise.testlib import (
    CHECKER_FILE,
    GENERATOR_FILE,
    LANGUAGES_KEY,
    TESTLIB_KEY,
    TestlibParts,
    checker_judge,
    compile_error,
    generator_judge,
    languages,
    testlib_parts,
)
from generation.models import FailureReason, GenerationRun
from generation.parsing import MAX_COMMANDS, ReplyInvalid, apply_edits, extract_json, parse_edits
from generation.recorder import RunRecorder
from problems.models import CodeOrigin, TestKit
from problems.services import kit_create
from sandbox import Sandbox

REFINE_TESTLIB_PROMPT = "refine_testlib_v1"
EDIT_KEYS = ("commands_add", "hacking_commands_add", "commands_replace")
CODE_CHARS = 12000


@dataclass
class TestlibChanges:
    parts: TestlibParts
    changed: list[str] = field(default_factory=list)
    edits: int = 0


def refine_values(run: GenerationRun, kit: TestKit) -> dict[str, object]:
    parts = testlib_parts(kit)
    return {
        "statement": run.problem.statement.strip(), "time_limit_ms": run.problem.time_limit_ms,
        "memory_limit_mb": run.problem.memory_limit_mb,
        "validator_code": (kit.validator.code if kit.validator else "(none)").rstrip(),
        "generator_code": parts.generator.rstrip()[:CODE_CHARS] or "(none)",
        "commands": json.dumps(parts.commands, indent=1), "hacking_commands": json.dumps(parts.hacking_commands, indent=1),
        "checker_code": parts.checker.rstrip()[:CODE_CHARS] or "(none)",
        "checker_note": "used" if parts.checker else
        f"none: outputs are compared as {run.problem.comparison}; no checker.cpp to edit",
    }


def _string_list(data: dict[str, object], key: str) -> list[str] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise ReplyInvalid(f"'{key}' must be a list of strings (generator arguments) or null")
    return [c.strip() for c in value if c.strip()]


def refine_parser(kit: TestKit) -> Callable[[str], TestlibChanges]:
    """Reads a refinement reply against `kit`'s programs as they stand."""
    current = testlib_parts(kit)

    def parse(reply: str) -> TestlibChanges:
        files = current.files()
        edits = parse_edits(reply, tuple(files) or (GENERATOR_FILE,))
        edited = apply_edits(files, edits)
        try:
            data = extract_json(reply, ())
        except ReplyInvalid:
            if not edits:
                raise
            data = {}
        replace = _string_list(data, "commands_replace")
        added = _string_list(data, "commands_add") or []
        hacking_added = _string_list(data, "hacking_commands_add") or []
        commands = (replace if replace is not None else list(current.commands)) + added
        hacking = list(current.hacking_commands) + hacking_added
        if len(commands) + len(hacking) > 2 * MAX_COMMANDS:
            raise ReplyInvalid(f"too many commands ({len(commands) + len(hacking)}, at most {2 * MAX_COMMANDS})")
        parts = TestlibParts(generator=edited.get(GENERATOR_FILE, current.generator), commands=commands,
                             hacking_commands=hacking, checker=edited.get(CHECKER_FILE, current.checker))
        changed = [name for name in (GENERATOR_FILE, CHECKER_FILE) if edited.get(name) != files.get(name)]
        if commands != current.commands:
            changed.append("commands")
        if hacking != current.hacking_commands:
            changed.append("hacking_commands")
        if not changed:
            raise ReplyInvalid("the reply changes nothing: give SEARCH/REPLACE blocks against generator.cpp or "
                               "checker.cpp, or commands to add")
        return TestlibChanges(parts, changed, len(edits))

    return parse


def refine_review(run: GenerationRun, rec: RunRecorder, sb: Sandbox) -> Review[TestlibChanges]:
    """An edited program must compile, and an edited checker still accept the samples' outputs."""
    samples = sample_pairs(run.problem)

    def review(changes: TestlibChanges) -> tuple[str, str] | None:
        parts = changes.parts
        if GENERATOR_FILE in changes.changed:
            error = compile_error(sb, generator_judge(parts.generator))
            if error is not None:
                rec.log("the edited generator does not compile")
                return FailureReason.INPUT_GENERATION_FAILED, compile_feedback("edited generator.cpp", error)
        if CHECKER_FILE in changes.changed:
            error = compile_error(sb, checker_judge(parts.checker))
            if error is not None:
                rec.log("the edited checker does not compile")
                return FailureReason.JUDGE_INVALID, compile_feedback("edited checker.cpp", error)
            rejected = judge_sample_check(sb, Checker(parts.checker, language="cpp"), samples)
            if rejected:
                return (FailureReason.JUDGE_INVALID, f"the edited checker rejects a sample's expected output "
                        f"({rejected[0].why[:300]}) on input {rejected[0].input[:300]!r}; fix it")
        return None

    return review


def revised_testlib_kit(run: GenerationRun, kit: TestKit, changes: TestlibChanges, number: int,
                        about: list[str]) -> TestKit:
    model = run.model_name or settings.HARDTESTS_LLM_MODEL
    parts = changes.parts
    with transaction.atomic():
        new = kit_create(
            problem=kit.problem, origin=CodeOrigin.LLM, validator=kit.validator, output_judge=kit.output_judge,
            needs_output_judge=kit.needs_output_judge, direct_inputs=kit.direct_inputs, model_name=model,
            created_by=run.created_by,
            extra={"generation_run": run.pk, "stage": "refinement", "round": number, "parent_version": kit.version,
                   "changed": sorted(changes.changed), "search_replace_blocks": changes.edits, "about": about[:20],
                   TESTLIB_KEY: parts.as_extra(),
                   LANGUAGES_KEY: languages(parts, validator=kit.validator is not None,
                                            python_judge=kit.output_judge is not None)},
        )
        GenerationRun.objects.filter(pk=run.pk).update(kit=new)
    return TestKit.objects.select_related("problem", "validator", "output_judge").get(pk=new.pk)
