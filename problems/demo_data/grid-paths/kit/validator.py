import re

_INT = re.compile(r"[1-9][0-9]*")
_ROW = re.compile(r"[.#]+")


def validate_input(input_str):
    try:
        if not isinstance(input_str, str) or not input_str.endswith("\n"):
            return False
        lines = input_str[:-1].split("\n")
        head = lines[0].split(" ")
        if len(head) != 2 or not all(_INT.fullmatch(x) for x in head):
            return False
        h, w = int(head[0]), int(head[1])
        if not (1 <= h <= 300 and 1 <= w <= 300) or len(lines) != h + 1:
            return False
        return all(len(row) == w and _ROW.fullmatch(row) for row in lines[1:])
    except Exception:
        return False
