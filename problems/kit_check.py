"""Checks an edited validator or judging function must pass before it is saved as a kit version.

A broken validator saved as the current kit only fails minutes later inside a run, and then
sits as "current" with nothing to show for it. So the code is checked first: it parses, it
defines the function at top level, and, in the sandbox (the only place user code runs), the
validator accepts every sample input and the judge accepts every sample's own output. The
sandbox calls are bounded (a few seconds per call, samples only), like the verification API.
"""

from __future__ import annotations

import ast
from typing import Any

from core import pysource
from problems.models import Problem
from sandbox import Limits, Sandbox, call_python, get_sandbox

CHECK_LIMITS = Limits(time_s=5, memory_mb=512)
MAX_SAMPLES_CHECKED = 10
VALIDATOR_FUNCTION = "validate_input"
JUDGE_FUNCTION = "output_judging_function"


def _defines(code: str, function: str, label: str) -> str | None:
    """An error when the code does not parse or has no top-level `function` (parsing runs nothing)."""
    try:
        tree = pysource.parse(code)
    except SyntaxError as exc:
        return f"{label}: syntax error on line {exc.lineno}: {exc.msg}"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            return None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == function for t in node.targets):
            return None
    return f"{label}: defines no top-level function {function}()"


def _samples(problem: Problem) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for sample in problem.samples or []:
        if isinstance(sample, dict):
            inp, out = sample.get("input"), sample.get("output")
        elif isinstance(sample, (list, tuple)) and len(sample) == 2:
            inp, out = sample
        else:
            continue
        if isinstance(inp, str) and isinstance(out, str):
            pairs.append((inp, out))
    return pairs[:MAX_SAMPLES_CHECKED]


def _call_errors(results: list[Any], label: str, what: str) -> list[str]:
    errors = []
    for i, result in enumerate(results, 1):
        if not result.ok:
            errors.append(f"{label} failed on sample {i}: {result.error or 'no result'}")
        elif result.value is not True:
            errors.append(f"{label} {what} sample {i} (returned {result.value!r})")
    return errors


def kit_code_errors(*, problem: Problem, validator_code: str, judge_code: str, sb: Sandbox | None = None) -> list[str]:
    """Every reason the code cannot be saved; empty when it may be."""
    errors = [e for e in (
        _defines(validator_code, VALIDATOR_FUNCTION, "Validator"),
        _defines(judge_code, JUDGE_FUNCTION, "Judging function") if judge_code.strip() else None,
    ) if e]
    if errors:
        return errors
    samples = _samples(problem)
    if not samples:
        return []
    sb = sb or get_sandbox()
    errors += _call_errors(
        call_python(sb, validator_code, VALIDATOR_FUNCTION, [(inp,) for inp, _ in samples], CHECK_LIMITS),
        "Validator", "rejects")
    if judge_code.strip():
        errors += _call_errors(
            call_python(sb, judge_code, JUDGE_FUNCTION, [(inp, out, out) for inp, out in samples], CHECK_LIMITS),
            "Judging function", "rejects the expected output of")
    return errors
