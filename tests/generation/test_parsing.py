"""Reply parsing never trusts the model; prompts are pure functions of their inputs."""

from __future__ import annotations

import json

import pytest

from generation import prompting
from generation.parsing import (
    ReplyInvalid,
    extract_json,
    hacking_functions,
    parse_inputs_reply,
    parse_validator_reply,
    regular_functions,
)
from tests.generation.conftest import HACKING, REGULAR, VALIDATOR, inputs_reply, validator_reply


def test_the_last_json_fence_wins_over_code_quoted_in_the_reasoning() -> None:
    reply = "First idea:\n```json\n{\"a\": 1}\n```\nBetter:\n```json\n{\"a\": 2}\n```\n"
    assert extract_json(reply) == {"a": 2}


def test_a_result_heading_is_accepted() -> None:
    assert extract_json("reasoning...\n# Result\n{\"x\": [1, 2]}\ntrailing words") == {"x": [1, 2]}


@pytest.mark.parametrize("reply", ["", "   ", "just words", "```json\n[1, 2]\n```", "```json\n{'a': 1,, }\n```",
                                   "```json\n{'a': open('x')}\n```"])
def test_replies_without_a_json_object_are_invalid(reply: str) -> None:
    with pytest.raises(ReplyInvalid):
        extract_json(reply)


def test_a_python_dict_is_read_as_python_means_it_and_nothing_is_evaluated() -> None:
    # Python keeps an unknown escape (a regex's \d); None and True are Python's.
    reply = "```python\n{'code': 'import re\\nR = re.compile(\"\\d+\")', 'judge': None, 'ok': True}\n```"
    assert extract_json(reply) == {"code": 'import re\nR = re.compile("\\d+")', "judge": None, "ok": True}


def test_a_good_validator_reply_parses() -> None:
    parsed = parse_validator_reply(validator_reply())
    assert parsed.input_validator == VALIDATOR and not parsed.needs_output_judge
    assert parsed.output_judging_function is None


def test_a_judge_is_required_when_the_reply_says_it_is_needed() -> None:
    with pytest.raises(ReplyInvalid, match="is empty"):
        parse_validator_reply(validator_reply(needs=True, judge=None))
    with pytest.raises(ReplyInvalid, match="exactly 3 argument"):
        parse_validator_reply(validator_reply(needs=True, judge="def output_judging_function(a, b):\n    return 1\n"))


def test_a_stray_judge_is_dropped_when_none_is_needed() -> None:
    parsed = parse_validator_reply(validator_reply(needs=False, judge="def output_judging_function(a, b, c): pass"))
    assert parsed.output_judging_function is None and parsed.notes


def test_parsing_code_never_executes_it(tmp_path) -> None:
    marker = tmp_path / "ran"
    evil = f"open({str(marker)!r}, 'w').write('x')\n\ndef validate_input(s):\n    return True\n"
    parse_validator_reply(validator_reply(evil))
    assert not marker.exists()


def test_a_good_inputs_reply_parses() -> None:
    parsed = parse_inputs_reply(inputs_reply())
    assert parsed.regular_generator == REGULAR and parsed.hacking_generator == HACKING
    assert regular_functions(REGULAR) == ["gen_range_based_input"]
    assert hacking_functions(HACKING) == ["gen_hacking_input_big", "gen_hacking_input_zeros"]


@pytest.mark.parametrize(
    ("obj", "error"),
    [
        ({"LLMGen_input": "1 2\n", "RPGen_SPGen_input_generator": None, "HackGen_input_generator": None},
         "must be a list"),
        ({"LLMGen_input": [], "RPGen_SPGen_input_generator": None, "HackGen_input_generator": None}, "no inputs"),
        ({"LLMGen_input": [], "RPGen_SPGen_input_generator": "def gen():\n    return '1'\n",
          "HackGen_input_generator": None}, "defines neither"),
        ({"LLMGen_input": [], "RPGen_SPGen_input_generator": None,
          "HackGen_input_generator": "def gen_hacking_input_x(n):\n    return '1'\n"}, "no required arguments"),
        ({"LLMGen_input": ["1 2\n"], "RPGen_SPGen_input_generator": 5, "HackGen_input_generator": None},
         "string of Python source"),
        ({"LLMGen_input": ["1 2\n"], "HackGen_input_generator": None}, "lacks the key"),
    ],
)
def test_bad_inputs_replies_are_rejected_with_a_reason(obj: dict, error: str) -> None:
    with pytest.raises(ReplyInvalid, match=error):
        parse_inputs_reply("```json\n" + json.dumps(obj) + "\n```")


def test_the_in_context_examples_of_every_prompt_satisfy_the_parser() -> None:
    for name, parse in ((prompting.VALIDATOR_PROMPT, parse_validator_reply),
                        (prompting.INPUTS_PROMPT, parse_inputs_reply)):
        system = prompting._template(name)[0]
        examples = system.split("# Example ")[1:]
        assert len(examples) >= 2, name
        for example in examples:
            parse(example)


def test_prompts_are_pure_and_insert_statements_verbatim() -> None:
    args = {"statement": "Sum $a_i$ for {{statement}} and {x}", "samples": [{"input": "1\n", "output": "2\n"}],
            "time_limit_ms": 1000, "memory_limit_mb": 256, "oracle_language": "cpp", "oracle_code": "int main(){}"}
    first = prompting.validator_prompt(**args)
    assert first == prompting.validator_prompt(**args)
    assert "Sum $a_i$ for {{statement}} and {x}" in first[1]["content"]
    assert [m["role"] for m in first] == ["system", "user"]
    second = prompting.inputs_prompt(**args, validator_code=VALIDATOR, direct_count=10)
    assert "exactly 10 complete input strings" in second[0]["content"]
    assert VALIDATOR.strip() in second[1]["content"]
