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
        if len(lines) != 3:
            return False
        head = _ints(lines[0], 1, 1, 2000)
        if head is None:
            return False
        n = head[0]
        return _ints(lines[1], n, 1, 10**9) is not None and _ints(lines[2], n, 1, 10**9) is not None
    except Exception:
        return False
