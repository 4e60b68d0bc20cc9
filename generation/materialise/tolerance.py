"""Real-number answers: the error a problem allows, and comparing outputs within it.

`answer_tolerance` reads the bound from the kit or the statement (the bound nearest its words;
absolute only when the statement says so; no tolerance from story words in an integer problem);
`within_tolerance` compares two outputs with it, and `tolerance_judge_code` is the standard judging
function that applies the same rule in the sandbox (marked, so that the pipeline knows it wrote it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from problems.models import Problem


def _text(data: bytes | str | None) -> str:
    if isinstance(data, str):
        return data
    return (data or b"").decode("utf-8", "replace")


# "absolute or relative error", "error does not exceed", "precision of", "tolerance" ...: these words say
# the answers are real numbers even without a number next to them.
_ERROR_WORDS = re.compile(r"(absolute|relative)\s+(or\s+(absolute|relative)\s+)?error|error\s+(of|does\s+not\s+"
                          r"exceed|not\s+exceeding|at\s+most|within|less\s+than|up\s+to|≤|<=)|tolerance|accurate\s+to"
                          r"|precision\s+(of|up\s+to|at\s+least|is|\$|10|1e|0\.)", re.IGNORECASE)
# Weaker words ("may differ from the exact value by at most 10^{-6}", "answers within 1e-6 are accepted"):
# they state a bound only with a negative power of ten next to them.
_BOUND_WORDS = re.compile(r"\bdiffer(s|ence)?\b|\bdeviat\w*|\bwithin\b|\baccepted\b|considered\s+correct",
                          re.IGNORECASE)
# 10^{-6}, 10^-6, $10^{−6}$, 1e-6, 1E-06, 10**-6, 10<sup>-6</sup>, and "10-6" (a superscript lost in a
# scraped statement; only looked for next to the error words)
_EXPONENT = re.compile(r"10\s*(?:\^|\*\*)\s*\{?\s*[-−–]\s*(\d{1,2})\s*\}?|\b1(?:\.0*)?\s*[eE]\s*[-−–]\s*0*(\d{1,2})"
                       r"|10\s*<sup>\s*[-−–]\s*(\d{1,2})|\b10\s?[-−–](\d{1,2})\b")
# 0.000001 written out
_DECIMAL_BOUND = re.compile(r"\b0\.(0{1,11})1\b")
# A sample answer printed with four or more decimals is a real number, not a formatted one.
_REAL_TOKEN = re.compile(r"^[+-]?\d*\.\d{4,}(?:[eE][+-]?\d+)?$")
# Any number with a fractional part or an exponent.
_FRACTION_TOKEN = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+)$")
DEFAULT_TOLERANCE = 1e-6
_WINDOW = 300


@dataclass(frozen=True)
class Tolerance:
    """The error the problem allows on real-number answers: `bound`, absolute or relative (the larger
    allowance wins) unless the statement speaks of an absolute error only."""

    bound: float
    relative: bool = True

    def allows(self, got: float, want: float) -> bool:
        return abs(got - want) <= self.bound * (max(1.0, abs(want)) if self.relative else 1.0)

    def __str__(self) -> str:
        return f"{self.bound:g}" + ("" if self.relative else ", absolute error only")


def _bounds(window: str, anchor: int) -> list[tuple[int, float]]:
    """(distance from the anchor, bound) of every bound in a window; those after the anchor count nearer."""
    found = [(m.start(), 10.0 ** -int(next(g for g in m.groups() if g))) for m in _EXPONENT.finditer(window)]
    found += [(m.start(), 10.0 ** -(len(m.group(1)) + 1)) for m in _DECIMAL_BOUND.finditer(window)]
    return [(pos - anchor if pos >= anchor else 2 * (anchor - pos), value) for pos, value in found]


def _stated_bounds(statement: str, words: re.Pattern[str]) -> tuple[list[float], bool]:
    """The bound nearest each of `words` (another power of ten elsewhere in the window, such as an input's
    precision, is not the answer's), and whether the words occur at all."""
    found: list[float] = []
    mentioned = False
    for match in words.finditer(statement):
        mentioned = True
        lo = max(0, match.start() - _WINDOW // 3)
        near = _bounds(statement[lo: match.end() + _WINDOW], match.start() - lo)
        if near:
            found.append(min(near)[1])
    return found, mentioned


def answer_tolerance(problem: Problem, kit: object = None) -> Tolerance | None:
    """The error the problem allows on real-number answers, or None (exact tokens).

    Declared in the kit (extra["float_tolerance"], and extra["float_tolerance_relative"] false for an
    absolute bound) it wins; else the bound stated next to words like "absolute or relative error" (or,
    failing those, "may differ by at most"); else DEFAULT_TOLERANCE when the error words appear without
    a number and the samples do not contradict it (an integer problem whose story speaks of a
    "tolerance" keeps exact answers), or when a sample's answer is a real number with four or more
    decimals. The bound is relative too unless the statement speaks of an absolute error only.
    """
    extra = getattr(kit, "extra", None) or {}
    declared = extra.get("float_tolerance") if isinstance(extra, dict) else None
    if isinstance(declared, int | float) and not isinstance(declared, bool) and 0 < declared < 1:
        return Tolerance(float(declared), extra.get("float_tolerance_relative") is not False)
    statement = problem.statement or ""
    lowered = statement.lower()
    relative = not ("absolute" in lowered and "relative" not in lowered)
    found, mentioned = _stated_bounds(statement, _ERROR_WORDS)
    if not found:
        found = _stated_bounds(statement, _BOUND_WORDS)[0]
    if found:
        # The most lenient bound stated: the pipeline must accept whatever the statement accepts.
        return Tolerance(max(found), relative)
    outputs = [s.get("output") for s in problem.samples or [] if isinstance(s, dict)]
    tokens = [t for out in outputs if isinstance(out, str) for t in out.split()]
    if mentioned and (not tokens or any(_FRACTION_TOKEN.match(t) for t in tokens)):
        return Tolerance(DEFAULT_TOLERANCE, relative)
    if any(_REAL_TOKEN.match(token) for token in tokens):
        return Tolerance(DEFAULT_TOLERANCE, relative)
    return None


_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_INTEGER = re.compile(r"^[+-]?\d+$")


def _integer_key(token: str) -> str:
    """An integer token without its sign's "+" and leading zeros ("-0" is "0"); no int(), whose
    4300-digit limit a long answer would hit."""
    digits = token.lstrip("+-").lstrip("0") or "0"
    return ("-" if token.startswith("-") and digits != "0" else "") + digits


def _as_tolerance(tolerance: Tolerance | float) -> Tolerance:
    return tolerance if isinstance(tolerance, Tolerance) else Tolerance(float(tolerance))


def within_tolerance(reference: bytes | str, candidate: bytes | str, tolerance: Tolerance | float) -> bool:
    """Tokens equal, or numbers within the tolerance. Two integers must be equal as integers ("-0" is
    "0"): a relative tolerance would let 1000000001 pass for 1000000000. The standard judge
    (TOLERANCE_JUDGE) applies the same rule in the sandbox."""
    allowed = _as_tolerance(tolerance)
    want, got = _text(reference).split(), _text(candidate).split()
    if len(want) != len(got):
        return False
    for a, b in zip(got, want, strict=True):
        if a == b:
            continue
        if not (_NUMBER.match(a) and _NUMBER.match(b)):
            return False
        if _INTEGER.match(a) and _INTEGER.match(b):
            if _integer_key(a) != _integer_key(b):
                return False
            continue
        if not allowed.allows(float(a), float(b)):
            return False
    return True


# The first line of every standard judge: a judge the pipeline wrote, not one the model or a person chose.
STANDARD_JUDGE_MARK = "# hardtests: standard real-number judge"


def tolerance_judge_code(tolerance: Tolerance | float) -> str:
    """The standard judge for real-number answers: tokens equal, or numbers within the tolerance
    (absolute or relative, or absolute only), two integers exactly; plain decimal notation only, so
    "nan", "inf" or "1_0" never pass."""
    allowed = _as_tolerance(tolerance)
    return (TOLERANCE_JUDGE.replace("TOLERANCE = 0", f"TOLERANCE = {allowed.bound!r}")
            .replace("RELATIVE = True", f"RELATIVE = {allowed.relative!r}"))


def is_standard_judge(code: str | None) -> bool:
    return code is not None and code.startswith(STANDARD_JUDGE_MARK)


TOLERANCE_JUDGE = STANDARD_JUDGE_MARK + """
import re

TOLERANCE = 0
RELATIVE = True
NUMBER = re.compile(r"^[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?$")
INTEGER = re.compile(r"^[+-]?\\d+$")


def integer_key(token):
    digits = token.lstrip("+-").lstrip("0") or "0"
    return ("-" if token.startswith("-") and digits != "0" else "") + digits


def output_judging_function(input_str, candidate_output, reference_output):
    got, want = candidate_output.split(), reference_output.split()
    if len(got) != len(want):
        return False
    for a, b in zip(got, want):
        if a == b:
            continue
        if not (NUMBER.match(a) and NUMBER.match(b)):
            return False
        if INTEGER.match(a) and INTEGER.match(b):
            if integer_key(a) != integer_key(b):
                return False
            continue
        x, y = float(a), float(b)
        if abs(x - y) > TOLERANCE * (max(1.0, abs(y)) if RELATIVE else 1.0):
            return False
    return True
"""
