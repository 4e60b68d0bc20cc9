"""The parts of studies that run untrusted code; called only from RQ jobs (review/studies/jobs.py).

The validator and the oracles run in the sandbox like everywhere else, never in the web
process. Adding a suggested input to a suite follows the materialisation rules for one
input: the newest validator must accept it, then generation.materialise.oracles.agree, the
very function materialisation uses (same order, limits and judging rule), finds two oracles
agreeing on its output, which comes from the more reliable oracle of that pair.
"""

from __future__ import annotations

from django.db import transaction

from generation.materialise.oracles import Checker, agree
from generation.materialise.types import MaterialiseError, NullProgress
from problems.blobs import blob_pairs, blob_sha256, preview
from problems.judging import checker_limits, suite_for_judging
from problems.models import (
    InputValidator,
    OutputJudge,
    Problem,
    Solution,
    TestCase,
    TestSuite,
)
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create, suite_fail
from review.models import StudyItem, SuiteAddition
from review.studies.selectors import latest_validator
from sandbox import Sandbox, call_python, get_sandbox


class AdditionRefused(RuntimeError):
    """The input cannot join the suite; the message says why, for the page."""


def validator_verdicts(code: str, inputs: list[str], sb: Sandbox | None = None) -> list[tuple[bool | None, str]]:
    """(accepted, error) per input: True/False from validate_input, None with an error otherwise."""
    results = call_python(sb or get_sandbox(), code, "validate_input", [(text,) for text in inputs], checker_limits())
    verdicts: list[tuple[bool | None, str]] = []
    for result in results:
        if not result.ok:
            verdicts.append((None, result.error or "the validator failed"))
        elif isinstance(result.value, bool):
            verdicts.append((result.value, ""))
        else:
            verdicts.append((None, f"validate_input returned {type(result.value).__name__}, not a bool"))
    return verdicts


def agreed_output(
    *, problem: Problem, text: str, judge: OutputJudge | None, log: list[str], sb: Sandbox | None = None
) -> tuple[Solution, bytes]:
    """The output of one input, by the same oracle agreement as materialisation (same limits, same judge rule)."""
    sb = sb or get_sandbox()
    checker = Checker(judge.code if judge else None, problem.comparison)
    try:
        agreement = agree(sb=sb, problem=problem, inputs=[text], checker=checker, progress=_ListLog(log))
    except MaterialiseError as exc:
        raise AdditionRefused(str(exc).splitlines()[0]) from exc
    output = agreement.primary.outputs[0]
    if not agreement.mask[0] or output is None:
        raise AdditionRefused("the oracles do not agree on the output of this input")
    if agreement.unverified:
        log.append("warning: one oracle only; the output is unverified")
    return agreement.primary.solution, output


class _ListLog(NullProgress):
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def log(self, message: str) -> None:
        self.lines.append(message)


def suite_with_added_input(addition: SuiteAddition, *, sb: Sandbox | None = None) -> tuple[TestSuite, TestSuite, bytes, list[str]]:
    """Build and activate a new suite version: the base suite's tests plus the suggested input.

    Returns (base suite, new suite, output, log). Raises AdditionRefused with the reason.
    """
    sb = sb or get_sandbox()
    log: list[str] = []
    item: StudyItem = addition.item
    problem = item.problem
    text = addition.input
    validator: InputValidator | None = latest_validator(problem)
    if validator is None:
        raise AdditionRefused("the problem has no validator")
    accepted, error = validator_verdicts(validator.code, [text], sb)[0]
    if accepted is None:
        raise AdditionRefused(f"validator v{validator.version} failed on the input: {error}")
    if not accepted:
        raise AdditionRefused(f"validator v{validator.version} rejects the input")
    log.append(f"validator v{validator.version} accepts the input")
    origin = item.suite.origin if item.suite else None
    base = suite_for_judging(problem, origin) or suite_for_judging(problem)
    if base is None:
        raise AdditionRefused("the problem has no active suite")
    if base.tests.filter(input_sha256=blob_sha256(text)).exists():
        raise AdditionRefused(f"suite v{base.version} already has this input")
    oracle, output = agreed_output(problem=problem, text=text, judge=base.output_judge, log=log, sb=sb)
    tests = list(base.tests.order_by("ordinal"))
    bodies = blob_pairs((t.input_sha256, t.output_sha256) for t in tests)
    old = [
        NewTest(input=inp, output=out, kind=t.kind, generator=t.generator,
                call_number=t.call_number, validator_version=t.validator_version, oracle_id=t.oracle_id)
        for t, (inp, out) in zip(tests, bodies, strict=True)
    ]
    new = NewTest(input=text, output=output, kind=TestCase.Kind.IMPORTED,
                  generator=f"study {item.study_id} item {item.position}", validator_version=validator.version,
                  oracle_id=oracle.pk)
    suite = suite_create(
        problem=problem, origin=base.origin, kit=base.kit, validator=base.validator, output_judge=base.output_judge,
        note=f"v{base.version} + 1 input suggested in study {item.study_id}",
    )
    try:
        suite_add_tests(suite=suite, tests=[*old, new])
        with transaction.atomic():
            # Two additions racing from the same base would each drop the other's test; the
            # second to get here finds its base superseded and is refused instead.
            if not TestSuite.objects.select_for_update().filter(pk=base.pk, status=TestSuite.Status.ACTIVE).exists():
                raise AdditionRefused(f"suite v{base.version} was replaced meanwhile; add the input again")
            suite = suite_activate(suite=suite)
    except Exception as exc:
        suite_fail(suite=suite, note=f"adding a suggested input failed: {exc}")
        raise
    log.append(f"suite v{suite.version} active with {suite.test_count} tests (v{base.version} had {base.test_count})")
    return base, suite, output, log


def output_preview(output: bytes) -> str:
    return preview(output, 200)
