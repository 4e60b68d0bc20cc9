"""Klear-CodeTest: JSON lines from the Kwai-Klear/CodeTest repository.

A record carries a statement (``question``), gold ``solutions`` without a language field
(detected here), LLM-written ``input_generator`` programs (``generate_test_inputs()`` returns
a list of inputs), optional ``checker`` scripts for problems with several valid answers
(``is_valid_output(input_str, output_str, reference_output_str)`` plus a command-line entry
point), and, in the ``*_with_*testcases`` files, the tests Klear generated
(``reward.ground_truth.input_output``).

Generators and checkers are untrusted code: they are only parsed here (to find their entry
points), stored, and run later in the sandbox.
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

from core import pysource
from problems.importers.base import FormatCounters, RowError, RowSkipped
from problems.importers.formats import DatasetFormat, json_field, limit, text, title_from
from problems.importers.identity import memory_limit_mb, time_limit_ms
from problems.importers.languages import RANK_CODECONTESTS, detect_language
from problems.models import DEFAULT_TIME_LIMIT_MS

SOURCE = "klear"
CALL_BASED = "call-based problem (fn_name or starter code)"
GENERATOR_FUNCTION = "generate_test_inputs"
CHECKER_FUNCTIONS = ("is_valid_output", "check", "checker", "check_output", "judge")


def _functions(code: str, where: str) -> dict[str, int]:
    """Top-level function names and their positional parameter counts (parsing only)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = pysource.parse(code)
    except SyntaxError as exc:
        raise RowError(f"{where} is not valid Python (line {exc.lineno}: {exc.msg})") from None
    return {
        node.name: len(node.args.posonlyargs) + len(node.args.args)
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def batch_generator(programs: list[str]) -> str:
    """One program whose ``generate_test_inputs()`` returns every generator's inputs.

    A single generator is kept verbatim. Several are each loaded as a module of their own
    (their helper functions share names) and their lists concatenated, in order.
    """
    if len(programs) == 1:
        return programs[0]
    sources = ",\n".join(repr(p) for p in programs)
    return (
        "# Klear-CodeTest ships several input generators for this problem; each is loaded as its\n"
        "# own module (their helpers share names) and their inputs are concatenated in order.\n"
        f"_GENERATORS = [\n{sources},\n]\n\n\n"
        f"def {GENERATOR_FUNCTION}():\n"
        "    inputs = []\n"
        "    for number, source in enumerate(_GENERATORS):\n"
        "        module = {'__name__': f'klear_generator_{number}'}\n"
        "        exec(compile(source, f'klear_generator_{number}.py', 'exec'), module)\n"
        f"        inputs.extend(module['{GENERATOR_FUNCTION}']())\n"
        "    return inputs\n"
    )


def checker_judge(checker: str, where: str) -> str:
    """Klear's checker, unchanged, inside a module that offers the judging-function contract.

    The checker is loaded under its own module name, so its ``if __name__ == "__main__"``
    command-line entry point (which reads sys.argv and prints) never runs; the project calls
    ``output_judging_function``, which forwards to the checker's own function.
    """
    functions = _functions(checker, where)
    if "output_judging_function" in functions:
        return checker
    entry = next((n for n in CHECKER_FUNCTIONS if functions.get(n) == 3), None)
    entry = entry or next((n for n, count in functions.items() if count == 3 and n != "main"), None)
    if entry is None:
        raise RowError(f"{where} defines no function taking (input, output, reference_output)")
    return (
        "# Adapter written by the Klear importer. CHECKER is Klear-CodeTest's checker exactly as\n"
        "# published; it is loaded as a module named klear_checker so its command-line entry point\n"
        f"# does not run, and output_judging_function forwards to its {entry}().\n"
        f"CHECKER = {checker!r}\n\n"
        "_checker = {'__name__': 'klear_checker'}\n"
        "exec(compile(CHECKER, 'klear_checker.py', 'exec'), _checker)\n\n\n"
        "def output_judging_function(input_str, candidate_output, reference_output):\n"
        f"    return _checker[{entry!r}](input_str, candidate_output, reference_output) is True\n"
    )


def _strings(row: dict[str, Any], key: str) -> list[str]:
    value = row.get(key)
    if value is None or value == "":
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RowError(f"field {key!r} must be a list of strings")
    return [v for v in value if v.strip()]


def _published_tests(row: dict[str, Any]) -> list[dict[str, Any]]:
    reward = json_field(row, "reward", default={}) or {}
    if not isinstance(reward, dict):
        raise RowError("field 'reward' must be an object")
    truth = json_field(reward, "ground_truth", default={}) or {}
    if not isinstance(truth, dict):
        raise RowError("reward.ground_truth must be an object")
    cases = truth.get("input_output") or []
    if isinstance(cases, dict):  # TACO style {"inputs": [...], "outputs": [...]}
        cases = [{"input": i, "output": o} for i, o in zip(cases.get("inputs") or [], cases.get("outputs") or [],
                                                            strict=False)]
    if not isinstance(cases, list):
        raise RowError("reward.ground_truth.input_output must be a list of {input, output}")
    tests = []
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("input"), str) or not isinstance(
            case.get("output"), str
        ):
            raise RowError(f"reward.ground_truth.input_output[{i}] must have string 'input' and 'output'")
        tests.append({"input": case["input"], "output": case["output"], "kind": "imported"})
    return tests


def klear_map(row: dict[str, Any], counters: FormatCounters) -> dict[str, Any]:
    pid = text(row, "custom_id", required=True)
    statement = text(row, "question", required=True)
    io = json_field(row, "input_output", default={}) or {}
    kind = text(row, "type") or "stdin"
    if row.get("fn_name") or text(row, "starter_code").strip() or kind != "stdin" or (
        isinstance(io, dict) and io.get("fn_name")
    ):
        counters.add("call_based_skipped")
        raise RowSkipped(CALL_BASED)
    solutions = []
    for code in _strings(row, "solutions"):
        language = detect_language(code)
        counters.add(f"solutions_{language}")
        solutions.append({"role": "oracle", "language": language, "code": code, "source": "klear_gold",
                          "reliability": RANK_CODECONTESTS, "verdict": "AC"})
    generators = _strings(row, "input_generator")
    for i, program in enumerate(generators):
        if GENERATOR_FUNCTION not in _functions(program, f"input_generator[{i}]"):
            raise RowError(f"input_generator[{i}] defines no {GENERATOR_FUNCTION}()")
    checkers = _strings(row, "checker")
    judge = checker_judge(checkers[0], "checker[0]") if checkers else ""
    for i, other in enumerate(checkers[1:], start=1):
        _functions(other, f"checker[{i}]")
    kit = None
    if generators or judge:
        kit = {
            "batch_generator": batch_generator(generators) if generators else "",
            "output_judging_function": judge,
            "needs_custom_output_judging_function": bool(judge),
            "origin": "imported",
            "model": SOURCE,
            # The other checkers are kept for a reviewer to compare; the first one judges.
            "extra": {"klear": {"generators": len(generators), "other_checkers": checkers[1:]}},
        }
        counters.add("kits_with_generator", bool(generators))
        counters.add("kits_with_checker", bool(judge))
    tests = _published_tests(row)
    if isinstance(io, dict) and io.get("inputs"):
        tests += [{"input": i, "output": o, "kind": "imported"}
                  for i, o in zip(io.get("inputs") or [], io.get("outputs") or [], strict=False)]
    extra = {k: row[k] for k in ("error_info",) if row.get(k)}
    return {
        "source": SOURCE, "pid": pid[:200], "title": title_from(statement, pid)[:500], "statement": statement,
        "time_limit_ms": limit(time_limit_ms, row.get("time-limit", row.get("time_limit")), "time-limit", DEFAULT_TIME_LIMIT_MS),
        "memory_limit_mb": limit(memory_limit_mb, row.get("memory-limit", row.get("memory_limit")), "memory-limit",
                                 256),
        "solutions": solutions, "kit": kit,
        "suites": [{"origin": "imported", "tests": tests}] if tests else [],
        "extra": {SOURCE: extra} if extra else {},
    }


FORMAT = DatasetFormat(name="klear", description="Klear-CodeTest JSON lines", map_row=klear_map)
