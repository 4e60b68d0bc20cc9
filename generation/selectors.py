"""Reads of the generation app that the pipeline, the command and pages share."""

from __future__ import annotations

from problems.models import Problem, TestKit, TestSuite


def active_generated_suite(problem: Problem) -> TestSuite | None:
    return problem.suites.filter(origin=TestSuite.Origin.GENERATED, status=TestSuite.Status.ACTIVE).first()


def kit_to_materialise(problem: Problem) -> TestKit | None:
    """What a from-kit run materialises: the kit of the active generated suite, else the latest kit.

    The latest kit may be one no suite was ever made from (a refinement round that lost, a repair
    whose run failed); re-materialising what is live is what a maintainer asking for "the current
    kit" means.
    """
    active = active_generated_suite(problem)
    if active is not None and active.kit_id is not None:
        return active.kit
    return problem.kits.order_by("-version").first()
