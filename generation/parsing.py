"""Reading LLM replies without trusting them.

A reply must end with one JSON object, in a ```json fenced block or after a `# Result`
heading. This module is the one place where replies are read (every call's parser goes through
`extract_json`), tolerantly: raw newlines and tabs in strings, what JSON5 allows (trailing
commas, comments, `\'`) through the `json5` package, and a Python dict literal (read by
`ast.literal_eval`, with Python's escapes), before a reply is sent back. Every key is checked for
presence and type, every piece of code is parsed with
`ast.parse` (parsing is not executing: nothing the model wrote runs outside the sandbox)
and the functions the contract names are looked for in the syntax tree. The first problem
found is raised as ReplyInvalid with a message meant to be fed back to the model.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import json5
from pydantic import BaseModel, ConfigDict, ValidationError

REGULAR_FUNCTION = "gen_range_based_input"
STRATIFIED_PREFIX = "gen_stratified_input_"
HACKING_PREFIX = "gen_hacking_input_"
BATCH_FUNCTION = "generate_test_inputs"
VALIDATOR_FUNCTION = "validate_input"
JUDGE_FUNCTION = "output_judging_function"
VALIDATOR_KEYS = ("input_validator", "needs_custom_output_judging_function", "output_judging_function")
INPUTS_KEYS = ("LLMGen_input", "RPGen_SPGen_input_generator", "HackGen_input_generator")
MAX_DIRECT_INPUT_CHARS = 1_000_000
M = TypeVar("M", bound=BaseModel)

# A fence line: three or more backticks or tildes, then an optional label (```json, ```python,
# ```JSON5...). Fences are paired line by line, so a code block quoted in the reasoning can
# never be mistaken for the opening of the answer's block.
_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\n`]*)$", re.MULTILINE)
_RESULT_HEADING = re.compile(r"^#{1,6}[ \t]*Result\b.*$", re.MULTILINE | re.IGNORECASE)
# Raw newlines and tabs inside JSON strings are what models write most often by mistake.
_DECODER = json.JSONDecoder(strict=False)
# The balanced-object fallback tries at most this many "{" positions from the end (the slower
# tolerant reader, fewer).
_MAX_FALLBACK_STARTS = 5000
_MAX_TOLERANT_STARTS = 50
# An odd run of backslashes followed by a character JSON cannot escape.
_BAD_ESCAPE = re.compile(r'(?<!\\)(?:\\\\)*\\[^"\\/bfnrtu\']')

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


def _fenced_blocks(reply: str) -> list[tuple[int, str]]:
    """(position, body) of every fenced block, whatever its label; an unclosed last fence runs to the end."""
    blocks: list[tuple[int, str]] = []
    opener: re.Match[str] | None = None
    for line in _FENCE_LINE.finditer(reply):
        if opener is None:
            opener = line
            continue
        marker = opener.group(1)
        # A closing fence has no label and is at least as long as the opening one.
        if line.group(1)[0] == marker[0] and len(line.group(1)) >= len(marker) and not line.group(2).strip():
            blocks.append((opener.start(), reply[opener.end() + 1: line.start()]))
            opener = None
    if opener is not None:
        blocks.append((opener.start(), reply[opener.end() + 1:]))
    return blocks


def _tolerant(text: str, start: int) -> Any:
    r"""The JSON value at `start` as a model writes it: strict JSON first (raw newlines and tabs in
    strings allowed), then JSON5 (trailing commas, comments, `\'`) through the maintained `json5`
    reader, then a Python literal (single-quoted keys, True/None: a Python dict) read by
    `ast.literal_eval`, which evaluates nothing. An escape JSON does not know (a regex's `\d` written
    as `\d`) in a JSON object is refused rather than read as JSON5 would, silently dropping the
    backslash from the code; in a Python literal it means what Python means."""
    try:
        return _DECODER.raw_decode(text, start)[0]
    except json.JSONDecodeError as strict_error:
        try:
            value = json5.loads(text, strict=False, consume_trailing=False, start=start)
        except (ValueError, RecursionError, IndexError):
            value = _MISSING
        quoted = value is not _MISSING and all(
            json.dumps(k) in text[start:] or json.dumps(k, ensure_ascii=False) in text[start:] for k in _keys(value))
        if not quoted:
            literal = _python_literal(text, start)
            if literal is not _MISSING:
                return literal
        if value is _MISSING:
            raise strict_error from None
        bad = _BAD_ESCAPE.search(text, start)
        if bad is not None:
            raise json.JSONDecodeError(f"invalid escape {bad.group(0)[-2:]!r} in a string (write a backslash as "
                                       "\\\\)", text, bad.start()) from None
        return value


_MISSING: Any = object()
_LITERAL_ENDS = 5


def _python_literal(text: str, start: int) -> Any:
    """A dict written as a Python literal from `start` to one of the last few closing braces, or _MISSING."""
    ends = [m.end() for m in re.finditer(r"\}", text[start:])][-_LITERAL_ENDS:]
    for end in reversed(ends):
        try:
            with warnings.catch_warnings():
                # "invalid escape sequence": Python keeps the backslash, which is what the model meant
                warnings.simplefilter("ignore")
                value = ast.literal_eval(text[start: start + end])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict) and all(isinstance(k, str) for k in _keys(value)):
            return value
    return _MISSING


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def _decode_object(text: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON object at the start of `text` (after blanks) or (None, why not)."""
    text = text.strip()
    start = text.find("{")
    if start < 0:
        return None, "no '{' in the block"
    try:
        value = _tolerant(text, start)
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except RecursionError:
        return None, "the JSON value is nested too deeply"
    if not isinstance(value, dict):
        return None, f"the JSON value is a {type(value).__name__}, not an object"
    return value, ""


def _balanced_objects(reply: str, expected: tuple[str, ...]) -> dict[str, Any] | None:
    """The last JSON object anywhere in the reply that has the expected keys (no fence, no heading):
    strict JSON from every "{", then the tolerant reader from the last few."""
    starts = [m.start() for m in re.finditer(r"\{", reply)][-_MAX_FALLBACK_STARTS:]
    for tolerant, candidates in ((False, starts), (True, starts[-_MAX_TOLERANT_STARTS:])):
        for start in reversed(candidates):
            try:
                value = _tolerant(reply, start) if tolerant else _DECODER.raw_decode(reply, start)[0]
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(value, dict) and all(k in value for k in expected):
                return value
    return None


def extract_json(reply: str, expected: tuple[str, ...] = ()) -> dict[str, Any]:
    """The reply's final JSON object: the last fenced block or `# Result` section holding an
    object with all `expected` keys; failing that, the last balanced object with them anywhere.
    """
    if not isinstance(reply, str) or not reply.strip():
        raise ReplyInvalid("the reply is empty")
    candidates = _fenced_blocks(reply)
    headings = list(_RESULT_HEADING.finditer(reply))
    if headings:
        candidates.append((headings[-1].start(), reply[headings[-1].end():]))
    candidates.sort(key=lambda c: c[0])
    decoded: list[dict[str, Any]] = []
    errors: list[str] = []
    for _, text in reversed(candidates):
        value, error = _decode_object(text)
        if value is None:
            if "{" in text:
                errors.append(error)
            continue
        if all(k in value for k in expected):
            return value
        decoded.append(value)
    fallback = _balanced_objects(reply, expected) if expected or not decoded else None
    if fallback is not None:
        return fallback
    if decoded:
        # The key check names what is missing, which the model can act on.
        return decoded[0]
    if errors:
        raise ReplyInvalid("the final JSON block is not a valid JSON object: " + errors[0])
    raise ReplyInvalid("no JSON object found: end the reply with one JSON object in a ```json fenced block")


def _check_keys(data: dict[str, Any], keys: tuple[str, ...]) -> None:
    missing = [k for k in keys if k not in data]
    if missing:
        extra = sorted(set(data) - set(keys))
        hint = f" (found {', '.join(map(repr, extra))} instead)" if extra else ""
        raise ReplyInvalid(f"the JSON object lacks the key(s) {', '.join(map(repr, missing))}{hint}; "
                           f"use exactly {', '.join(map(repr, keys))}")


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


class _ValidatorObject(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    input_validator: str
    needs_custom_output_judging_function: bool
    output_judging_function: str | None


class _InputsObject(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    LLMGen_input: list[str] | None  # noqa: N815 - the kit's key
    RPGen_SPGen_input_generator: str | None  # noqa: N815
    HackGen_input_generator: str | None  # noqa: N815


_TYPE_HINTS = {
    "input_validator": "must be a non-empty string of Python source",
    "needs_custom_output_judging_function": "must be true or false",
    "output_judging_function": "must be a string of Python source or null",
    "LLMGen_input": "must be a list of input strings",
    "RPGen_SPGen_input_generator": "must be a string of Python source or null",
    "HackGen_input_generator": "must be a string of Python source or null",
}


def _validated(model: type[M], data: dict[str, Any]) -> M:
    """Types checked by pydantic; the first error said in words the model can act on."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = error["loc"]
        key = str(loc[0])
        got = _json_type(_at(data, loc))
        if len(loc) > 1 and key == "LLMGen_input":
            raise ReplyInvalid(f"'LLMGen_input'[{loc[1]}] must be a string (the whole input), not {got}") from None
        raise ReplyInvalid(f"{key!r} {_TYPE_HINTS.get(key, error['msg'])}, not {got}") from None


def _at(data: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _json_type(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
             dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def parse_validator_reply(reply: str) -> ValidatorReply:
    data = extract_json(reply, VALIDATOR_KEYS)
    _check_keys(data, VALIDATOR_KEYS)
    obj = _validated(_ValidatorObject, data)
    notes = []
    validator = obj.input_validator
    if not validator.strip():
        raise ReplyInvalid("'input_validator' must be a non-empty string of Python source")
    check_function(validator, VALIDATOR_FUNCTION, 1, "input validator")
    needs = obj.needs_custom_output_judging_function
    judge = obj.output_judging_function if obj.output_judging_function and obj.output_judging_function.strip() else None
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
    data = extract_json(reply, INPUTS_KEYS)
    _check_keys(data, INPUTS_KEYS)
    obj = _validated(_InputsObject, data)
    direct = obj.LLMGen_input or []
    for i, item in enumerate(direct):
        if len(item) > MAX_DIRECT_INPUT_CHARS:
            raise ReplyInvalid(f"'LLMGen_input'[{i}] is too long ({len(item)} characters, at most "
                               f"{MAX_DIRECT_INPUT_CHARS}); write large inputs as generators")
    regular = obj.RPGen_SPGen_input_generator if (obj.RPGen_SPGen_input_generator or "").strip() else None
    hacking = obj.HackGen_input_generator if (obj.HackGen_input_generator or "").strip() else None
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
