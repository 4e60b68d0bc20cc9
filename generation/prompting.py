"""Prompts as pure functions of their inputs, rendered from versioned template files.

A template file (generation/prompts/<name>_v<N>.md) holds a system part and a user part,
marked by `<!-- system -->` and `<!-- user -->` lines, with `{{placeholder}}` slots. Only
named slots are replaced, in one pass, so a statement full of `$` or `{}` (LaTeX, code)
is inserted verbatim and never re-scanned. A new wording is a new file (validator_v2.md),
and LLMCall.prompt_version records which one each call used.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
VALIDATOR_PROMPT = "validator_v2"
INPUTS_PROMPT = "inputs_v2"
# How the prompt states the comparison used when there is no judging function (as sandbox.compare implements it).
COMPARISON_TEXT = {
    "tokens": ("as sequences of whitespace-separated tokens: spaces, tabs, blank lines and line breaks "
               "between tokens do not matter; every token must be equal as text (case-sensitive, so "
               "`1.0` differs from `1` and `Yes` from `YES`)"),
    "exact": ("exactly, character for character and line for line; only a missing newline at the very end "
              "is forgiven"),
}
_SLOT = re.compile(r"\{\{([a-z_]+)\}\}")
_MAX_SAMPLES = 3
_MAX_SAMPLE_CHARS = 2000


class PromptError(ValueError):
    pass


@cache
def _template(name: str) -> tuple[str, str]:
    text = (PROMPTS_DIR / f"{name}.md").read_text()
    if "<!-- system -->" not in text or "<!-- user -->" not in text:
        raise PromptError(f"prompt {name} needs <!-- system --> and <!-- user --> parts")
    system = text.split("<!-- system -->", 1)[1].split("<!-- user -->", 1)[0]
    user = text.split("<!-- user -->", 1)[1]
    return system.strip() + "\n", user.strip() + "\n"


def _fill(template: str, values: dict[str, Any]) -> str:
    def replace(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise PromptError(f"no value for the prompt slot {{{{{key}}}}}")
        return str(values[key])

    return _SLOT.sub(replace, template)


def _samples_text(samples: list[dict[str, str]]) -> str:
    if not samples:
        return "(none)"
    parts = []
    for i, sample in enumerate(samples[:_MAX_SAMPLES], 1):
        parts.append(
            f"Input {i}:\n```\n{str(sample.get('input', ''))[:_MAX_SAMPLE_CHARS]}\n```\n"
            f"Output {i}:\n```\n{str(sample.get('output', ''))[:_MAX_SAMPLE_CHARS]}\n```"
        )
    return "\n".join(parts)


def _messages(name: str, values: dict[str, Any]) -> list[dict[str, str]]:
    system, user = _template(name)
    return [{"role": "system", "content": _fill(system, values)}, {"role": "user", "content": _fill(user, values)}]


def validator_prompt(
    *, statement: str, samples: list[dict[str, str]], time_limit_ms: int, memory_limit_mb: int,
    oracle_language: str, oracle_code: str, comparison: str = "tokens",
) -> list[dict[str, str]]:
    """Call 1: the statement and the most reliable oracle -> validator (+ judge if needed)."""
    return _messages(VALIDATOR_PROMPT, {
        "statement": statement.strip(), "samples": _samples_text(samples), "time_limit_ms": time_limit_ms,
        "memory_limit_mb": memory_limit_mb, "oracle_language": oracle_language, "oracle_code": oracle_code.rstrip(),
        "comparison": COMPARISON_TEXT.get(comparison, COMPARISON_TEXT["tokens"]),
    })


def inputs_prompt(
    *, statement: str, samples: list[dict[str, str]], time_limit_ms: int, memory_limit_mb: int,
    oracle_language: str, oracle_code: str, validator_code: str, direct_count: int,
) -> list[dict[str, str]]:
    """Call 2: statement, oracle and validator -> direct inputs, regular/stratified and hacking generators."""
    return _messages(INPUTS_PROMPT, {
        "statement": statement.strip(), "samples": _samples_text(samples), "time_limit_ms": time_limit_ms,
        "memory_limit_mb": memory_limit_mb, "oracle_language": oracle_language, "oracle_code": oracle_code.rstrip(),
        "validator_code": validator_code.rstrip(), "direct_count": direct_count,
    })


def retry_messages(messages: list[dict[str, str]], reply: str, error: str) -> list[dict[str, str]]:
    """The conversation so far plus the rejected reply and why it was rejected."""
    return [
        *messages,
        {"role": "assistant", "content": reply},
        {
            "role": "user",
            "content": (
                "Your reply could not be used: " + error + "\n\nFix this and answer again: reason briefly, "
                "then give the complete JSON object in a ```json fenced block."
            ),
        },
    ]
