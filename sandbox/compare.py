"""Output comparators (trusted code; the problem's own judging function runs in the sandbox).

Every comparison streams both sides in windows of WINDOW bytes and stops at the first
difference: its memory is a few windows whatever the outputs' size (a 60 MB output of 2-byte
tokens split whole was a 1.18 GB list), with the answers of the whole-output forms (their
semantics are kept exactly; tests/sandbox/test_compare_stream.py checks one against the other).
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Callable, Iterator
from typing import TypeVar, cast

# Bytes per window. Tokens of a window are split at once (one C call) and compared as lists, so
# a 2-byte-token output costs a list of ~WINDOW/3 small objects at a time, not the whole output's.
WINDOW = 64 * 1024
# bytes.split()'s whitespace (ASCII): what testlib's wcmp and Kattis' default skip
_SPACES = (b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c")
_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]")
# a token: bytes, or a view of the output for one longer than a window (equal by content)
Token = bytes | memoryview


def _text(data: str | bytes) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def _bytes(data: str | bytes | bytearray | memoryview) -> bytes | bytearray | memoryview:
    return data.encode("utf-8") if isinstance(data, str) else data


def _last_space(chunk: bytes) -> int:
    """The index of the last whitespace byte of `chunk`, or -1."""
    return max(chunk.rfind(space) for space in _SPACES)


def _token_windows(data: bytes | bytearray | memoryview, window: int = 0) -> Iterator[list[Token]]:
    """The whitespace-separated tokens of `data`, a window at a time, no token cut: a window ends
    after its last whitespace byte; a token longer than a window comes alone, as a view of `data`
    (compared in place, never copied)."""
    window = window or WINDOW
    view = memoryview(data).cast("B")
    size = len(view)
    start = 0
    while start < size:
        stop = min(start + window, size)
        chunk = bytes(view[start:stop])
        cut = len(chunk) if stop == size else _last_space(chunk) + 1
        if cut > 0:
            tokens = cast("list[Token]", (chunk if cut == len(chunk) else chunk[:cut]).split())
            if tokens:
                yield tokens
            start += cut
            continue
        # no whitespace in a whole window: a long token starts here, and ends at the next space
        found = _SPACE.search(view, stop)  # re reads any buffer
        end = found.start() if found is not None else size
        yield [view[start:end]]
        start = end


T = TypeVar("T")


def _same_sequences(left: Iterator[list[T]], right: Iterator[list[T]],
                    same: Callable[[list[T], list[T]], bool] | None = None) -> bool:
    """Whether two streams of lists hold the same items in the same order (lists compared a
    stretch at a time, by `same` or ==), stopping at the first difference."""
    a: list[T] = []
    b: list[T] = []
    i = j = 0
    while True:
        if i == len(a):
            a, i = next(left, []), 0
        if j == len(b):
            b, j = next(right, []), 0
        if not a and not b:
            return True
        if not a or not b:
            return False
        n = min(len(a) - i, len(b) - j)
        x, y = a[i:i + n], b[j:j + n]
        if not (same(x, y) if same is not None else x == y):
            return False
        i += n
        j += n


def compare_tokens(expected: str | bytes, actual: str | bytes) -> bool:
    """Equal as sequences of whitespace-separated tokens (testlib's wcmp, Kattis' default):
    spaces, tabs, line breaks and their number between tokens do not matter, tokens do."""
    exp, act = _bytes(expected), _bytes(actual)
    if exp == act:
        return True
    return _same_sequences(_token_windows(exp), _token_windows(act))


def _exact_end(data: bytes | bytearray | memoryview) -> int:
    """Where `data` ends once CRLF line ends count as LF and the trailing line ends are dropped:
    each trailing \\n goes, with the \\r before it (a CRLF pair, as replace() pairs them)."""
    view = memoryview(data).cast("B")
    end = len(view)
    while end and view[end - 1] == 0x0A:
        end -= 2 if end >= 2 and view[end - 2] == 0x0D else 1
    return end


def _exact_windows(data: bytes | bytearray | memoryview, window: int = 0) -> Iterator[list[bytes]]:
    """`data` up to _exact_end with CRLF as LF, a window at a time (each window's bytes as a
    one-item list); a window never ends between the \\r and the \\n of a pair."""
    window = window or WINDOW
    view = memoryview(data).cast("B")
    end = _exact_end(view)
    start = 0
    while start < end:
        stop = min(start + window, end)
        if stop < end and view[stop - 1] == 0x0D and view[stop] == 0x0A:
            stop += 1  # the \n of this window's last \r (a lone \r stays where it is: "\r\r\n" is "\r\n")
        chunk = bytes(view[start:stop]).replace(b"\r\n", b"\n")
        if chunk:
            yield [chunk]
        start = stop


def _same_bytes(left: Iterator[list[bytes]], right: Iterator[list[bytes]]) -> bool:
    """Whether two streams of byte chunks (one-item lists) concatenate to the same bytes."""
    a = b = b""
    while True:
        if not a:
            a = next(left, [b""])[0]
        if not b:
            b = next(right, [b""])[0]
        if not a and not b:
            return True
        if not a or not b:
            return False
        n = min(len(a), len(b))
        if a[:n] != b[:n]:
            return False
        a, b = a[n:], b[n:]


def compare_exact(expected: str | bytes, actual: str | bytes) -> bool:
    """Byte for byte, except CRLF line ends and trailing newlines at the very end."""
    exp, act = _bytes(expected), _bytes(actual)
    if exp == act:
        return True
    return _same_bytes(_exact_windows(exp), _exact_windows(act))


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


def _text_token_windows(data: str | bytes, window: int = 0) -> Iterator[list[str]]:
    """The tokens of the text `data` decodes to (UTF-8, errors replaced; str.split()'s Unicode
    whitespace), a window at a time: bytes are decoded incrementally (as one decode would) and
    each window is cut after its last whitespace character, the rest carried into the next."""
    window = window or WINDOW
    if isinstance(data, str):
        pieces: Iterator[str] = (data[i:i + window] for i in range(0, len(data), window))
    else:
        view = memoryview(data).cast("B")
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pieces = (decoder.decode(bytes(view[i:i + window]), final=i + window >= len(view))
                  for i in range(0, len(view), window))
    carry: list[str] = []  # a token longer than a window, in pieces (joined once, when it ends)
    for piece in pieces:
        cut = len(piece)
        while cut and not piece[cut - 1].isspace():
            cut -= 1
        if cut == 0:
            carry.append(piece)
            continue
        tokens = ("".join(carry) + piece[:cut]).split()
        carry = [piece[cut:]]
        if tokens:
            yield tokens
    tokens = "".join(carry).split()
    if tokens:
        yield tokens


def _float_tokens_match(expected: list[str], actual: list[str], abs_tol: float, rel_tol: float) -> bool:
    for exp, act in zip(expected, actual, strict=True):
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


def compare_float(
    expected: str | bytes, actual: str | bytes, *, abs_tol: float = 1e-6, rel_tol: float = 1e-6
) -> bool:
    """Token-wise: numbers within tolerance (absolute or relative), other tokens exact."""
    return _same_sequences(
        _text_token_windows(expected), _text_token_windows(actual),
        lambda x, y: _float_tokens_match(x, y, abs_tol, rel_tol),
    )
