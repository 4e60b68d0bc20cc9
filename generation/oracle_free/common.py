"""What both oracle-free modes share: running a model-written program, and saving a suite.

A model-written program is never stored as a Solution: it would then count as an oracle for
later oracle-based runs. It lives in the kit's `extra` (for audit) and runs here as an unsaved
Solution through the materialisation helpers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction

from generation.materialise.oracles import OracleRun
from generation.materialise.types import SandboxClock
from generation.models import GenerationRun
from generation.recorder import RunRecorder
from generation.services import run_activate
from problems.models import CodeOrigin, Language, OutputJudge, Problem, Solution, TestKit, TestSuite
from problems.services import NewTest, judge_create, suite_add_tests, suite_create
from sandbox import Limits, Sandbox

# What the suite's trust record calls each method.
A7 = "hardtests_a7"
ACECODER = "acecoder"


@dataclass
class Built:
    """An oracle-free suite before it is saved: its tests, kit and how its outputs were checked."""

    tests: list[NewTest]
    trust: dict[str, Any]
    kit: TestKit | None = None
    notes: list[str] = field(default_factory=list)
    # With no kit (AceCoder): the judging function the tests were filtered with and are to be judged
    # with, the problem's own (an OutputJudge row) or the standard real-number one (code only).
    judge: OutputJudge | None = None
    judge_code: str | None = None


def model_program(code: str, name: str) -> Solution:
    """An unsaved stand-in so the oracle helpers can run a model's program."""
    return Solution(language=Language.PYTHON3, code=code, name=name, role=Solution.Role.ORACLE, origin="llm")


def brute_force_limits(problem: Problem) -> Limits:
    return Limits(time_s=float(settings.HARDTESTS_BRUTE_FORCE_TIME_S),
                  memory_mb=min(4096, 2 * problem.memory_limit_mb), output_kb=64 * 1024)


def run_program(sb: Sandbox, solution: Solution, inputs: list[str], limits: Limits,
                clock: SandboxClock) -> tuple[OracleRun | None, str]:
    """Outputs of a program on inputs (None where it did not end normally), or None if it does not compile."""
    prog = sb.compile(solution.language, solution.code)
    if not prog.ok:
        return None, f"does not compile ({prog.verdict}): {prog.message.strip()[-200:]}"
    if not inputs:
        return OracleRun(solution, []), "no inputs"
    results = sb.run(prog, inputs, limits)
    clock.add(results)
    failing = sorted({str(r.verdict) for r in results if not r.ok})
    note = f"ran on {len(inputs)} inputs" + (f"; {', '.join(failing)} on some" if failing else "")
    return OracleRun(solution, [r.stdout if r.ok else None for r in results]), note


def save_suite(run: GenerationRun, rec: RunRecorder, built: Built) -> TestSuite:
    """Write an oracle-free suite (BUILDING) and activate it as any run's suite is (generation.services)."""
    rec.stage(GenerationRun.Stage.SAVING)
    kit = built.kit
    with transaction.atomic():
        judge = kit.output_judge if kit else built.judge
        if judge is None and kit is None and built.judge_code:
            judge = judge_create(problem=run.problem, code=built.judge_code, origin=CodeOrigin.IMPORTED,
                                 change_note=f"standard real-number judge, oracle-free run #{run.pk}")
        suite = suite_create(
            problem=run.problem, origin=TestSuite.Origin.ORACLE_FREE, kit=kit,
            validator=kit.validator if kit else None, output_judge=judge,
            note=f"generation run #{run.pk}: oracle-free ({built.trust.get('method')}), model-made outputs",
            unverified=True, trust=built.trust,
        )
        GenerationRun.objects.filter(pk=run.pk).update(suite=suite)
    suite_add_tests(suite=suite, tests=built.tests)
    return run_activate(run, rec, suite)
