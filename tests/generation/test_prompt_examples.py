"""The in-context examples in the prompts are themselves correct: their code runs in the
sandbox, the example validator accepts the example inputs, and the example judges judge."""

from __future__ import annotations

import pytest

from generation import prompting
from generation.parsing import hacking_functions, parse_inputs_reply, parse_validator_reply, regular_functions
from sandbox import Limits, call_python, get_sandbox

LIMITS = Limits(time_s=10, memory_mb=1024)


def _examples(name: str) -> list[str]:
    return prompting._template(name)[0].split("# Example ")[1:]


@pytest.fixture(scope="module")
def sb():
    return get_sandbox()


def test_the_max_subarray_examples_agree_with_each_other(sb) -> None:
    validator = parse_validator_reply(_examples(prompting.VALIDATOR_PROMPT)[0]).input_validator
    kit = parse_inputs_reply(_examples(prompting.INPUTS_PROMPT)[0])
    assert len(kit.direct_inputs) == 10
    generated = []
    for code in (kit.regular_generator, kit.hacking_generator):
        for name in regular_functions(code) + hacking_functions(code):
            results = call_python(sb, code, name, [()], LIMITS)
            assert results[0].ok and isinstance(results[0].value, str), (name, results[0].error)
            generated.append(results[0].value)
    verdicts = call_python(sb, validator, "validate_input", [(x,) for x in kit.direct_inputs + generated], LIMITS)
    assert [v.value for v in verdicts] == [True] * len(verdicts)
    rejected = call_python(sb, validator, "validate_input", [("0\n\n",), ("2\n1 2 3\n",), ("1\n01\n",)], LIMITS)
    assert [v.value for v in rejected] == [False, False, False]


def test_the_bipartite_example_generators_run(sb) -> None:
    kit = parse_inputs_reply(_examples(prompting.INPUTS_PROMPT)[1])
    for code in (kit.regular_generator, kit.hacking_generator):
        for name in regular_functions(code) + hacking_functions(code):
            result = call_python(sb, code, name, [()], LIMITS)[0]
            assert result.ok and isinstance(result.value, str), (name, result.error)
            n, m = map(int, result.value.split("\n", 1)[0].split())
            assert 1 <= n <= 10**5 and 0 <= m <= 2 * 10**5
            assert len(result.value.strip().split("\n")) == m + 1


def test_the_example_judges_accept_other_correct_answers_and_reject_wrong_ones(sb) -> None:
    two_sum = parse_validator_reply(_examples(prompting.VALIDATOR_PROMPT)[1])
    sqrt = parse_validator_reply(_examples(prompting.VALIDATOR_PROMPT)[2])
    assert two_sum.needs_output_judge and sqrt.needs_output_judge
    case = "4 5\n1 4 2 3\n"
    results = call_python(sb, two_sum.output_judging_function, "output_judging_function",
                          [(case, "3 4\n", "1 2\n"), (case, "1 3\n", "1 2\n"), (case, "-1\n", "1 2\n")], LIMITS)
    assert [r.value for r in results] == [True, False, False]
    results = call_python(sb, sqrt.output_judging_function, "output_judging_function",
                          [("1\n2\n", "1.4142135\n", "1.41421356237\n"), ("1\n2\n", "1.5\n", "1.41421356237\n")],
                          LIMITS)
    assert [r.value for r in results] == [True, False]
    accepted = call_python(sb, two_sum.input_validator, "validate_input", [(case,), ("1 5\n3\n",)], LIMITS)
    assert [r.value for r in accepted] == [True, False]
