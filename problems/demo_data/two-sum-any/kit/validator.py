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
        if len(lines) != 2:
            return False
        head = _ints(lines[0], 2, 2, 4 * 10**9)
        if head is None or head[0] > 15000:
            return False
        return _ints(lines[1], head[0], 1, 2 * 10**9) is not None
    except Exception:
        return False
