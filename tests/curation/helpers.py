"""A constructed world for curation tests: a problem whose suite's every test is known, and
completions whose correctness on each test is known by construction (hand count)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from problems.models import DifficultyLabel, Problem, TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from tests.factories import ProblemFactory

# Tests 0..9 of the generated suite: input n, output 2n; kinds by ordinal.
KINDS = ["hacking", "hacking", "hacking", "regular", "regular", "regular", "direct", "direct", "direct", "direct"]
PUBLIC_INPUTS = [0, 5]


@dataclass
class World:
    problem: Problem
    generated: TestSuite
    public: TestSuite


def _suite(problem: Problem, origin: str, tests: list[NewTest]) -> TestSuite:
    suite = suite_create(problem=problem, origin=origin)
    suite_add_tests(suite=suite, tests=tests)
    return suite_activate(suite=suite)


def build_world(pid: str = "cur/double", level: str = "easy") -> World:
    problem = ProblemFactory(pid=pid, statement="Read $n$ and print $2n$.", time_limit_ms=1000)
    DifficultyLabel.objects.create(problem=problem, source="test", level=level)
    generated = _suite(problem, TestSuite.Origin.GENERATED,
                       [NewTest(input=f"{n}\n", output=f"{2 * n}\n", kind=KINDS[n]) for n in range(10)])
    public = _suite(problem, TestSuite.Origin.PUBLIC,
                    [NewTest(input=f"{n}\n", output=f"{2 * n}\n", kind="public") for n in PUBLIC_INPUTS])
    return World(problem, generated, public)


def python_program(right: set[int]) -> str:
    """Right exactly on the inputs in `right` (of 0..9), wrong on the others."""
    return f"n = int(input())\nprint(2 * n if n in {sorted(right)} else 2 * n + 1)\n"


def cpp_program(right: set[int]) -> str:
    cond = " || ".join(f"n == {n}" for n in sorted(right)) or "false"
    return ("#include <cstdio>\nint main(){long long n; scanf(\"%lld\", &n); "
            f"printf(\"%lld\\n\", ({cond}) ? 2 * n : 2 * n + 1); return 0;}}\n")


WRAPPERS = [
    lambda lang, code: f"Here is my solution.\n\n```{lang}\n{code}```\n",
    lambda lang, code: f"<think>\nMaybe ```{lang}\nprint(0)\n``` no.\n</think>\nFinal:\n```{lang}\n{code}```",
    lambda lang, code: f"```{lang}\n{code}```",
]


@dataclass
class Known:
    row: dict[str, Any]
    right: set[int]  # which of the generated tests' inputs it answers correctly
    runs: bool = True  # False: no program (empty) or a compile error: passes nothing


def known_completions(pid: str, count: int, seed: int = 7, model: str = "teacher") -> list[Known]:
    """`count` completions of known correctness per test: random subsets of right answers, in
    Python and C++, in several completion styles, plus ones with no program or a compile error."""
    rng = random.Random(seed)
    out: list[Known] = []
    for index in range(count):
        if index % 17 == 5:
            out.append(Known({"problem_id": pid, "completion": "I could not solve this.\n\n", "language": "python3",
                              "model": model, "sample_index": index}, set(), runs=False))
            continue
        if index % 17 == 8:
            # prose only, no language anywhere: nothing can run it
            out.append(Known({"problem_id": pid, "completion": "n = int(input())\nprint(2 * n)\n", "model": model,
                              "sample_index": index}, set(), runs=False))
            continue
        if index % 17 == 11:
            out.append(Known({"problem_id": pid, "completion": "```cpp\nint main( {\n```\n", "model": model,
                              "sample_index": index}, set(), runs=False))
            continue
        size = rng.choice([0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 10, 10])
        right = set(rng.sample(range(10), size))
        lang = "cpp" if index % 4 == 3 else "python3"
        code = cpp_program(right) if lang == "cpp" else python_program(right)
        fence = "cpp" if lang == "cpp" else "python"
        row: dict[str, Any] = {"problem_id": pid, "model": model, "sample_index": index,
                               "completion": WRAPPERS[index % len(WRAPPERS)](fence, code),
                               "gold": "correct" if len(right) == 10 else "incorrect"}
        if index % 2:
            row["language"] = lang
        out.append(Known(row, right))
    return out


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
