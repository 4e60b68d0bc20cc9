"""problemtools' default output validator, ported: the answers and messages of the C++ original
(Kattis/problemtools support/default_validator/default_validator.cc and its tests)."""

from __future__ import annotations

import pytest

from problems.packages.default_validator import FlagError, parse_flags, validate


def _ok(answer: str, output: str, *flags: str) -> bool:
    return validate(answer.encode(), output.encode(), parse_flags(list(flags)))[0]


def test_tokens_are_case_insensitive_unless_case_sensitive() -> None:
    assert _ok("Hello World!\n", "hello   WORLD!")
    assert not _ok("Hello World!\n", "hello WORLD!", "case_sensitive")
    assert _ok("Hello World!\n", "Hello\nWorld!\n", "case_sensitive")


def test_space_change_sensitive_compares_whitespace_byte_for_byte() -> None:
    assert _ok("1 2\n", "1 2\n", "space_change_sensitive")
    accepted, message = validate(b"1 2\n", b"1  2\n", parse_flags(["space_change_sensitive"]))
    assert not accepted and "Space change error: judge out of space, got 32 from user" in message


def test_float_tolerance_is_absolute_or_relative_and_integers_are_floats_too() -> None:
    assert _ok("0.0314", "3.14000000e-2", "float_tolerance", "1e-6")
    assert _ok("200", "2.0e2", "float_absolute_tolerance", "1e-9")  # the C++ reads "200" as a float
    assert not _ok("200", "2.0e2")  # without a tolerance tokens must match
    assert _ok("1000", "1000.5", "float_relative_tolerance", "1e-3")
    assert not _ok("1000", "1000.5", "float_absolute_tolerance", "1e-3")
    assert not _ok("1.0", "nan", "float_tolerance", "1")
    assert not _ok("1.0", "1_0", "float_tolerance", "100")  # Python reads 1_0, strtod does not
    assert _ok("16", "0x10", "float_tolerance", "0")


def test_messages_are_the_validator_s_own() -> None:
    accepted, message = validate(b"1 2 3\n", b"1 2\n", parse_flags([]))
    assert not accepted
    # the C++ counts the newline it skipped before finding the end: line 2
    assert message == ("Wrong answer on line 2 of output (corresponding to line 1 in answer file)\n"
                       "User EOF while judge had more output\n(Next judge token: 3)\n")
    accepted, message = validate(b"1\n", b"1\n2\n", parse_flags([]))
    assert message.endswith("Trailing output:\n2\n")
    accepted, message = validate(b"abc\n", b"", parse_flags([]))
    assert "user output was empty" in message
    accepted, message = validate(b"1.5\n", b"1.7\n", parse_flags(["float_absolute_tolerance", "0.1"]))
    assert "Too large difference.\n Judge: 1.5\n User:  1.7\n Absolute error: 2.000000e-01" in message


def test_unknown_or_incomplete_flags_are_refused() -> None:
    with pytest.raises(FlagError):
        parse_flags(["float_tolerance"])
    with pytest.raises(FlagError):
        parse_flags(["ignore_case"])
