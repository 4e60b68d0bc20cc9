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
        head = _ints(lines[0], 2, 0, 10**4)
        if head is None:
            return False
        n, m = head
        if n < 1 or n > 10**4 or len(lines) != m + 1:
            return False
        for line in lines[1:]:
            e = _ints(line, 3, 1, 10**6)
            if e is None or e[0] > n or e[1] > n:
                return False
        return True
    except Exception:
        return False
