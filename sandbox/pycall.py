"""Calling a function of untrusted Python code (validators, generators, judges) in the sandbox."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .types import CallResult, Limits, Verdict

if TYPE_CHECKING:
    from .base import Sandbox

# The harness is the sandboxed program; the untrusted code is embedded after it
# as a string literal and executed there as a module of its own.  Before any
# user code runs, fd 1 is duplicated to a private descriptor and fd 1 is pointed
# at stderr, so whatever the code prints (from Python or from C) lands on
# stderr and only the harness's final line reaches the real stdout.
HARNESS = r'''
import json, os, sys, traceback

def _describe(exc):
    return "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]

def _main():
    request = json.loads(sys.stdin.buffer.read())
    result_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull)
    def reply(obj):
        data = (json.dumps(obj) + "\n").encode()
        while data:
            data = data[os.write(result_fd, data):]
        os._exit(0)
    module = {"__name__": "user_code", "__builtins__": __builtins__}
    try:
        exec(compile(USER_CODE, "user_code.py", "exec"), module)
    except BaseException as exc:
        reply({"ok": False, "error": "loading the code failed: " + _describe(exc)})
    func = module.get(request["function"])
    if not callable(func):
        reply({"ok": False, "error": "no function named %r in the code" % request["function"]})
    try:
        value = func(*request["args"])
    except BaseException as exc:
        reply({"ok": False, "error": _describe(exc)})
    try:
        reply({"ok": True, "value": value, "_json": json.dumps(value, allow_nan=False)})
    except (TypeError, ValueError) as exc:
        reply({"ok": False, "error": "the return value is not JSON-serialisable: " + _describe(exc)})

_main()
'''


def harness_source(code: str) -> str:
    return f"USER_CODE = {code!r}\n{HARNESS}"


def call_python(
    sb: Sandbox, code: str, function: str, args_list: Sequence[tuple[Any, ...] | list[Any]], limits: Limits,
    *, prelude: str = "",
) -> list[CallResult]:
    """For each args tuple, a fresh sandboxed process runs `function(*args)`; results are JSON values.
    `prelude` is Python run before the harness (the pipeline's fixed hash seed)."""
    prog = sb.compile("python3", prelude + harness_source(code))
    if not prog.ok:
        error = f"cannot prepare the code ({prog.verdict}): {prog.message.strip()[-500:]}"
        return [CallResult(ok=False, error=error, verdict=prog.verdict) for _ in args_list]
    inputs = [json.dumps({"function": function, "args": list(args)}) for args in args_list]
    results = sb.run(prog, inputs, limits)
    calls: list[CallResult] = []
    for run in results:
        if run.verdict not in (Verdict.OK, Verdict.RE):
            calls.append(CallResult(ok=False, error=_limit_message(run.verdict, run.stderr), verdict=run.verdict,
                                    time_ms=run.time_ms))
            continue
        reply = _parse_reply(run.stdout)
        if reply is None:
            tail = run.stderr.strip().splitlines()[-1:] or ["no result"]
            calls.append(CallResult(ok=False, error=f"the code exited without a result: {tail[0]}",
                                    verdict=run.verdict, time_ms=run.time_ms))
            continue
        calls.append(CallResult(ok=bool(reply.get("ok")), value=reply.get("value"), error=reply.get("error"),
                                verdict=run.verdict, time_ms=run.time_ms))
    return calls


def _parse_reply(stdout: bytes) -> dict[str, Any] | None:
    lines = stdout.strip().splitlines()
    if len(lines) != 1:
        return None
    try:
        reply = json.loads(lines[0])
    except ValueError:
        return None
    if not isinstance(reply, dict) or "ok" not in reply:
        return None
    if reply.get("ok"):
        # the value is re-read from the harness's own strict encoding (no NaN, no Infinity)
        try:
            reply["value"] = json.loads(reply.pop("_json"))
        except (KeyError, TypeError, ValueError):
            return None
    return reply


def _limit_message(verdict: Verdict, stderr: str) -> str:
    names = {
        Verdict.TLE: "time limit exceeded",
        Verdict.MLE: "memory limit exceeded",
        Verdict.OLE: "output limit exceeded",
        Verdict.CE: "compilation error",
        Verdict.SE: "sandbox error",
    }
    tail = stderr.strip().splitlines()[-1:] if verdict == Verdict.SE else []
    return ": ".join([names.get(verdict, str(verdict)), *tail])
