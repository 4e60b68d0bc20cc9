"""problemtools' default output validator, in Python (trusted code, run in the worker).

A line-for-line port of Kattis/problemtools support/default_validator/default_validator.cc:
tokens compared case-insensitively unless `case_sensitive`; whitespace runs free unless
`space_change_sensitive`; with a float tolerance, a judge token that parses as a finite
float (`sscanf("%lf")`, the whole token) accepts a team token within the absolute OR the
relative tolerance (an integer token is a float too, as in the C++). Messages are the
validator's own judgemessage.txt text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# C's isspace in the "C" locale
_SPACE = b" \t\n\v\f\r"
FLAG_NAMES = ("case_sensitive", "space_change_sensitive", "float_tolerance", "float_absolute_tolerance",
              "float_relative_tolerance")
# what strtod reads as a whole token: decimal or hexadecimal, with an optional exponent
_DEC = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?")
_SPECIAL = re.compile(rb"[+-]?(?:inf|infinity|nan(?:\([0-9a-zA-Z_]*\))?)", re.IGNORECASE)


class FlagError(ValueError):
    """validator_flags the default validator refuses (it exits with a judge error)."""


@dataclass(frozen=True)
class Flags:
    case_sensitive: bool = False
    space_change_sensitive: bool = False
    abs_tol: float = -1.0
    rel_tol: float = -1.0

    @property
    def use_floats(self) -> bool:
        return self.abs_tol >= 0 or self.rel_tol >= 0


def parse_flags(flags: list[str] | tuple[str, ...]) -> Flags:
    """The default validator's argv options; FlagError where it would fail with its usage."""
    case = space = False
    abs_tol = rel_tol = -1.0
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag == "case_sensitive":
            case = True
        elif flag == "space_change_sensitive":
            space = True
        elif flag in ("float_absolute_tolerance", "float_relative_tolerance", "float_tolerance"):
            value = parse_float(flags[i + 1].encode()) if i + 1 < len(flags) else None
            if value is None:
                raise FlagError(f"{flag} needs a finite number after it")
            if flag != "float_relative_tolerance":
                abs_tol = value
            if flag != "float_absolute_tolerance":
                rel_tol = value
            i += 1
        else:
            raise FlagError(f"unknown default validator flag {flag!r}")
        i += 1
    return Flags(case, space, abs_tol, rel_tol)


def parse_float(token: bytes) -> float | None:
    """isfloat(): the whole token is one strtod number, finite; else None."""
    if _DEC.fullmatch(token):
        value = float(token)
    elif _HEX.fullmatch(token):
        sign = -1.0 if token.startswith(b"-") else 1.0
        try:
            value = sign * float.fromhex(token.lstrip(b"+-").decode())
        except (ValueError, OverflowError):
            return None
    elif _SPECIAL.fullmatch(token):
        return None  # inf and nan parse, and isfloat refuses them
    else:
        return None
    return None if math.isinf(value) or math.isnan(value) else value


def _truncate(data: bytes, limit: int = 30) -> bytes:
    if len(data) <= limit + 5:
        return data
    cut = limit
    while cut < len(data) and cut < limit + 4 and (data[cut] & 0xC0) == 0x80:
        cut += 1
    return data[:cut] + b"..."


def _truncate_pair(a: bytes, b: bytes) -> tuple[bytes, bytes]:
    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    prefix = _truncate(a[:i], 15)
    return prefix + _truncate(a[i:], 15), prefix + _truncate(b[i:], 15)


def _c_str(token: bytes) -> bytes:
    # strcmp/strcasecmp stop at the first NUL
    return token.split(b"\0", 1)[0]


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def peek_space(self) -> bool:
        return self.pos < len(self.data) and self.data[self.pos] in _SPACE

    def get(self) -> int:
        if self.pos >= len(self.data):
            return -1
        self.pos += 1
        return self.data[self.pos - 1]

    def token(self) -> bytes | None:
        # operator>> skips leading whitespace, then reads up to the next
        while self.peek_space():
            self.pos += 1
        start = self.pos
        while self.pos < len(self.data) and self.data[self.pos] not in _SPACE:
            self.pos += 1
        return self.data[start:self.pos] if self.pos > start else None


def validate(answer: bytes, output: bytes, flags: Flags) -> tuple[bool, str]:
    """(accepted, judgemessage) exactly as default_validator.cc decides them."""
    judge, team = _Reader(answer), _Reader(output)
    judge_line = team_line = 1
    team_pos = 0

    def wrong(message: str) -> tuple[bool, str]:
        return False, (f"Wrong answer on line {team_line} of output (corresponding to line {judge_line} in answer "
                       f"file)\n{message}\n")

    token_no = 0
    while True:
        while judge.peek_space():
            c = judge.get()
            if flags.space_change_sensitive:
                d = team.get()
                if c != d:
                    return wrong(f"Space change error: got {d} expected {c}")
                if d == 10:
                    team_line += 1
                team_pos += 1
            if c == 10:
                judge_line += 1
        while team.peek_space():
            d = team.get()
            if flags.space_change_sensitive:
                return wrong(f"Space change error: judge out of space, got {d} from user")
            if d == 10:
                team_line += 1
            team_pos += 1
        want = judge.token()
        if want is None:
            break
        got = team.token()
        if got is None:
            nxt = _text(_truncate(want))
            if token_no == 0 and team_pos == 0:
                return wrong(f"User EOF while judge had more output; user output was empty.\n(Next judge token: {nxt})")
            if token_no == 0:
                return wrong("User EOF while judge had more output; user output contained only whitespace.\n"
                             f"(Next judge token: {nxt})")
            return wrong(f"User EOF while judge had more output\n(Next judge token: {nxt})")
        jval = parse_float(want) if flags.use_floats else None
        if jval is not None:
            tval = parse_float(got)
            if tval is None:
                return wrong(f"Expected float, got: {_text(_truncate(got))}")
            diff = abs(jval - tval)
            if not diff <= flags.abs_tol and not diff <= flags.rel_tol * abs(jval):
                rel = "undefined, judge value is 0" if jval == 0.0 else f"{diff / abs(jval):e}"
                return wrong(f"Too large difference.\n Judge: {_text(_truncate(want))}\n User:  {_text(_truncate(got))}\n"
                             f" Absolute error: {diff:e} (abs tolerance {flags.abs_tol:e})\n"
                             f" Relative error: {rel} (rel tolerance {flags.rel_tol:e})")
        else:
            a, b = _c_str(want), _c_str(got)
            same = a == b if flags.case_sensitive else a.lower() == b.lower()
            if not same:
                jt, tt = _truncate_pair(want, got)
                return wrong(f'String tokens mismatch\nJudge: "{_text(jt)}"\nUser: "{_text(tt)}"')
        # the positions count token bytes too (used by the space checks' line numbers only)
        team_pos += len(got)
        token_no += 1
    extra = team.token()
    if extra is not None:
        return wrong(f"Trailing output:\n{_text(_truncate(extra))}")
    return True, ""
