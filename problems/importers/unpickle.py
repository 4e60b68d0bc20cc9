"""Decoding HardTests' ``test_cases``: base64 of zlib of a pickle of JSON.

A pickle can name any importable callable and call it while loading (``os.system`` through
REDUCE is the classic), so unpickling a downloaded file is running its author's code. This
unpickler refuses every global: plain containers, strings and numbers are built by pickle
opcodes alone and need none, so that is exactly what loads. Sizes are bounded too, so a
small payload cannot expand into gigabytes.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickle
import zlib
from typing import Any

from problems.importers.base import RowError

# One problem's whole suite; the largest HardTests suites are tens of megabytes.
MAX_DECODED_BYTES = 1 << 30
_PLAIN = (str, bytes, bytearray, int, float, bool, type(None), list, tuple, dict, set, frozenset)


class UnsafePickleError(RowError):
    """The pickle names a class or function: refused, never loaded."""


def _latin1(text: Any, encoding: str = "latin1") -> bytes:
    # Protocols 0-2 pickle bytes as _codecs.encode(text, "latin1"); only that exact call is allowed.
    if not isinstance(text, str) or encoding != "latin1":
        raise UnsafePickleError("test_cases: the pickle calls _codecs.encode with something other than latin1 text")
    return text.encode("latin1")


def _container(kind: type) -> Any:
    accepted = (list, tuple, bytes) if kind is bytearray else (list, tuple)

    def build(items: Any = ()) -> Any:
        if not isinstance(items, accepted):
            raise UnsafePickleError(f"test_cases: the pickle builds a {kind.__name__} from a {type(items).__name__}")
        return kind(items)

    return build


# Protocols before 4 build sets, frozensets and bytearrays by calling these by name; they are
# the only names a plain-data pickle needs, and each is replaced by a checked constructor.
_ALLOWED = {("_codecs", "encode"): _latin1}
for _module in ("builtins", "__builtin__"):  # protocols 0-2 write Python 2's module name
    _ALLOWED |= {(_module, "set"): _container(set), (_module, "frozenset"): _container(frozenset),
                 (_module, "bytearray"): _container(bytearray)}


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return _ALLOWED[(module, name)]
        raise UnsafePickleError(
            f"test_cases: the pickle refers to {module}.{name}; only plain lists, dicts, strings and "
            "numbers are accepted, so it was not loaded"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError("test_cases: the pickle uses persistent ids; refused")


def plain_loads(data: bytes) -> Any:
    """`pickle.loads` restricted to plain containers, strings and numbers."""
    try:
        value = _PlainUnpickler(io.BytesIO(data)).load()
    except UnsafePickleError:
        raise
    except Exception as exc:  # a truncated or corrupt pickle raises many types
        raise RowError(f"test_cases: not a readable pickle ({type(exc).__name__}: {exc})") from None
    _check_plain(value)
    return value


def _check_plain(value: Any) -> None:
    # Opcodes alone cannot build anything else, but the check keeps that promise explicit
    # (and survives a future pickle protocol). Shared references are visited once.
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if not isinstance(item, _PLAIN) or type(item) not in _PLAIN:
            raise UnsafePickleError(f"test_cases: the pickle holds a {type(item).__name__}; refused")
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)


def _inflate(data: bytes) -> bytes:
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, MAX_DECODED_BYTES)
    except zlib.error as exc:
        raise RowError(f"test_cases: not zlib data ({exc})") from None
    if inflater.unconsumed_tail:
        raise RowError(f"test_cases: expands beyond {MAX_DECODED_BYTES} bytes; refused")
    return out


def cases_decode(encoded: str | bytes) -> list[dict[str, str]]:
    """HardTests' ``test_cases`` as a list of ``{"input", "output"}``, in the dataset's order."""
    if not isinstance(encoded, str | bytes) or not encoded:
        raise RowError("test_cases must be a non-empty base64 string")
    try:
        packed = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise RowError("test_cases: not valid base64") from None
    value = plain_loads(_inflate(packed))
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("utf-8", errors="strict")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise RowError(f"test_cases: the pickle holds text that is not JSON ({exc})") from None
    if not isinstance(value, list):
        raise RowError(f"test_cases must decode to a list of tests, got {type(value).__name__}")
    tests = []
    for i, test in enumerate(value):
        if not isinstance(test, dict) or not isinstance(test.get("input"), str) or not isinstance(
            test.get("output"), str
        ):
            raise RowError(f"test_cases[{i}] must be an object with string 'input' and 'output'")
        tests.append({"input": test["input"], "output": test["output"]})
    return tests


def cases_encode(tests: list[dict[str, str]]) -> str:
    """The inverse, for the HardTests exporter and for tests."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)), 6)).decode("ascii")
