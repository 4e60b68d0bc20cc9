"""Prompts and reply parsing of the oracle-free modes, on the shared template and JSON machinery.

Prompts are the versioned files generation/prompts/oracle_free_*.md and acecoder_*.md, rendered
by generation.prompting; replies are read by generation.parsing's JSON extraction and code
checks (nothing the model wrote runs outside the sandbox).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from generation import prompting
from generation.parsing import (
    JUDGE_FUNCTION,
    VALIDATOR_FUNCTION,
    ReplyInvalid,
    _check_keys,
    _validated,
    check_function,
    extract_json,
    generator_functions,
    parse_python,
)

A7_PROMPT = "oracle_free_v1"
SECOND_BRUTE_PROMPT = "oracle_free_bruteforce_v1"
ACECODER_TESTS_PROMPT = "acecoder_tests_v1"
ACECODER_SOLUTION_PROMPT = "acecoder_solution_v1"
EDGE_PREFIX = "gen_edge_input_"
MAX_FUNCTION = "gen_max_input"
A7_KEYS = ("brute_force_solution", "efficient_solution", "input_validator", "needs_custom_output_judging_function",
           "output_judging_function", "edge_input_generator", "max_input_generator")
EDGE_COUNT = 10


def _common(problem: Any) -> dict[str, Any]:
    return {"statement": problem.statement.strip(), "samples": prompting._samples_text(problem.samples or []),
            "time_limit_ms": problem.time_limit_ms, "memory_limit_mb": problem.memory_limit_mb}


def a7_prompt(problem: Any) -> list[dict[str, str]]:
    comparison = prompting.COMPARISON_TEXT.get(problem.comparison, prompting.COMPARISON_TEXT["tokens"])
    return prompting._messages(A7_PROMPT, {**_common(problem), "comparison": comparison, "edge_count": EDGE_COUNT})


def second_brute_prompt(problem: Any) -> list[dict[str, str]]:
    return prompting._messages(SECOND_BRUTE_PROMPT, _common(problem))


def acecoder_tests_prompt(problem: Any, count: int) -> list[dict[str, str]]:
    return prompting._messages(ACECODER_TESTS_PROMPT, {**_common(problem), "test_count": count})


def acecoder_solution_prompt(problem: Any) -> list[dict[str, str]]:
    return prompting._messages(ACECODER_SOLUTION_PROMPT, _common(problem))


@dataclass
class A7Reply:
    brute_force: str
    efficient: str | None
    input_validator: str
    needs_output_judge: bool
    output_judging_function: str | None
    edge_generator: str
    edge_functions: list[str]
    max_generator: str | None
    notes: list[str] = field(default_factory=list)
    # the judging function is the standard real-number one, not the model's
    standard_judge: bool = False


class _A7Object(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    brute_force_solution: str
    efficient_solution: str | None
    input_validator: str
    needs_custom_output_judging_function: bool
    output_judging_function: str | None
    edge_input_generator: str
    max_input_generator: str | None


def _program(code: str, what: str) -> str:
    if not code.strip():
        raise ReplyInvalid(f"the {what} is empty")
    parse_python(code, what)
    return code


def parse_a7_reply(reply: str) -> A7Reply:
    data = extract_json(reply, A7_KEYS)
    _check_keys(data, A7_KEYS)
    obj = _validated(_A7Object, data)
    notes: list[str] = []
    brute = _program(obj.brute_force_solution, "brute_force_solution")
    efficient = obj.efficient_solution if (obj.efficient_solution or "").strip() else None
    if efficient is not None:
        _program(efficient, "efficient_solution")
    check_function(obj.input_validator, VALIDATOR_FUNCTION, 1, "input validator")
    judge = obj.output_judging_function if (obj.output_judging_function or "").strip() else None
    if obj.needs_custom_output_judging_function:
        if judge is None:
            raise ReplyInvalid("'needs_custom_output_judging_function' is true but 'output_judging_function' is empty")
        check_function(judge, JUDGE_FUNCTION, 3, "output judging function")
    elif judge is not None:
        notes.append("output_judging_function ignored: needs_custom_output_judging_function is false")
        judge = None
    edges = generator_functions(obj.edge_input_generator, prefixes=(EDGE_PREFIX,), what="edge input generator")
    if not edges:
        raise ReplyInvalid(f"'edge_input_generator' defines no `{EDGE_PREFIX}<case>` function")
    maximum = obj.max_input_generator if (obj.max_input_generator or "").strip() else None
    if maximum is not None and MAX_FUNCTION not in generator_functions(maximum, prefixes=(MAX_FUNCTION,),
                                                                         what="max input generator"):
        raise ReplyInvalid(f"'max_input_generator' does not define a zero-argument `{MAX_FUNCTION}()`")
    if maximum is None:
        notes.append("no max_input_generator: the suite will have no time-only test")
    return A7Reply(brute_force=brute, efficient=efficient, input_validator=obj.input_validator,
                   needs_output_judge=obj.needs_custom_output_judging_function, output_judging_function=judge,
                   edge_generator=obj.edge_input_generator, edge_functions=edges, max_generator=maximum, notes=notes)


def parse_brute_reply(reply: str) -> str:
    data = extract_json(reply, ("brute_force_solution",))
    _check_keys(data, ("brute_force_solution",))
    code = data["brute_force_solution"]
    if not isinstance(code, str):
        raise ReplyInvalid("'brute_force_solution' must be a string of Python source")
    return _program(code, "brute_force_solution")


def parse_solution_reply(reply: str) -> str:
    data = extract_json(reply, ("solution",))
    _check_keys(data, ("solution",))
    code = data["solution"]
    if not isinstance(code, str):
        raise ReplyInvalid("'solution' must be a string of Python source")
    return _program(code, "solution")


class _Pair(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    input: str
    output: str


class _Pairs(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    test_cases: list[_Pair]


def parse_pairs_reply(reply: str) -> list[tuple[str, str]]:
    data = extract_json(reply, ("test_cases",))
    _check_keys(data, ("test_cases",))
    obj = _validated(_Pairs, data)
    if not obj.test_cases:
        raise ReplyInvalid("'test_cases' is empty")
    return [(p.input, p.output) for p in obj.test_cases]
