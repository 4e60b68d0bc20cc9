"""Output comparators (trusted code; the problem's own judging function runs in the sandbox)."""

from __future__ import annotations

import math


def _text(data: str | bytes) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def _lines(data: str | bytes) -> list[str]:
    lines = [line.rstrip() for line in _text(data).replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def compare_default(expected: str | bytes, actual: str | bytes) -> bool:
    """Equal up to trailing whitespace on each line and trailing blank lines."""
    return _lines(expected) == _lines(actual)


def _as_float(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    return value


def compare_float(
    expected: str | bytes, actual: str | bytes, *, abs_tol: float = 1e-6, rel_tol: float = 1e-6
) -> bool:
    """Token-wise: numbers within tolerance (absolute or relative), other tokens exact."""
    exp_tokens = _text(expected).split()
    act_tokens = _text(actual).split()
    if len(exp_tokens) != len(act_tokens):
        return False
    for exp, act in zip(exp_tokens, act_tokens, strict=True):
        if exp == act:
            continue
        e, a = _as_float(exp), _as_float(act)
        if e is None or a is None or math.isnan(e) or math.isnan(a):
            return False
        if math.isinf(e) or math.isinf(a):
            if e != a:
                return False
            continue
        if not math.isclose(e, a, rel_tol=rel_tol, abs_tol=abs_tol):
            return False
    return True
