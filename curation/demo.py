"""The curation demo: our own demo programs (oracles and labelled candidates) wrapped as the
answers of three pretend models, so a job runs end to end with no real model. Pages and
exports say it is demo data (CurationJob.demo)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from problems.models import Problem, Solution

DEMO_MODELS = ("demo-model-a", "demo-model-b", "demo-model-c", "demo-model-d")
_FENCE = {"python3": "python", "cpp": "cpp", "java": "java", "c": "c"}
_GOLD = {"AC": "correct"}


def _wrap(model_index: int, language: str, code: str) -> str:
    fence = _FENCE.get(language, language)
    body = code if code.endswith("\n") else code + "\n"
    if model_index == 0:
        return f"Here is a solution.\n\n```{fence}\n{body}```\n"
    if model_index == 1:
        # A reasoning model: a draft inside the thinking is not the answer.
        return f"<think>\nFirst idea:\n```{fence}\n// draft\n```\nBetter to be careful.\n</think>\n```{fence}\n{body}```"
    if model_index == 2:
        return f"```{fence}\n{body}```\n\nThe program reads the input and prints the answer."
    return f"Approach: see the code.\n```{fence}\n{body}```"


def demo_rows(problems: list[Problem]) -> list[dict[str, Any]]:
    """One completion per demo solution (but those known to time out, and the Java ones) and pretend model, gold-labelled where the solution's verdict is known."""
    rows = []
    for problem in sorted(problems, key=lambda p: p.pid):
        # Not the candidates known to time out: each of their tests runs to the time limit, which
        # is what the feature does, but would make the demo take minutes of CPU for nothing new.
        # Nor the Java ones (a JVM start per test: 36 of 264 completions took 30% of the demo's
        # time); a job judges Java like the rest, as the API does.
        solutions = (problem.solutions.filter(language__in=list(_FENCE)).exclude(gold_verdict="TLE").exclude(language="java")
                     .order_by("role", "id"))
        for m, model in enumerate(DEMO_MODELS):
            for index, solution in enumerate(solutions):
                gold = ("correct" if solution.gold_verdict == Solution.GoldVerdict.AC
                        else "" if solution.gold_verdict == Solution.GoldVerdict.UNKNOWN else "incorrect")
                rows.append({"problem_id": f"{problem.source}:{problem.pid}", "model": model, "sample_index": index,
                             "language": solution.language, "completion": _wrap(m, solution.language, solution.code),
                             "gold": gold})
    return rows


def demo_file(problems: list[Problem], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in demo_rows(problems)))
    return path
