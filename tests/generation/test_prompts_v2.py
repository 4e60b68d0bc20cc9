"""Prompts v2 carry HardTestGen's rules and state the comparison as sandbox.compare implements it."""

from __future__ import annotations

from generation import prompting
from sandbox import compare_exact, compare_tokens

ARGS = {"statement": "Sum.", "samples": [{"input": "1 2\n", "output": "3\n"}], "time_limit_ms": 1000,
        "memory_limit_mb": 256, "oracle_language": "python3", "oracle_code": "print(3)"}


def test_v1_stays_for_the_record_and_v2_is_used() -> None:
    assert (prompting.VALIDATOR_PROMPT, prompting.INPUTS_PROMPT) == ("validator_v2", "inputs_v2")
    assert (prompting.PROMPTS_DIR / "validator_v1.md").exists() and (prompting.PROMPTS_DIR / "inputs_v1.md").exists()


def test_the_inputs_prompt_carries_the_hardtestgen_rules() -> None:
    system = prompting.inputs_prompt(**ARGS, validator_code="def validate_input(s): return True",
                                     direct_count=10)[0]["content"]
    assert "never\n   longer than 300 characters" in system  # cap on direct inputs
    assert "never loop \"until a random draw satisfies a constraint\"" in system  # generators terminate
    assert "ignore subtask limits" in system
    assert "Plain random\n   data at the maximum size is not a hacking input" in system
    assert "random.Random(SEED)" in system and "do not seed it" not in system


def test_the_validator_prompt_states_the_problems_comparison_as_implemented() -> None:
    tokens = prompting.validator_prompt(**ARGS, comparison="tokens")[0]["content"]
    exact = prompting.validator_prompt(**ARGS, comparison="exact")[0]["content"]
    assert prompting.COMPARISON_TEXT["tokens"] in tokens and prompting.COMPARISON_TEXT["exact"] in exact
    assert "subtask" in tokens
    # what the tokens text promises is what the comparator does
    assert compare_tokens("1 2\n3\n", "1\t2 3") and compare_tokens("1\n\n2", "1 2")
    assert not compare_tokens("1.0", "1") and not compare_tokens("Yes", "YES")
    # and the exact text
    assert compare_exact("1 2\n", "1 2") and not compare_exact("1 2\n", "1  2\n")
