"""Request and response shapes of /api/v1/ (they are the OpenAPI schema clients see)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

import annotated_types
from django.conf import settings
from ninja import Field, Schema
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, StringConstraints

MAX_INT = 2**31 - 1


def _clean(value: str) -> str:
    # JSON can carry lone surrogates and NUL; neither can be stored, compiled or queried
    # (PostgreSQL refuses NUL, UTF-8 refuses surrogates), so they are bad input, not a 500.
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode (no lone surrogates)") from None
    return value


# The pattern puts "no NUL" in the OpenAPI schema too, so clients (and fuzzers) know it.
CleanStr = Annotated[str, StringConstraints(pattern=r"^[^\x00]*$"), AfterValidator(_clean)]
Language = Literal["python3", "c", "cpp", "java"]
# The values of problems.verify_types.Mode (tests/api/test_verify_contract.py holds them equal), as a
# Literal so the OpenAPI schema and a refusal's body stay as clients know them; the views make it a Mode.
Mode = Literal["fail_fast", "all"]
TestVerdict = Literal["AC", "WA", "TLE", "MLE", "RE", "OLE", "CE", "SE"]


class Error(Schema):
    code: str = Field(description="machine-readable reason, e.g. not_found, rate_limited, too_large")
    detail: str = Field(description="a sentence for people")


class ValidationErrorItem(Schema):
    loc: list[str]
    msg: str
    type: str


class ValidationErrorOut(Error):
    errors: list[ValidationErrorItem] = []


def _not_bool_or_text(value: Any) -> Any:
    if isinstance(value, bool | str):
        raise ValueError("a suite version is a whole number")
    return value


# /api/v1/'s own requests refuse a field they do not know (422 `unknown_field` naming it): a
# misspelt "rewardd" or "wait" silently ignored is a setting the caller believes in and does not
# have. The compatible endpoints (/sandboxfusion/, /api/v1/openrlhf/) keep ignoring them, as the
# servers they stand in for do: their clients send fields of their own (SandboxFusion's
# TestConfig has a dozen this server has no use for).
_NO_UNKNOWN_FIELDS = ConfigDict(extra="forbid")


class VerifyIn(Schema):
    model_config = _NO_UNKNOWN_FIELDS

    problem: CleanStr = Field(
        min_length=1, max_length=300, description="the problem's pid, or source:pid when the pid is ambiguous"
    )
    language: Language
    code: CleanStr = Field(
        min_length=1, description="the program's source; at most HARDTESTS_API_MAX_CODE_KB KiB of UTF-8 (else 413)"
    )
    mode: Mode = Field("fail_fast", description="fail_fast stops at the first failing test; all runs every test")
    # JSON `true` is not suite 1, nor "2" suite 2 (a whole number written 2.0 is 2, as JSON Schema says).
    suite: Annotated[int, annotated_types.Interval(ge=1, le=MAX_INT), BeforeValidator(_not_bool_or_text)] | Literal["full", "fast"] | None = Field(
        None, description="a suite version of this problem; default (or \"full\"): the active suite; \"fast\": "
                          "the active suite's fast subset (fails every known-wrong program the full suite fails, "
                          "plus the largest tests), for training; the full suite for evaluation"
    )


class Built(BaseModel):
    """A response body the view builds as a dict (verification results): plain pydantic, not
    ninja's Schema, whose validator reads every field of every nested object through a getter
    made for ORM objects (about 1.2 ms for a 40-test result, on every verification)."""


class TestOut(Built):
    index: int = Field(description="position in run order (the suite's kill order, else hacking tests first)")
    ordinal: int = Field(description="the test's number within its suite")
    kind: str
    verdict: TestVerdict
    time_ms: int
    wall_ms: int
    memory_kb: int
    message: str = Field(default="", description="what judged a failing test said (a package checker's message)")
    interaction: str = Field(default="", description=(
        "an interactive test's talk, one line per line sent: '> ' program to interactor, '< ' interactor to "
        "program; cut at 2000 characters, ending '[... N more bytes of TOTAL not shown]' when cut; empty for "
        "other problems"))


class VerifyOut(Built):
    reward: Literal[0, 1] = Field(description="1 when every test passed, else 0")
    pass_fraction: float = Field(description="passed / total; in fail_fast mode a lower bound")
    verdict: TestVerdict = Field(description="AC, or the verdict of the first failing test")
    passed: int
    total: int
    complete: bool = Field(description="every test ran (mode all, or all passed)")
    tests: list[TestOut]
    suite_version: int
    suite_origin: str
    suite_subset: Literal["full", "fast"] = Field("full", description="the tests judged: the full suite or its fast subset")
    message: str = Field(description="compiler output or stderr of the first failure, truncated")
    judge_ms: int = Field(description="time spent judging on the worker")
    elapsed_ms: int = Field(description="time the API spent on the request, queueing included")
    cached: bool = Field(False, description="the same question (owner, suite, limits, subset, language, mode, "
                                           "program) was judged within HARDTESTS_API_VERDICT_CACHE_S: its result, "
                                           "the program not run again")


class BatchIn(Schema):
    model_config = _NO_UNKNOWN_FIELDS

    # The schema states the limit this server was started with, so clients (and fuzzers) know it;
    # the view checks the current setting again and answers 413 batch_too_large.
    items: list[VerifyIn] = Field(min_length=1, max_length=max(1, int(settings.HARDTESTS_API_BATCH_MAX)),
                                  description="at most HARDTESTS_API_BATCH_MAX programs")


class BatchItemOut(Built):
    index: int
    status: Literal["queued", "running", "finished", "error"] = Field(
        description="error: the worker could not judge this item (infrastructure); it has no result, no reward"
    )
    result: VerifyOut | None = None
    error: str | None = None


class BatchOut(Built):
    job_id: str
    status: Literal["pending", "finished"] = Field(description="finished when every item has a result")
    done: int
    total: int
    items: list[BatchItemOut]


class DifficultyOut(Schema):
    source: str
    level: str
    score: float | None = None


class SuiteBrief(Schema):
    version: int
    origin: str = Field(description="generated, official, imported, public, or oracle_free (model-made outputs: "
                                    "no human oracle checked them; see trust)")
    status: str
    test_count: int
    activated_at: datetime | None = None
    trust: dict[str, Any] | None = Field(
        None, description="oracle_free suites: how the model-made outputs were checked (method, brute force on the "
                          "samples, cross-check, which tests have model-made outputs)")


class ProblemBrief(Schema):
    ref: str = Field(description="source:pid, unambiguous everywhere a problem is named")
    source: str
    pid: str
    title: str
    platform: str
    time_limit_ms: int
    memory_limit_mb: int
    tags: list[str]
    difficulties: list[DifficultyOut]
    active_suite: SuiteBrief | None = Field(None, description="the suite POST /verify uses by default")


class ProblemPage(Schema):
    count: int
    limit: int
    offset: int
    items: list[ProblemBrief]


class SampleOut(Schema):
    input: str
    output: str


class ProblemOut(ProblemBrief):
    statement: str
    url: str
    contest_date: date | None = None
    samples: list[SampleOut]
    suites: list[SuiteBrief] = Field(description="complete suites (active and superseded), newest first")


class SuiteTestOut(Schema):
    index: int
    ordinal: int
    kind: str
    input_size: int
    output_size: int
    input: str | None = Field(None, description="with include=tests")
    output: str | None = Field(None, description="with include=tests; null for a time_only test, which has no "
                                                 "expected output (passed by ending normally within the limits)")


class SuiteOut(SuiteBrief):
    problem: str = Field(description="source:pid")
    counts_by_kind: dict[str, int]
    total_bytes: int
    time_limit_ms: int
    memory_limit_mb: int
    output_judge: str | None = Field(
        None, description="Python defining output_judging_function(input, candidate, reference), if the suite has one"
    )
    test_offset: int
    test_limit: int
    tests: list[SuiteTestOut] = Field(description="in run order (hacking first); bodies only with include=tests")


class ProblemQuery(Schema):
    source: CleanStr | None = Field(None, max_length=50)
    platform: CleanStr | None = Field(None, max_length=50)
    tag: CleanStr | None = Field(None, max_length=100)
    difficulty: CleanStr | None = Field(None, max_length=50, description="a difficulty level, any rater")
    q: CleanStr | None = Field(None, max_length=200, description="substring of the pid or title")
    has_suite: bool | None = Field(None, description="only problems with (true) or without (false) an active suite")
    limit: int = Field(50, ge=1, le=200)
    offset: int = Field(0, ge=0, le=MAX_INT)


class SuiteQuery(Schema):
    version: int | None = Field(None, ge=1, le=MAX_INT, description="default: the active suite")
    include: Literal["tests"] | None = Field(None, description="'tests' adds each test's input and output")
    test_offset: int = Field(0, ge=0, le=MAX_INT)
    test_limit: int = Field(100, ge=1, le=1000)
