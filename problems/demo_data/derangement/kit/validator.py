import re

_POS = re.compile(r"[1-9][0-9]*")


def validate_input(input_str):
    try:
        if not isinstance(input_str, str) or not input_str.endswith("\n"):
            return False
        lines = input_str[:-1].split("\n")
        if not _POS.fullmatch(lines[0]):
            return False
        t = int(lines[0])
        if t > 1000 or len(lines) != t + 1:
            return False
        total = 0
        for line in lines[1:]:
            if not _POS.fullmatch(line):
                return False
            n = int(line)
            if n > 5 * 10**4:
                return False
            total += n
        return total <= 5 * 10**4
    except Exception:
        return False
