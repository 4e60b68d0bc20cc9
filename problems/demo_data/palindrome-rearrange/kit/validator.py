import re

_WORD = re.compile(r"[a-z]+")


def validate_input(input_str):
    try:
        if not isinstance(input_str, str) or not input_str.endswith("\n"):
            return False
        lines = input_str[:-1].split("\n")
        if not re.fullmatch(r"[1-9][0-9]*", lines[0]):
            return False
        t = int(lines[0])
        if t < 1 or t > 10**4 or len(lines) != t + 1:
            return False
        total = 0
        for s in lines[1:]:
            if not _WORD.fullmatch(s):
                return False
            total += len(s)
        return total <= 2 * 10**5
    except Exception:
        return False
