"""Reading LLM replies without trusting them.

A reply must end with one JSON object, in a ```json fenced block or after a `# Result`
heading. Every key is checked for presence and type, every piece of code is parsed with
`ast.parse` (parsing is not executing: nothing the model wrote runs outside the sandbox)
and the functions the contract names are looked for in the syntax tree. The first problem
found is raised as ReplyInvalid with a message meant to be fed back to the model.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

REGULAR_FUNCTION = "gen_range_based_input"
STRATIFIED_PREFIX = "gen_stratified_input_"
HACKING_PREFIX = "gen_hacking_input_"
BATCH_FUNCTION = "generate_test_inputs"
VALIDATOR_FUNCTION = "validate_input"
JUDGE_FUNCTION = "output_judging_function"
VALIDATOR_KEYS = ("input_validator", "needs_custom_output_judging_function", "output_judging_function")
INPUTS_KEYS = ("LLMGen_input", "RPGen_SPGen_input_generator", "HackGen_input_generator")
MAX_DIRECT_INPUT_CHARS = 1_000_000

_FENCE = re.compile(r"```[ \t]*(json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)
_RESULT_HEADING = re.compile(r"^#{1,6}[ \t]*Result\b.*$", re.MULTILINE | re.IGNORECASE)


class ReplyInvalid(ValueError):
    """The reply cannot be used; str(error) says why, in words the model can act on."""


@dataclass
class ValidatorReply:
    input_validator: str
    needs_output_judge: bool
    output_judging_function: str | None
    notes: list[str] = field(default_factory=list)


@dataclass
class InputsReply:
    direct_inputs: list[str]
    regular_generator: str | None
    hacking_generator: str | None
    notes: list[str] = field(default_factory=list)


def _json_candidates(reply: str) -> list[str]:
    """Texts that may hold the final JSON object, the most likely first."""
    candidates: list[str] = []
    fences = _FENCE.findall(reply)
    # The answer comes last (the reasoning may quote code in earlier fences).
    candidates += [body for lang, body in reversed(fences) if lang]
    headings = list(_RESULT_HEADING.finditer(reply))
    if headings:
        after = reply[headings[-1].end():]
        start = after.find("{")
        if start >= 0:
            candidates.append(after[start:])
    candidates += [body for lang, body in reversed(fences) if not lang]
    return candidates


def extract_json(reply: str) -> dict[str, Any]:
    if not isinstance(reply, str) or not reply.strip():
        raise ReplyInvalid("the reply is empty")
    candidates = _json_candidates(reply)
    if not candidates:
        raise ReplyInvalid("no JSON object found: end the reply with one JSON object in a ```json fenced block")
    errors = []
    decoder = json.JSONDecoder()
    for text in candidates:
        text = text.strip()
        try:
            value, _ = decoder.raw_decode(text)
        except json.JSONDecodeError as exc:
            errors.append(f"{exc.msg} at line {exc.lineno} column {exc.colno}")
            continue
        if not isinstance(value, dict):
            errors.append(f"the JSON value is a {type(value).__name__}, not an object")
            continue
        return value
    raise ReplyInvalid("the final JSON block is not a valid JSON object: " + errors[0])


def _check_keys(data: dict[str, Any], keys: tuple[str, ...]) -> None:
    missing = [k for k in keys if k not in data]
    if missing:
        extra = sorted(set(data) - set(keys))
        hint = f" (found {', '.join(map(repr, extra))} instead)" if extra else ""
        raise ReplyInvalid(f"the JSON object lacks the key(s) {', '.join(map(repr, missing))}{hint}; "
                           f"use exactly {', '.join(map(repr, keys))}")


def _optional_code(data: dict[str, Any], key: str) -> str | None:
    value = data[key]
    if value is None:
        return None
    if not isinstance(value, str):
        raise ReplyInvalid(f"{key!r} must be a string of Python source or null, not {type(value).__name__}")
    return value if value.strip() else None


def parse_python(code: str, what: str) -> ast.Module:
    try:
        return ast.parse(code)
    except SyntaxError as exc:
        raise ReplyInvalid(f"the {what} is not valid Python: {exc.msg} at line {exc.lineno}") from None
    except (ValueError, RecursionError) as exc:
        raise ReplyInvalid(f"the {what} is not valid Python: {exc}") from None


def top_level_functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions defined at module level, in source order (a later definition wins, as in Python)."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.pop(node.name, None)
            found[node.name] = node
    return found


def _required_positional(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = fn.args
    positional = len(args.posonlyargs) + len(args.args)
    required_kwonly = sum(1 for d in args.kw_defaults if d is None)
    return positional - len(args.defaults) + required_kwonly


def _accepts(fn: ast.FunctionDef | ast.AsyncFunctionDef, count: int) -> bool:
    args = fn.args
    positional = len(args.posonlyargs) + len(args.args)
    return _required_positional(fn) <= count and (positional >= count or args.vararg is not None)


def check_function(code: str, name: str, arity: int, what: str) -> None:
    functions = top_level_functions(parse_python(code, what))
    fn = functions.get(name)
    if fn is None:
        raise ReplyInvalid(f"the {what} does not define a top-level function `{name}`")
    if isinstance(fn, ast.AsyncFunctionDef):
        raise ReplyInvalid(f"`{name}` in the {what} must be a plain function, not async")
    if not _accepts(fn, arity):
        raise ReplyInvalid(f"`{name}` in the {what} must take exactly {arity} argument(s)")


def generator_functions(code: str, *, prefixes: tuple[str, ...], what: str) -> list[str]:
    """Names of the zero-argument generator functions matching the prefixes, in source order."""
    functions = top_level_functions(parse_python(code, what))
    names = [n for n in functions if n.startswith(prefixes) or n in prefixes]
    for name in names:
        fn = functions[name]
        if isinstance(fn, ast.AsyncFunctionDef) or not _accepts(fn, 0):
            raise ReplyInvalid(f"`{name}` in the {what} must be a plain function with no required arguments")
    return names


def regular_functions(code: str) -> list[str]:
    names = generator_functions(code, prefixes=(REGULAR_FUNCTION, STRATIFIED_PREFIX), what="regular generator")
    # gen_range_based_input must match exactly; gen_range_based_input_2 is not part of the contract.
    return [n for n in names if n == REGULAR_FUNCTION or n.startswith(STRATIFIED_PREFIX)]


def hacking_functions(code: str) -> list[str]:
    return generator_functions(code, prefixes=(HACKING_PREFIX,), what="hacking generator")


def parse_validator_reply(reply: str) -> ValidatorReply:
    data = extract_json(reply)
    _check_keys(data, VALIDATOR_KEYS)
    notes = []
    validator = data["input_validator"]
    if not isinstance(validator, str) or not validator.strip():
        raise ReplyInvalid("'input_validator' must be a non-empty string of Python source")
    check_function(validator, VALIDATOR_FUNCTION, 1, "input validator")
    needs = data["needs_custom_output_judging_function"]
    if not isinstance(needs, bool):
        raise ReplyInvalid("'needs_custom_output_judging_function' must be true or false")
    judge = _optional_code(data, "output_judging_function")
    if needs:
        if judge is None:
            raise ReplyInvalid("'needs_custom_output_judging_function' is true but 'output_judging_function' is empty")
        check_function(judge, JUDGE_FUNCTION, 3, "output judging function")
    elif judge is not None:
        # The model said plain comparison suffices; a stray judge would silently change that.
        notes.append("output_judging_function ignored: needs_custom_output_judging_function is false")
        judge = None
    return ValidatorReply(input_validator=validator, needs_output_judge=needs, output_judging_function=judge,
                          notes=notes)


def parse_inputs_reply(reply: str) -> InputsReply:
    data = extract_json(reply)
    _check_keys(data, INPUTS_KEYS)
    direct = data["LLMGen_input"]
    if direct is None:
        direct = []
    if not isinstance(direct, list):
        raise ReplyInvalid(f"'LLMGen_input' must be a list of input strings, not {type(direct).__name__}")
    for i, item in enumerate(direct):
        if not isinstance(item, str):
            raise ReplyInvalid(f"'LLMGen_input'[{i}] must be a string (the whole input), not {type(item).__name__}")
        if len(item) > MAX_DIRECT_INPUT_CHARS:
            raise ReplyInvalid(f"'LLMGen_input'[{i}] is too long; write large inputs as generators")
    regular = _optional_code(data, "RPGen_SPGen_input_generator")
    hacking = _optional_code(data, "HackGen_input_generator")
    if regular is not None and not regular_functions(regular):
        raise ReplyInvalid(
            f"'RPGen_SPGen_input_generator' defines neither `{REGULAR_FUNCTION}` nor any "
            f"`{STRATIFIED_PREFIX}<category>` function"
        )
    if hacking is not None and not hacking_functions(hacking):
        raise ReplyInvalid(f"'HackGen_input_generator' defines no `{HACKING_PREFIX}<scenario>` function")
    if not direct and regular is None and hacking is None:
        raise ReplyInvalid("the reply gives no inputs at all: no direct inputs and no generators")
    return InputsReply(direct_inputs=list(direct), regular_generator=regular, hacking_generator=hacking)
