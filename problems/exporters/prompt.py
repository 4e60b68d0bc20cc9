"""The prompt a training row gives the policy: the statement, the limits, the samples and how
to present the answer, so that what the model writes is what the extractor reads."""

from __future__ import annotations

from typing import Any

INSTRUCTIONS = (
    "Solve the following competitive programming problem. Your program reads from standard input and writes to "
    "standard output. Time limit: {time:g} seconds; memory limit: {memory} MB.\n\n{statement}\n{samples}\n"
    "Answer with one complete program in a single fenced code block labelled with its language "
    "(```python, ```cpp or ```java; Java: `public class Main`)."
)


def _words(text: str) -> str:
    return " ".join(text.split())


def _stated(sample: dict[str, Any], statement: str) -> bool:
    """Whether the statement already shows this sample (its input and its output, spacing aside):
    most statements hold their samples, and a prompt that repeats them spends the context twice."""
    given, expected = _words(str(sample.get("input", ""))), _words(str(sample.get("output", "")))
    return bool(given or expected) and given in statement and expected in statement


def answer_prompt(problem: Any) -> str:
    statement = problem.statement.strip()
    in_statement = _words(statement)
    missing = [s for s in (problem.samples if isinstance(problem.samples, list) else [])
               if isinstance(s, dict) and not _stated(s, in_statement)]
    samples = "".join(
        f"\nExample {n} input:\n```\n{s.get('input', '')}```\nExample {n} output:\n```\n{s.get('output', '')}```\n"
        for n, s in enumerate(missing, start=1)
    )
    return INSTRUCTIONS.format(time=problem.time_limit_ms / 1000, memory=problem.memory_limit_mb,
                               statement=statement, samples=samples)
