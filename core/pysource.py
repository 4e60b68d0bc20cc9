"""Python source read into an AST, one parse at a time in a process.

CPython 3.11 keeps the AST constructor's recursion count in state that all of an interpreter's
threads share, and a parse that fails part-way leaves it wrong (CPython gh-106905): two threads
parsing at once could make one of them raise `SystemError: AST constructor recursion depth
mismatch`, an HTTP 500 in the web server's threads for nothing the user did wrong. Every parse of
the project goes through here (tests/core/test_pysource.py holds that), under the same lock as
the client library's language guess (hardtests_client/extract.py, which cannot import the
project and which the server runs too): one lock, so no parse of either runs beside the other.
"""

from __future__ import annotations

import ast
from typing import Any

from hardtests_client.extract import _PARSE_LOCK


def parse(source: str) -> ast.Module:
    """ast.parse(source) (SyntaxError as it raises), never beside another parse of this process."""
    with _PARSE_LOCK:
        return ast.parse(source)


def literal_eval(text: str) -> Any:
    """ast.literal_eval(text) (ValueError, SyntaxError as it raises), never beside another parse."""
    with _PARSE_LOCK:
        return ast.literal_eval(text)
