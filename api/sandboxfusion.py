"""SandboxFusion-compatible endpoints: POST <prefix>run_code and POST <prefix>submit.

The request and response bodies follow SandboxFusion's server models (as its PyPI client
`sandbox-fusion` sends and parses them), so that client, verl's built-in `sandbox_fusion`
reward and any other SandboxFusion caller work unchanged. Differences a caller can notice:

- languages are python (also python3), cpp, java and c (C compiled with gcc, never as C++: SandboxFusion's
  /run_code has no C, its extraction labels ```c blocks "c"); others answer 400;
- `run_timeout` is a CPU-time limit (the wall clock is a backstop), `compile_timeout` is
  ignored (compiles have the sandbox's own limits), `files` / `fetch_files` must be empty;
- `submit` judges against one of our problems: `id` is its pid (or source:pid), `dataset`
  is free text; the code is extracted from `completion` here, fence labels mapped to our
  languages (`config.language` picks among several blocks); by default tests stop at the
  first failure (`config.extra.mode = "all"` runs every test);
- an infrastructure failure is HTTP 503 (with `status: SandboxError` on /run_code), never a
  normal-looking answer; both clients raise on it (verl's built-in reward counts it a failed test);
- /run_code shares the workers among programs (api/coderun.py): a slow program's many runs wait
  for its share, and a run that cannot start before the caller's read timeout (verl:
  compile_timeout + run_timeout + 10 s) is not run: TimeLimitExceeded when a run of that program
  was a TLE, else 503 `busy`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from django.conf import settings
from django.http import HttpRequest
from ninja import Field, NinjaAPI, Router, Schema, Status

from api.coderun import code_run
from api.conf import api_setting
from api.errors import BadRequest, PayloadTooLarge, Unavailable, install_error_handlers
from api.headerless import HeaderlessAuth, HeaderlessRequest
from api.schemas import CleanStr, Error, ValidationErrorOut
from api.verification import verification_prepare, verify_one
from hardtests_client.extract import (
    LANGUAGE_ALIASES,
    extract_code,
    guess_language,
    language_name,
    normalise,
    strip_label_line,
)
from problems.verify_types import Mode

DEFAULT_MEMORY_MB = 1024
# verl's built-in reward waits compile_timeout + run_timeout + this for an answer
# (verl/utils/reward_score/sandbox_fusion/utils.py, API_TIMEOUT); we answer this much earlier
CALLER_EXTRA_S = 10.0
ANSWER_MARGIN_S = 3.0
MIN_ANSWER_S = 5.0


class CommandRunResult(Schema):
    status: Literal["Finished", "Error", "TimeLimitExceeded"]
    execution_time: float | None = None
    cpu_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None
    stdout_encoding: Literal["utf-8", "base64"] = Field("utf-8", description="base64 when the output is not UTF-8 "
                                                        "text (or its JSON escapes would outgrow the cap)")
    stderr_encoding: Literal["utf-8", "base64"] = "utf-8"
    stdout_truncated: bool = Field(False, description="stdout holds only a prefix of what the program wrote")
    stderr_truncated: bool = False


# SandboxFusion's names of the languages we run, and the fence labels that mean them: a Literal
# built from LANGUAGE_ALIASES at run time (the schema lists them), which a checker cannot read.
if TYPE_CHECKING:
    LanguageName: TypeAlias = str
else:
    LanguageName = Literal[tuple(sorted(LANGUAGE_ALIASES))]


class RunCodeIn(Schema):
    code: CleanStr = Field(description="the program")
    language: LanguageName = Field(description="python, cpp, java or c (SandboxFusion's names; python3, c++... too)")
    stdin: CleanStr | None = None
    compile_timeout: float = Field(10, description="ignored: compiles run under the sandbox's own limits")
    run_timeout: float = Field(10, gt=0, description="CPU seconds, at most HARDTESTS_RUN_CODE_MAX_TIME_S")
    memory_limit_MB: int | None = Field(-1, description="MiB; -1, null or absent: 1024 (SandboxFusion's default; "
                                                         "verl sends null); at most HARDTESTS_RUN_CODE_MAX_MEMORY_MB")
    files: dict[str, str | None] = Field({}, max_length=0, description="not supported: must be empty")
    fetch_files: list[str] = Field([], max_length=0, description="not supported: must be empty")


class RunCodeOut(Schema):
    status: Literal["Success", "Failed", "SandboxError"]
    message: str
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = {}


class TestConfigIn(Schema):
    # defaults by keyword: a checker reads a positional one as no default (dataclass_transform),
    # and SubmitIn builds this with none of its fields
    language: LanguageName | None = Field(default=None, description="pick code blocks with this label (python, cpp, java, c)")
    run_timeout: float | None = Field(default=None, description="ignored: the problem's own time limit applies")
    extra: dict[str, Any] = Field(default={}, description='{"mode": "all"} runs every test (default: stop at the first failure)')


class SubmitIn(Schema):
    dataset: CleanStr = Field(description="free text (e.g. hardtests); the problem is named by id")
    id: int | CleanStr = Field(description="a problem of ours: its pid, or source:pid")
    completion: CleanStr = Field(description="the model's whole answer; the program is extracted from it")
    config: TestConfigIn = Field(default_factory=TestConfigIn)


class EvalTestCase(Schema):
    passed: bool
    exec_info: RunCodeOut
    test_info: dict[str, Any] | None = None


class EvalResult(Schema):
    id: int | str
    accepted: bool
    extracted_code: str
    full_code: str | None = None
    test_code: str | None = None
    tests: list[EvalTestCase]
    extracted_type: Literal["fenced", "incomplete_fenced", "heuristic", "empty"] | None = None
    extra: dict[str, Any] | None = None


ERRORS = {400: ValidationErrorOut, 401: Error, 404: Error, 413: Error, 429: Error}
router = Router()


def _language(raw: str) -> str:
    found = language_name(raw)
    if found is None:
        known = ", ".join(sorted({k for k, v in LANGUAGE_ALIASES.items() if k in ("python", "cpp", "java", "c")}))
        raise BadRequest(f"unsupported language {raw[:40]!r}; this server runs {known}", code="unsupported_language")
    return found


@router.post("/run_code", response={200: RunCodeOut, 503: RunCodeOut | Error, **ERRORS})
def run_code(request: HttpRequest, body: RunCodeIn) -> Status[dict[str, Any]]:
    """Run a program once on stdin in the sandbox (SandboxFusion's /run_code)."""
    declared = _language(body.language)
    if body.files or body.fetch_files:
        raise BadRequest("files and fetch_files are not supported here", code="files_unsupported")
    limit_kb = api_setting("HARDTESTS_API_MAX_CODE_KB")
    if len(body.code.encode("utf-8")) > limit_kb * 1024:
        raise PayloadTooLarge(f"code is larger than {limit_kb} KiB", code="code_too_large")
    # LF line ends first: what verl's built-in extraction leaves of a fence label ("cpp\r#include")
    # is found on a line of its own; compilers and Python read CR and CRLF as LF anyway.
    code = normalise(body.code)
    language = guess_language(code, declared)
    time_s = min(float(body.run_timeout), float(settings.HARDTESTS_RUN_CODE_MAX_TIME_S))
    memory = body.memory_limit_MB if body.memory_limit_MB and body.memory_limit_MB > 0 else DEFAULT_MEMORY_MB
    memory = max(16, min(memory, settings.HARDTESTS_RUN_CODE_MAX_MEMORY_MB))
    # verl's built-in reward reads the answer for compile_timeout + run_timeout + 10 s (its
    # API_TIMEOUT): a run that cannot start in time for that is answered 503 before it
    caller_waits_s = float(body.compile_timeout) + float(body.run_timeout) + CALLER_EXTRA_S - ANSWER_MARGIN_S
    out = code_run(language=language, code=strip_label_line(code), stdin=body.stdin or "", time_s=time_s,
                   memory_mb=memory, owner=getattr(getattr(request, "auth", None), "user_id", None),
                   answer_within_s=max(MIN_ANSWER_S, caller_waits_s))
    if out["status"] == "SandboxError":
        return Status(503, out)
    return Status(200, out)


def _exec_info(test: dict[str, Any], message: str) -> dict[str, Any]:
    """A judged test in RunCodeResponse terms (our judge keeps no stdout of passing runs)."""
    verdict, seconds = test["verdict"], test["time_ms"] / 1000
    run: dict[str, Any] = {"status": "Finished", "execution_time": seconds, "cpu_time": seconds, "return_code": 0,
                           "stdout": None, "stderr": ""}
    if verdict in ("AC", "WA"):
        return {"status": "Success", "message": "" if verdict == "AC" else "wrong answer", "run_result": run}
    if verdict == "TLE":
        run.update(status="TimeLimitExceeded", return_code=None)
    else:
        run.update(return_code=1, stderr=f"{verdict}\n{message}")
    return {"status": "Failed", "message": verdict, "run_result": run}


@router.post("/submit", response={200: EvalResult, 503: Error, **ERRORS})
def submit(request: HeaderlessRequest, body: SubmitIn) -> dict[str, Any]:
    """Extract the program from a completion and judge it against problem `id` (SandboxFusion's /submit)."""
    wanted = _language(body.config.language) if body.config.language else None
    found = extract_code(body.completion, language=wanted, default_language="python3")
    try:
        mode = Mode(body.config.extra.get("mode", Mode.FAIL_FAST))
    except ValueError:
        raise BadRequest("config.extra.mode must be fail_fast or all", code="invalid") from None
    item = verification_prepare(problem=str(body.id), language=found.language or "python3",
                                code=found.code or "\n", mode=mode, suite=None)
    base = {"id": body.id, "extracted_code": found.code, "full_code": found.code, "extracted_type": found.kind}
    if found.kind == "empty":
        # No program in the answer: a real 0, nothing to run.
        return {**base, "accepted": False, "tests": [], "extra": {"verdict": "CE", "language": found.language,
                                                                  "message": f"no code: {found.reason}",
                                                                  "reason": found.reason}}
    outcome = verify_one(item, owner_id=request.auth.user_id)
    result = outcome.result
    if result is None or result.verdict == "SE":
        # (verify_one answers a result or raises: an outcome in error has no result here)
        reason = (outcome.error or "no reason given") if result is None else (result.message or "sandbox error")
        raise Unavailable(f"judging failed on the sandbox side: {reason[:500]}", code="sandbox_error")
    message = result.message[-4000:]
    if result.verdict == "CE":
        compile_result = {"status": "Finished", "return_code": 1, "stdout": "", "stderr": message}
        tests = [{"passed": False, "exec_info": {"status": "Failed", "message": "compilation failed",
                                                 "compile_result": compile_result}, "test_info": None}]
    else:
        tests = [{"passed": t["verdict"] == "AC", "exec_info": _exec_info(t, message), "test_info": t}
                 for t in result.tests]
    return {
        **base,
        "accepted": result.verdict == "AC" and result.passed == result.total > 0,
        "tests": tests,
        "extra": {"verdict": result.verdict, "language": item.request.language, "passed": result.passed,
                  "total": result.total, "complete": result.complete, "suite_version": result.suite_version,
                  "suite_origin": result.suite_origin},
    }


# The same operations with an API token in the path, for clients that cannot send headers
# (accepted only with HARDTESTS_API_URL_TOKENS=1; HeaderlessAuth reads the token).
@router.post("/t/{token}/run_code", response={200: RunCodeOut, 503: RunCodeOut | Error, **ERRORS},
             include_in_schema=False)
def run_code_token(request: HttpRequest, token: str, body: RunCodeIn) -> Status[dict[str, Any]]:
    return run_code(request, body)


@router.post("/t/{token}/submit", response={200: EvalResult, 503: Error, **ERRORS}, include_in_schema=False)
def submit_token(request: HeaderlessRequest, token: str, body: SubmitIn) -> dict[str, Any]:
    return submit(request, body)


sandboxfusion_api = NinjaAPI(
    title="HardTests: SandboxFusion-compatible endpoints",
    version="1",
    description="POST /run_code and /submit in SandboxFusion's shapes, for its client, verl and OpenRLHF.",
    auth=HeaderlessAuth(),
    urls_namespace="sandboxfusion",
    docs_url=None,
)
install_error_handlers(sandboxfusion_api)
sandboxfusion_api.add_router("", router)


def sandboxfusion_prefix() -> str:
    stripped = settings.HARDTESTS_SANDBOXFUSION_PREFIX.strip("/")
    return f"{stripped}/" if stripped else ""
