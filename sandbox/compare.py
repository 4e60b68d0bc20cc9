"""Output comparators (trusted code; the problem's own judging function runs in the sandbox)."""

from __future__ import annotations

import math


def _text(data: str | bytes) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def _bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def compare_tokens(expected: str | bytes, actual: str | bytes) -> bool:
    """Equal as sequences of whitespace-separated tokens (testlib's wcmp, Kattis' default):
    spaces, tabs, line breaks and their number between tokens do not matter, tokens do."""
    return _bytes(expected).split() == _bytes(actual).split()


def compare_exact(expected: str | bytes, actual: str | bytes) -> bool:
    """Byte for byte, except CRLF line ends and trailing newlines at the very end."""
    exp = _bytes(expected).replace(b"\r\n", b"\n").rstrip(b"\n")
    act = _bytes(actual).replace(b"\r\n", b"\n").rstrip(b"\n")
    return exp == act


COMPARATORS = {"tokens": compare_tokens, "exact": compare_exact}


def compare_outputs(expected: str | bytes, actual: str | bytes, mode: str = "tokens") -> bool:
    """The comparison a problem asks for by name ("tokens", the default, or "exact")."""
    return COMPARATORS.get(mode, compare_tokens)(expected, actual)


# The default everywhere a problem names no comparison.
compare_default = compare_tokens


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
