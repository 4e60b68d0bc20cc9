import re

_INT = re.compile(r"-?(0|[1-9][0-9]*)")


def _ints(line, count, lo, hi):
    parts = line.split(" ")
    if len(parts) != count:
        return None
    out = []
    for p in parts:
        if not _INT.fullmatch(p) or p == "-0":
            return None
        v = int(p)
        if v < lo or v > hi:
            return None
        out.append(v)
    return out


def validate_input(input_str):
    try:
        if not isinstance(input_str, str) or not input_str.endswith("\n"):
            return False
        lines = input_str[:-1].split("\n")
        head = _ints(lines[0], 1, 1, 10**4)
        if head is None:
            return False
        n = head[0]
        if len(lines) != n:
            return False
        parent = list(range(n + 1))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for line in lines[1:]:
            e = _ints(line, 3, 1, 10**6)
            if e is None:
                return False
            u, v, _w = e
            if u > n or v > n or u == v:
                return False
            ru, rv = find(u), find(v)
            if ru == rv:
                return False  # a cycle (or repeated edge): not a tree
            parent[ru] = rv
        # n - 1 edges without a cycle always connect n vertices.
        return True
    except Exception:
        return False
