"""Worker-side functions of the API that are not judging against a suite.

run_code_job runs one program on one stdin in the sandbox, for the SandboxFusion-compatible
POST /run_code. It answers in SandboxFusion's terms so the web process only relays it.
"""

from __future__ import annotations

import time
from typing import Any

from api.coderun import command_outputs
from problems.jobs import ADMISSION_WAIT_S, STARVED_MARK, cpu_slots, starved_rerun
from sandbox import Limits, RunResult, Verdict, get_sandbox
from sandbox.types import SandboxUnavailable

# Enough for any test output a reward compares, small enough to relay as JSON.
OUTPUT_KB = 8 * 1024
STDERR_CHARS = 8000


def _command(status: str, seconds: float | None, return_code: int | None, stdout: bytes | str, stderr: str,
             stdout_truncated: bool = False) -> dict[str, Any]:
    outputs = command_outputs(stdout.encode("utf-8") if isinstance(stdout, str) else stdout, stderr,
                              stderr_cap=STDERR_CHARS)
    outputs["stdout_truncated"] = outputs["stdout_truncated"] or stdout_truncated
    return {"status": status, "execution_time": seconds, "cpu_time": seconds, "return_code": return_code, **outputs}


def _run_result(run: RunResult) -> dict[str, Any]:
    seconds = run.time_ms / 1000
    stdout, cut = run.stdout, run.stdout_truncated
    if run.verdict == Verdict.OK:
        return _command("Finished", seconds, 0, stdout, run.stderr, cut)
    if run.verdict == Verdict.TLE:
        return _command("TimeLimitExceeded", seconds, None, stdout, run.stderr, cut)
    # A killed program has no exit code; SandboxFusion reports the negated signal.
    code = run.exit_code if run.exit_code not in (None, 0) else (-run.signal if run.signal else 1)
    note = {Verdict.MLE: "memory limit exceeded\n", Verdict.OLE: "output limit exceeded\n"}.get(run.verdict, "")
    return _command("Finished", seconds, code, stdout, note + run.stderr, cut)


def _starved(response: dict[str, Any]) -> bool:
    return response.get("status") == "SandboxError" and STARVED_MARK in str(response.get("message") or "")


def run_code_job(language: str, code: str, stdin: str, time_s: float, memory_mb: int,
                 answer_by: float | None = None) -> dict[str, Any]:
    """Compile and run ``code`` once; SandboxFusion's RunCodeResponse (status, message, results).
    A run starved by an overloaded machine is run again at a calmer moment (bounded, and only
    while the caller still waits: ``answer_by``, epoch seconds)."""
    def run() -> dict[str, Any]:
        with cpu_slots(1, wait_s=ADMISSION_WAIT_S if answer_by is None else max(0.0, answer_by - time.time() - 1)):
            return _run_code(language, code, stdin, time_s, memory_mb)

    return starved_rerun(run, answer_by=answer_by, is_starved=_starved)


def _run_code(language: str, code: str, stdin: str, time_s: float, memory_mb: int) -> dict[str, Any]:
    try:
        sb = get_sandbox()
    except SandboxUnavailable as exc:
        return {"status": "SandboxError", "message": f"sandbox unavailable: {exc}"}
    program = sb.compile(language, code)
    compile_result = None
    if language != "python3":
        compile_result = _command("Finished", program.compile_ms / 1000, 0 if program.ok else 1, "",
                                  program.message if not program.ok else "")
    if program.verdict == Verdict.SE:
        return {"status": "SandboxError", "message": program.message[-2000:], "compile_result": compile_result}
    if not program.ok:
        if compile_result is None:  # a Python syntax error is found at compile time too
            compile_result = _command("Finished", 0.0, 1, "", program.message)
        return {"status": "Failed", "message": "compilation failed", "compile_result": compile_result}
    [run] = sb.run(program, [stdin.encode("utf-8")], Limits(time_s=time_s, memory_mb=memory_mb, output_kb=OUTPUT_KB))
    if run.verdict == Verdict.SE:
        # its head says why (a starved run: the machine is overloaded), its tail what the program wrote
        message = run.stderr if len(run.stderr) <= 2000 else run.stderr[:500] + "\n...\n" + run.stderr[-1500:]
        return {"status": "SandboxError", "message": message or "sandbox error",
                "compile_result": compile_result}
    return {
        "status": "Success" if run.verdict == Verdict.OK else "Failed",
        "message": "" if run.verdict == Verdict.OK else str(run.verdict),
        "compile_result": compile_result,
        "run_result": _run_result(run),
    }
