import re

_WORD = re.compile(r"[a-z]{1,200000}")


def validate_input(input_str):
    try:
        if not isinstance(input_str, str) or not input_str.endswith("\n"):
            return False
        body = input_str[:-1]
        return "\n" not in body and _WORD.fullmatch(body) is not None
    except Exception:
        return False
