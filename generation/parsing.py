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
import shlex
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import json5
from pydantic import BaseModel, ConfigDict, ValidationError

from core import pysource

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
                value = pysource.literal_eval(text[start: start + end])
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
        return pysource.parse(code)
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


# -- C++ kits on testlib (`generate_tests --kit-language cpp`) ---------------------------------------

TESTLIB_VALIDATOR_KEYS = ("input_validator", "needs_custom_output_judging_function", "checker")
TESTLIB_INPUTS_KEYS = ("LLMGen_input", "generator", "commands", "hacking_commands")
MAX_COMMANDS = 200
MAX_COMMAND_CHARS = 1000
_CPP_MAIN = re.compile(r"\bint\s+main\s*\(")


@dataclass
class TestlibValidatorReply:
    input_validator: str
    needs_output_judge: bool
    checker: str | None
    notes: list[str] = field(default_factory=list)


@dataclass
class TestlibInputsReply:
    direct_inputs: list[str]
    generator: str | None
    commands: list[str]
    hacking_commands: list[str]


def check_cpp(code: str, what: str, *, testlib: bool = True) -> None:
    """What can be told of C++ without compiling it (the sandbox compiles it next): a main, and
    testlib.h included when the contract is testlib's."""
    if not code.strip():
        raise ReplyInvalid(f"the {what} is empty")
    if not _CPP_MAIN.search(code):
        raise ReplyInvalid(f"the {what} defines no `int main(int argc, char* argv[])`")
    if testlib and "testlib.h" not in code:
        raise ReplyInvalid(f'the {what} must `#include "testlib.h"` (and call registerGen/registerTestlibCmd)')


def parse_testlib_validator_reply(reply: str) -> TestlibValidatorReply:
    """Call 1 of a C++ kit: a Python input validator (the validator filter is unchanged) and a
    testlib checker (`checker input output answer`), or null when outputs are compared as text."""
    data = extract_json(reply, TESTLIB_VALIDATOR_KEYS)
    _check_keys(data, TESTLIB_VALIDATOR_KEYS)
    validator = data["input_validator"]
    if not isinstance(validator, str) or not validator.strip():
        raise ReplyInvalid("'input_validator' must be a non-empty string of Python source")
    check_function(validator, VALIDATOR_FUNCTION, 1, "input validator")
    needs = data["needs_custom_output_judging_function"]
    if not isinstance(needs, bool):
        raise ReplyInvalid("'needs_custom_output_judging_function' must be true or false")
    checker = data["checker"]
    notes: list[str] = []
    if checker is not None and not isinstance(checker, str):
        raise ReplyInvalid("'checker' must be a string of C++ source (a testlib checker) or null")
    checker = checker if checker and checker.strip() else None
    if needs:
        if checker is None:
            raise ReplyInvalid("'needs_custom_output_judging_function' is true but 'checker' is empty")
        check_cpp(checker, "checker")
        if "registerTestlibCmd" not in checker:
            raise ReplyInvalid("the checker must call registerTestlibCmd(argc, argv) (it is run as "
                               "`checker input output answer`)")
    elif checker is not None:
        notes.append("checker ignored: needs_custom_output_judging_function is false")
        checker = None
    return TestlibValidatorReply(input_validator=validator, needs_output_judge=needs, checker=checker, notes=notes)


def _commands(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise ReplyInvalid(f"'{key}' must be a list of strings (the generator's arguments, one command each)")
    commands = [c.strip() for c in value if c.strip()]
    if len(commands) > MAX_COMMANDS:
        raise ReplyInvalid(f"'{key}' has {len(commands)} commands, at most {MAX_COMMANDS}")
    for command in commands:
        if len(command) > MAX_COMMAND_CHARS:
            raise ReplyInvalid(f"a command in '{key}' is {len(command)} characters long, at most {MAX_COMMAND_CHARS}")
        if any(ch in command for ch in "<>|;&$`\n"):
            raise ReplyInvalid(f"the command {command[:100]!r} in '{key}' is not plain arguments: give the "
                               "generator's arguments only (no redirection, pipes or shell syntax)")
    return commands


def command_argv(command: str) -> list[str]:
    """A command's arguments, as a shell would split them (quotes kept together); a leading
    `gen` or `./gen` names the program and is dropped."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ReplyInvalid(f"the command {command[:100]!r} cannot be split into arguments: {exc}") from exc
    if words and words[0] in ("gen", "./gen", "generator", "./generator"):
        words = words[1:]
    return words


def parse_testlib_inputs_reply(reply: str) -> TestlibInputsReply:
    """Call 2 of a C++ kit: direct inputs, one testlib generator and its commands."""
    data = extract_json(reply, TESTLIB_INPUTS_KEYS)
    _check_keys(data, TESTLIB_INPUTS_KEYS)
    direct = data.get("LLMGen_input") or []
    if not isinstance(direct, list) or not all(isinstance(x, str) for x in direct):
        raise ReplyInvalid("'LLMGen_input' must be a list of input strings")
    for i, item in enumerate(direct):
        if len(item) > MAX_DIRECT_INPUT_CHARS:
            raise ReplyInvalid(f"'LLMGen_input'[{i}] is too long ({len(item)} characters); write it as a command")
    generator = data.get("generator")
    if generator is not None and not isinstance(generator, str):
        raise ReplyInvalid("'generator' must be a string of C++ source (a testlib generator) or null")
    generator = generator if generator and generator.strip() else None
    commands, hacking = _commands(data, "commands"), _commands(data, "hacking_commands")
    for command in commands + hacking:
        command_argv(command)
    if generator is not None:
        check_cpp(generator, "generator")
        if "registerGen" not in generator:
            raise ReplyInvalid("the generator must call registerGen(argc, argv, 1) so that rnd is seeded from "
                               "its arguments")
        if not commands and not hacking:
            raise ReplyInvalid("the generator has no commands: list its arguments in 'commands' or "
                               "'hacking_commands'")
    elif commands or hacking:
        raise ReplyInvalid("'commands' are given but 'generator' is null")
    if not direct and generator is None:
        raise ReplyInvalid("the reply gives no inputs at all: no direct inputs and no generator")
    return TestlibInputsReply(direct_inputs=list(direct), generator=generator, commands=commands,
                              hacking_commands=hacking)


# -- SEARCH/REPLACE edits (CodeContests-O's refinement, its prompt B.2) ------------------------------

_SEARCH = re.compile(r"^[ \t]*<{7}[ \t]*SEARCH[ \t]*$")
_DIVIDER = re.compile(r"^[ \t]*={7}[ \t]*$")
_REPLACE = re.compile(r"^[ \t]*>{7}[ \t]*REPLACE[ \t]*$")
_FENCE_ONLY = re.compile(r"^[ \t]*(`{3,}|~{3,})[^`]*$")


@dataclass(frozen=True)
class Edit:
    """One SEARCH/REPLACE block against the file it names."""

    target: str
    search: str
    replace: str
    number: int


def parse_edits(reply: str, targets: tuple[str, ...]) -> list[Edit]:
    """Every SEARCH/REPLACE block of the reply, each against the file named on the line before
    it (one of `targets`, e.g. `generator.cpp`, `checker.cpp`). A block with no known file
    before it, or that is not closed, is refused with the reason."""
    lines = reply.splitlines()
    edits: list[Edit] = []
    i = 0
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        number = len(edits) + 1
        target = ""
        for back in range(i - 1, -1, -1):
            text = lines[back].strip()
            if not text or _FENCE_ONLY.match(lines[back]):
                continue
            target = text.strip("`*#: ").removeprefix("File").strip("`*#: ")
            break
        if target not in targets:
            raise ReplyInvalid(f"SEARCH/REPLACE block {number} does not name its file on the line before "
                               f"`<<<<<<< SEARCH` (one of {', '.join(targets)}; found {target[:80]!r})")
        j = i + 1
        while j < len(lines) and not _DIVIDER.match(lines[j]):
            j += 1
        k = j + 1
        while k < len(lines) and not _REPLACE.match(lines[k]):
            k += 1
        if j >= len(lines) or k >= len(lines):
            raise ReplyInvalid(f"SEARCH/REPLACE block {number} ({target}) is not closed: it needs `=======` and "
                               "`>>>>>>> REPLACE` lines")
        search = "\n".join(lines[i + 1:j])
        if not search.strip():
            raise ReplyInvalid(f"SEARCH/REPLACE block {number} ({target}) has an empty SEARCH part: copy the "
                               "lines to replace from the current file")
        edits.append(Edit(target, search, "\n".join(lines[j + 1:k]), number))
        i = k + 1
    return edits


def apply_edits(files: dict[str, str], edits: list[Edit]) -> dict[str, str]:
    """The files with every edit applied in order. A block whose SEARCH text does not occur
    exactly once (character for character, whitespace included) in the file as it stands is
    refused: ReplyInvalid naming every such block and why, so the model can resend them."""
    out = dict(files)
    refused: list[str] = []
    for edit in edits:
        text = out.get(edit.target)
        if text is None:
            refused.append(f"block {edit.number} ({edit.target}): there is no such file")
            continue
        count = text.count(edit.search)
        if count == 1:
            out[edit.target] = text.replace(edit.search, edit.replace, 1)
            continue
        first = edit.search.strip().splitlines()[0][:120]
        why = ("its SEARCH text does not occur in the file" if count == 0 else
               f"its SEARCH text occurs {count} times; include more lines to make it unique")
        refused.append(f"block {edit.number} ({edit.target}, starting {first!r}): {why}")
    if refused:
        raise ReplyInvalid("SEARCH/REPLACE blocks that do not apply exactly were refused (no block was applied; "
                           "a SEARCH part must copy lines of the current file exactly, whitespace included): "
                           + "; ".join(refused))
    return out
