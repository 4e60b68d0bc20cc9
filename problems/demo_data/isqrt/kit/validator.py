import re

_NUM = re.compile(r"0|[1-9][0-9]*")


def validate_input(input_str):
    try:
        if not isinstance(input_str, str) or not input_str.endswith("\n"):
            return False
        lines = input_str[:-1].split("\n")
        if not _NUM.fullmatch(lines[0]):
            return False
        t = int(lines[0])
        if t < 1 or t > 10**4 or len(lines) != t + 1:
            return False
        for line in lines[1:]:
            if not _NUM.fullmatch(line) or int(line) > 10**18:
                return False
        return True
    except Exception:
        return False
