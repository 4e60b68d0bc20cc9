"""The operations of /api/v1/: thin functions that validate, call a selector or service, shape JSON."""

from __future__ import annotations

import time
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Status

from api import schemas as s
from api.auth import TokenRequest
from api.conf import api_setting
from api.errors import ApiError, NotFound, PayloadTooLarge
from api.selectors import (
    ProblemFilters,
    preferred_active,
    problem_complete_suites,
    problem_page,
    problem_ref,
    problem_resolve,
    suite_resolve,
    suite_tests,
)
from api.verification import (
    Outcome,
    SuiteInfo,
    batch_load,
    batch_poll,
    batch_start,
    server_timing,
    suite_info,
    verification_prepare,
    verify_one,
)
from core.redact import redact
from problems.models import Problem, TestSuite
from problems.verify_types import Mode

router = Router()

ERRORS = {400: s.ValidationErrorOut, 401: s.Error, 404: s.Error, 413: s.Error, 429: s.Error}
VERIFY_ERRORS = {**ERRORS, 422: s.ValidationErrorOut, 503: s.Error}


# -- verification ---------------------------------------------------------------------------


def _verify_out(outcome: Outcome, suite: SuiteInfo, elapsed_ms: int) -> dict[str, Any]:
    result = outcome.result
    assert result is not None, "only a finished outcome has a result"
    return {
        "reward": result.reward,
        "pass_fraction": result.pass_fraction,
        "verdict": result.verdict,
        "passed": result.passed,
        "total": result.total,
        "complete": result.complete,
        "tests": result.tests,
        "suite_version": result.suite_version,
        "suite_origin": result.suite_origin,
        "suite_subset": result.subset,
        "message": result.message[-4000:],
        "judge_ms": result.elapsed_ms,
        "elapsed_ms": elapsed_ms,
        "cached": outcome.cached,
    }


@router.post("/verify", response={200: s.VerifyOut, **VERIFY_ERRORS}, tags=["verify"])
def verify(request: TokenRequest, body: s.VerifyIn, response: HttpResponse) -> dict[str, Any]:
    """Judge one program against a problem's suite on the sandbox workers; reward 1 iff every test passes."""
    started = time.monotonic()
    item = verification_prepare(
        problem=body.problem, language=body.language, code=body.code, mode=Mode(body.mode), suite=body.suite
    )
    prepare_ms = (time.monotonic() - started) * 1000
    outcome = verify_one(item, owner_id=request.auth.user_id)
    response["Server-Timing"] = server_timing(outcome, prepare_ms=prepare_ms)
    return _verify_out(outcome, suite_info(item.suite), int((time.monotonic() - started) * 1000))


def _batch_out(batch_id: str, outcomes: list[Outcome], suites: list[SuiteInfo], created: float) -> dict[str, Any]:
    items = []
    for index, (outcome, suite) in enumerate(zip(outcomes, suites, strict=True)):
        item: dict[str, Any] = {"index": index, "status": outcome.status, "error": outcome.error}
        if outcome.status == "finished":
            # From the batch's arrival to this item's result, however late it is read.
            elapsed_ms = int(max(0.0, (outcome.finished_at or time.time()) - created) * 1000)
            item["result"] = _verify_out(outcome, suite, elapsed_ms)
        items.append(item)
    # An item in error has no result and no reward: the worker could not judge it.
    done = sum(1 for o in outcomes if o.status in ("finished", "error"))
    return {
        "job_id": batch_id,
        "status": "finished" if done == len(outcomes) else "pending",
        "done": done,
        "total": len(outcomes),
        "items": items,
    }


@router.post("/verify/batch", response={200: s.BatchOut, 202: s.BatchOut, **VERIFY_ERRORS}, tags=["verify"])
def verify_batch(request: TokenRequest, body: s.BatchIn) -> Status[dict[str, Any]]:
    """Judge many programs in parallel on the sandbox workers.

    200 with every result when they finish within the synchronous timeout; else 202 with a
    job id to poll at GET /api/v1/jobs/{job_id}.
    """
    limit = api_setting("HARDTESTS_API_BATCH_MAX")
    if len(body.items) > limit:
        raise PayloadTooLarge(f"{len(body.items)} programs in one batch; the limit is {limit}", code="batch_too_large")
    prepared = []
    for index, entry in enumerate(body.items):
        try:
            prepared.append(
                verification_prepare(
                    problem=entry.problem, language=entry.language, code=entry.code, mode=Mode(entry.mode),
                    suite=entry.suite,
                )
            )
        except ApiError as exc:
            # Say which item was wrong; the status (400/404/413) stays that of the item.
            exc.detail = f"items[{index}]: {exc.detail}"
            raise
    created = time.time()
    batch_id, outcomes, suites = batch_start(prepared, owner_id=request.auth.user_id)
    out = _batch_out(batch_id, outcomes, suites, created)
    return Status(200 if out["status"] == "finished" else 202, out)


@router.get("/jobs/{job_id}", response={200: s.BatchOut, **ERRORS, 503: s.Error}, tags=["verify"])
def job_status(request: TokenRequest, job_id: str) -> dict[str, Any]:
    """The state and results of a batch started by POST /verify/batch (yours only)."""
    record = batch_load(job_id, owner_id=request.auth.user_id)
    return _batch_out(job_id, batch_poll(record), record["suites"], record["created"])


# -- catalogue ------------------------------------------------------------------------------


def _suite_brief(suite: TestSuite) -> dict[str, Any]:
    return {
        "version": suite.version,
        "origin": suite.origin,
        "status": suite.status,
        "test_count": suite.test_count,
        "activated_at": suite.activated_at,
        "trust": suite.trust or None,
    }


def _problem_brief(problem: Problem, active: TestSuite | None) -> dict[str, Any]:
    return {
        "ref": problem_ref(problem),
        "source": problem.source,
        "pid": problem.pid,
        "title": problem.title,
        "platform": problem.platform,
        "time_limit_ms": problem.time_limit_ms,
        "memory_limit_mb": problem.memory_limit_mb,
        "tags": [t.name for t in problem.tags.all()],
        "difficulties": [{"source": d.source, "level": d.level, "score": d.score} for d in problem.difficulties.all()],
        "active_suite": _suite_brief(active) if active is not None else None,
    }


@router.get("/problems", response={200: s.ProblemPage, **ERRORS, 503: s.Error}, tags=["problems"])
def problem_list(request: HttpRequest, params: Query[s.ProblemQuery]) -> dict[str, Any]:
    """Problems, filtered and paged, oldest first."""
    filters = ProblemFilters(
        source=params.source, platform=params.platform, tag=params.tag, difficulty=params.difficulty,
        q=params.q, has_suite=params.has_suite,
    )
    count, rows = problem_page(filters, limit=params.limit, offset=params.offset)
    items = [_problem_brief(p, preferred_active(p.active_suites)) for p in rows]
    return {"count": count, "limit": params.limit, "offset": params.offset, "items": items}


# Registered before /problems/{pid} so that ".../suite" is not read as part of a pid
# (pids may contain slashes, hence the path converter).
@router.get("/problems/{path:pid}/suite", response={200: s.SuiteOut, **ERRORS, 503: s.Error}, tags=["problems"])
def problem_suite(request: HttpRequest, pid: str, params: Query[s.SuiteQuery]) -> dict[str, Any]:
    """A suite's metadata and its tests in run order; bodies with include=tests, for verifiers that run locally."""
    problem = problem_resolve(pid)
    suite = suite_resolve(problem, params.version)
    tests = suite_tests(suite, offset=params.test_offset, limit=params.test_limit, bodies=params.include == "tests")
    return {
        **_suite_brief(suite),
        "problem": problem_ref(problem),
        "counts_by_kind": suite.counts_by_kind or {},
        "total_bytes": suite.total_bytes,
        "time_limit_ms": problem.time_limit_ms,
        "memory_limit_mb": problem.memory_limit_mb,
        "output_judge": suite.output_judge.code if suite.output_judge is not None else None,
        "test_offset": params.test_offset,
        "test_limit": params.test_limit,
        "tests": tests,
    }


@router.get("/problems/{path:pid}", response={200: s.ProblemOut, **ERRORS, 503: s.Error}, tags=["problems"])
def problem_detail(request: HttpRequest, pid: str) -> dict[str, Any]:
    """One problem: statement, limits, samples, labels and its complete suites."""
    problem = problem_resolve(pid)
    suites = problem_complete_suites(problem)
    active = preferred_active([x for x in suites if x.status == TestSuite.Status.ACTIVE])
    samples = [
        {"input": str(x.get("input", "")), "output": str(x.get("output", ""))}
        for x in (problem.samples if isinstance(problem.samples, list) else [])
        if isinstance(x, dict)
    ]
    return {
        **_problem_brief(problem, active),
        "statement": problem.statement,
        "url": problem.url,
        "contest_date": problem.contest_date,
        "samples": samples,
        "suites": [_suite_brief(x) for x in suites],
    }



# Last, so it only catches what no operation above matched: an unknown path under
# /api/v1/ answers JSON 404 like the rest of the API, not Django's HTML page.
@router.api_operation(
    ["GET", "POST", "PUT", "PATCH", "DELETE"], "/{path:rest}", auth=None, include_in_schema=False
)
def unknown_path(request: HttpRequest, rest: str) -> None:
    # The path is echoed without a token in it (clients put their answers in errors and logs).
    raise NotFound(f"no API operation at {redact(request.path[:300])!r}; see /api/v1/openapi.json")
