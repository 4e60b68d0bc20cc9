"""Writes to the catalogue. Keyword-only, typed, atomic where several rows change."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from problems.blobs import blobs_put, preview
from problems.models import (
    CodeOrigin,
    InputValidator,
    OutputJudge,
    Problem,
    Solution,
    TestCase,
    TestKit,
    TestSuite,
    Verdict,
)

# The models numbered by version per problem.
_Versioned = TypeVar("_Versioned", InputValidator, OutputJudge, TestKit, TestSuite)


class SuiteStateError(RuntimeError):
    """A suite was not in the state an operation needs (someone else changed it first)."""


@dataclass(frozen=True)
class NewTest:
    input: str | bytes
    output: str | bytes
    kind: str
    generator: str = ""
    call_number: int | None = None
    validator_version: int | None = None
    oracle_id: int | None = None
    seed: int | None = None
    # TestCase.OutputOrigin: who made the output when no oracle did ("" = an oracle or the dataset).
    output_origin: str = ""


def code_sha256(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def _next_version(model: type[_Versioned], problem: Problem) -> int:
    current = model.objects.filter(problem=problem).aggregate(v=Max("version"))["v"]
    return (current or 0) + 1


def _create_versioned(model: type[_Versioned], *, problem: Problem, **fields: Any) -> _Versioned:
    # Two workers may allocate the same version; the unique constraint catches it and we retry.
    for _ in range(5):
        try:
            with transaction.atomic():
                return model.objects.create(problem=problem, version=_next_version(model, problem), **fields)
        except IntegrityError:
            continue
    raise IntegrityError(f"could not allocate a {model.__name__} version for {problem.pk}")


def validator_create(
    *, problem: Problem, code: str, origin: str, model_name: str = "", edited_by: Any = None, change_note: str = ""
) -> InputValidator:
    previous = InputValidator.objects.filter(problem=problem).order_by("-version").first()
    return _create_versioned(
        InputValidator,
        problem=problem,
        code=code,
        origin=origin,
        model_name=model_name,
        edited_by=edited_by,
        change_note=change_note,
        regression_inputs=list(previous.regression_inputs) if previous else [],
    )


def judge_create(
    *, problem: Problem, code: str, origin: str, model_name: str = "", edited_by: Any = None, change_note: str = ""
) -> OutputJudge:
    return _create_versioned(
        OutputJudge,
        problem=problem,
        code=code,
        origin=origin,
        model_name=model_name,
        edited_by=edited_by,
        change_note=change_note,
    )


def kit_create(
    *,
    problem: Problem,
    origin: str,
    validator: InputValidator | None,
    output_judge: OutputJudge | None = None,
    needs_output_judge: bool = False,
    direct_inputs: list[str] | None = None,
    regular_generator: str = "",
    hacking_generator: str = "",
    batch_generator: str = "",
    model_name: str = "",
    created_by: Any = None,
    extra: dict[str, Any] | None = None,
) -> TestKit:
    return _create_versioned(
        TestKit,
        problem=problem,
        origin=origin,
        validator=validator,
        output_judge=output_judge,
        needs_output_judge=needs_output_judge or output_judge is not None,
        direct_inputs=list(direct_inputs or []),
        regular_generator=regular_generator or "",
        hacking_generator=hacking_generator or "",
        batch_generator=batch_generator or "",
        model_name=model_name,
        created_by=created_by,
        extra=extra or {},
    )


def kit_with_edited_code(
    *, kit: TestKit, user: Any, validator_code: str | None = None, judge_code: str | None = None, note: str = ""
) -> TestKit:
    """A person's edit of the validator or judge: new code versions and a new kit version using them."""
    with transaction.atomic():
        validator = kit.validator
        judge = kit.output_judge
        if validator_code is not None and (validator is None or validator_code != validator.code):
            validator = validator_create(
                problem=kit.problem, code=validator_code, origin=CodeOrigin.EDITED, edited_by=user, change_note=note
            )
        if judge_code is not None and (judge is None or judge_code != judge.code):
            judge = (
                judge_create(
                    problem=kit.problem, code=judge_code, origin=CodeOrigin.EDITED, edited_by=user, change_note=note
                )
                if judge_code.strip()
                else None
            )
        return kit_create(
            problem=kit.problem,
            origin=CodeOrigin.EDITED,
            validator=validator,
            output_judge=judge,
            needs_output_judge=judge is not None,
            direct_inputs=kit.direct_inputs,
            regular_generator=kit.regular_generator,
            hacking_generator=kit.hacking_generator,
            batch_generator=kit.batch_generator,
            model_name=kit.model_name,
            created_by=user,
            extra=kit.extra,
        )


def kit_edit_changes(*, kit: TestKit, validator_code: str, judge_code: str) -> bool:
    """Whether an edit differs from the kit (an unchanged save makes no version and starts no run)."""
    current_validator = kit.validator.code if kit.validator else ""
    current_judge = kit.output_judge.code if kit.output_judge else ""
    return validator_code != current_validator or judge_code.strip() != current_judge.strip()


def kit_revert(*, kit: TestKit, user: Any) -> TestKit:
    """A new kit version identical to an earlier one (its validator, judge and generators), so the
    history keeps the broken version and shows the revert."""
    return kit_create(
        problem=kit.problem, origin=CodeOrigin.EDITED, validator=kit.validator, output_judge=kit.output_judge,
        needs_output_judge=kit.needs_output_judge, direct_inputs=kit.direct_inputs,
        regular_generator=kit.regular_generator, hacking_generator=kit.hacking_generator,
        batch_generator=kit.batch_generator, model_name=kit.model_name, created_by=user,
        extra={**(kit.extra or {}), "reverted_to": kit.version},
    )


def suite_create(
    *,
    problem: Problem,
    origin: str,
    kit: TestKit | None = None,
    validator: InputValidator | None = None,
    output_judge: OutputJudge | None = None,
    note: str = "",
    unverified: bool = False,
    trust: dict[str, Any] | None = None,
) -> TestSuite:
    """A new suite in BUILDING state; invisible to judging until suite_activate."""
    return _create_versioned(
        TestSuite,
        problem=problem,
        origin=origin,
        kit=kit,
        validator=validator,
        output_judge=output_judge,
        status=TestSuite.Status.BUILDING,
        note=note,
        unverified=unverified,
        trust=trust or {},
    )


def suite_add_tests(*, suite: TestSuite, tests: list[NewTest]) -> int:
    """Append tests to a BUILDING suite; bodies go to content-addressed storage first."""
    if suite.status != TestSuite.Status.BUILDING:
        raise SuiteStateError(f"suite {suite.pk} is {suite.status}, not building")
    inputs = blobs_put(t.input for t in tests)
    outputs = blobs_put(t.output for t in tests)
    start = suite.tests.aggregate(m=Max("ordinal"))["m"]
    start = 0 if start is None else start + 1
    rows = []
    for offset, (test, (in_sha, in_size), (out_sha, out_size)) in enumerate(zip(tests, inputs, outputs, strict=True)):
        rows.append(
            TestCase(
                suite=suite,
                ordinal=start + offset,
                kind=test.kind,
                generator=test.generator,
                call_number=test.call_number,
                seed=test.seed,
                input_sha256=in_sha,
                input_size=in_size,
                input_preview=preview(test.input, TestCase.PREVIEW_CHARS),
                output_sha256=out_sha,
                output_size=out_size,
                output_preview=preview(test.output, TestCase.PREVIEW_CHARS),
                validator_version=test.validator_version,
                oracle_id=test.oracle_id,
                output_origin=test.output_origin,
            )
        )
    with transaction.atomic():
        TestCase.objects.bulk_create(rows, batch_size=1000)
        _suite_refresh_counts(suite)
    return len(rows)


def _suite_refresh_counts(suite: TestSuite) -> None:
    counts: dict[str, int] = {}
    total_bytes = 0
    for kind, in_size, out_size in suite.tests.values_list("kind", "input_size", "output_size"):
        counts[kind] = counts.get(kind, 0) + 1
        total_bytes += in_size + out_size
    suite.counts_by_kind = counts
    suite.test_count = sum(counts.values())
    suite.total_bytes = total_bytes
    suite.save(update_fields=["counts_by_kind", "test_count", "total_bytes"])


def suite_activate(*, suite: TestSuite) -> TestSuite:
    """Make a complete BUILDING suite the active one of its origin, atomically.

    The previous active suite stays active until this commits; the partial unique index
    one_active_suite_per_origin makes a concurrent double activation fail instead of
    leaving two active suites.
    """
    with transaction.atomic():
        TestSuite.objects.filter(
            problem_id=suite.problem_id, origin=suite.origin, status=TestSuite.Status.ACTIVE
        ).exclude(pk=suite.pk).update(status=TestSuite.Status.SUPERSEDED)
        updated = TestSuite.objects.filter(pk=suite.pk, status=TestSuite.Status.BUILDING).update(
            status=TestSuite.Status.ACTIVE, activated_at=timezone.now()
        )
        if updated != 1:
            raise SuiteStateError(f"suite {suite.pk} is no longer building")
    suite.refresh_from_db()
    return suite


def suite_fail(*, suite: TestSuite, note: str) -> None:
    """Mark a suite that will never be complete; a no-op if it already left BUILDING."""
    TestSuite.objects.filter(pk=suite.pk, status=TestSuite.Status.BUILDING).update(
        status=TestSuite.Status.FAILED, note=note[:500]
    )


def solution_upsert(
    *,
    problem: Problem,
    role: str,
    language: str,
    code: str,
    source: str = "",
    reliability: int | None = None,
    gold_verdict: str = Solution.GoldVerdict.UNKNOWN,
    origin: str = "human",
    name: str = "",
    note: str = "",
) -> tuple[Solution, bool]:
    return Solution.objects.update_or_create(
        problem=problem,
        role=role,
        code_sha256=code_sha256(code),
        defaults={
            "language": language,
            "code": code,
            "source": source,
            "reliability": reliability,
            "gold_verdict": gold_verdict,
            "origin": origin,
            "name": name,
            "note": note,
        },
    )


def verdict_record(
    *,
    solution: Solution,
    suite: TestSuite,
    verdict: str,
    passed: int,
    total: int,
    complete: bool,
    results: list[dict[str, Any]],
    message: str = "",
) -> Verdict:
    obj, _ = Verdict.objects.update_or_create(
        solution=solution,
        suite=suite,
        defaults={
            "verdict": verdict,
            "passed": passed,
            "total": total,
            "complete": complete,
            "results": results,
            "message": message[:20000],
        },
    )
    return obj
