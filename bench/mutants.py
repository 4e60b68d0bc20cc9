"""Single-point mutants of a Python program: a population of wrong programs nobody chose.

The kill-order bench (bench/kill_order.py --mutants) needs, per problem, many known-wrong
programs judged in mode "all"; the demo has 2-3 hand-written ones, each wrong in its own way.
Mutation analysis gives a population without choosing it: every single-point change of the
problem's Python oracle from a fixed set of operators (a comparison's boundary, an arithmetic
operator, an integer constant off by one, `and`/`or`, `min`/`max`), a seeded sample of them,
the ones the suite fails being the known-wrong programs. Mutants stand in for real faults only
in part (they are one-token slips, where a policy's wrong programs are also wrong algorithms),
which is why the bench reports them beside the demo's own candidates, never instead.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator

_COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
}
_BINOP_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv,
}
_CALL_SWAP = {"min": "max", "max": "min"}


def _sites(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(node index in ast.walk order, operator) of every place a mutant can change."""
    for index, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare):
            for k, op in enumerate(node.ops):
                if type(op) in _COMPARE_SWAP:
                    yield index, f"cmp{k}"
        elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _BINOP_SWAP:
            yield index, "binop"
        elif (isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) <= 10**6):
            yield index, "plus1"
            yield index, "minus1"
        elif isinstance(node, ast.BoolOp):
            yield index, "boolop"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALL_SWAP:
            yield index, "call"


def _apply(source: str, index: int, what: str) -> str:
    tree = ast.parse(source)
    node = list(ast.walk(tree))[index]
    if what.startswith("cmp"):
        assert isinstance(node, ast.Compare)
        k = int(what[3:])
        node.ops[k] = _COMPARE_SWAP[type(node.ops[k])]()
    elif what == "binop":
        assert isinstance(node, ast.BinOp | ast.AugAssign)
        node.op = _BINOP_SWAP[type(node.op)]()
    elif what in ("plus1", "minus1"):
        assert isinstance(node, ast.Constant)
        node.value = node.value + (1 if what == "plus1" else -1)
    elif what == "boolop":
        assert isinstance(node, ast.BoolOp)
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif what == "call":
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        node.func.id = _CALL_SWAP[node.func.id]
    return ast.unparse(tree) + "\n"


def mutants(source: str, count: int, seed: int = 0) -> list[tuple[str, str]]:
    """Up to `count` distinct single-point mutants of `source` as (label, code), a seeded sample
    of all of them; the label says where (line) and what changed."""
    original = ast.unparse(ast.parse(source)) + "\n"
    tree = ast.parse(source)
    nodes = list(ast.walk(tree))
    sites = list(_sites(tree))
    random.Random(seed).shuffle(sites)
    seen = {original}
    found: list[tuple[str, str]] = []
    for index, what in sites:
        code = _apply(source, index, what)
        if code in seen:
            continue
        seen.add(code)
        found.append((f"line {getattr(nodes[index], 'lineno', '?')} {what}", code))
        if len(found) >= count:
            break
    return found
