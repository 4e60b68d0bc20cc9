"""Reads of the generation app that the pipeline, the command and pages share."""

from __future__ import annotations

from problems.models import SUPPORTED_LANGUAGES, CodeOrigin, Problem, Solution, TestKit, TestSuite


def active_generated_suite(problem: Problem) -> TestSuite | None:
    return problem.suites.filter(origin=TestSuite.Origin.GENERATED, status=TestSuite.Status.ACTIVE).first()


def kit_to_materialise(problem: Problem) -> TestKit | None:
    """What a from-kit run materialises: the kit of the active generated suite, unless a person edited
    or imported a kit since (the newest such one); with no active suite, the latest kit.

    Kits the LLM wrote after the active suite's are a run's intermediates (a refinement round that
    lost, a repair whose run failed): never what a maintainer asking for "the current kit" means.
    """
    active = active_generated_suite(problem)
    kits = problem.kits.order_by("-version")
    if active is None or active.kit is None:
        return kits.first()
    by_hand = kits.filter(version__gt=active.kit.version).exclude(origin=CodeOrigin.LLM).first()
    return by_hand or active.kit


def has_usable_oracle(problem: Problem) -> bool:
    """An oracle the sandbox can run (whether it passes the samples is the pre-flight's question)."""
    return problem.solutions.filter(role=Solution.Role.ORACLE, language__in=SUPPORTED_LANGUAGES).exists()
