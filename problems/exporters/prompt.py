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


def answer_prompt(problem: Any) -> str:
    samples = "".join(
        f"\nExample {n} input:\n```\n{s.get('input', '')}```\nExample {n} output:\n```\n{s.get('output', '')}```\n"
        for n, s in enumerate(problem.samples if isinstance(problem.samples, list) else [], start=1)
        if isinstance(s, dict)
    )
    return INSTRUCTIONS.format(time=problem.time_limit_ms / 1000, memory=problem.memory_limit_mb,
                               statement=problem.statement.strip(), samples=samples)
