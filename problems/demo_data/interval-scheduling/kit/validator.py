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
        if head is None or len(lines) != head[0] + 1:
            return False
        for line in lines[1:]:
            seg = _ints(line, 2, 1, 10**9)
            if seg is None or seg[0] > seg[1]:
                return False
        return True
    except Exception:
        return False
