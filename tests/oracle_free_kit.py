"""A problem with no human solution and scripted LLM replies for the oracle-free modes' tests.

Maximum subarray sum: the brute force enumerates every subarray; the efficient solution is
Kadane's. Candidates with known verdicts cover the ways a program fails (wrong on a corner,
too slow at the maximum size, crashing at the maximum size).
"""

from __future__ import annotations

import json

from problems.models import Problem, Solution
from problems.services import solution_upsert

STATEMENT = ("Given $n$ ($1 \\le n \\le 200000$) and integers $a_1..a_n$ ($|a_i| \\le 10^9$), print the "
             "maximum sum of a non-empty contiguous subarray.")
SAMPLES = [{"input": "5\n-1 2 3 -2 4\n", "output": "7\n"}, {"input": "3\n-3 -1 -2\n", "output": "-1\n"}]

VALIDATOR = '''
def validate_input(input_str):
    lines = input_str.split("\\n")
    if len(lines) != 3 or lines[2] != "":
        return False
    try:
        n = int(lines[0])
        a = [int(x) for x in lines[1].split(" ")] if lines[1] else []
    except ValueError:
        return False
    return 1 <= n <= 200000 and len(a) == n and all(abs(x) <= 10**9 for x in a)
'''

BRUTE = '''
n = int(input())
a = list(map(int, input().split()))
best = None
for i in range(n):
    for j in range(i, n):
        s = sum(a[i:j + 1])
        if best is None or s > best:
            best = s
print(best)
'''

SECOND_BRUTE = '''
import itertools
n = int(input())
a = list(map(int, input().split()))
prefix = [0] + list(itertools.accumulate(a))
print(max(prefix[j] - prefix[i] for i in range(n) for j in range(i + 1, n + 1)))
'''

# Passes both samples but answers 0 whenever n == 1.
BRUTE_WRONG_ON_SINGLE = BRUTE.replace("print(best)", "print(0 if n == 1 else best)")
# The largest element: wrong on the first sample.
BRUTE_WRONG_ON_SAMPLE = "n = int(input())\nprint(max(map(int, input().split())))\n"

KADANE = '''
import sys
data = sys.stdin.buffer.read().split()
n = int(data[0])
best = cur = None
for x in map(int, data[1:n + 1]):
    cur = x if cur is None or cur < 0 else cur + x
    best = cur if best is None or cur > best else best
print(best)
'''
# Correct but O(n^2): too slow at the maximum size.
QUADRATIC = '''
import sys
data = sys.stdin.buffer.read().split()
n = int(data[0])
a = list(map(int, data[1:n + 1]))
best = a[0]
for i in range(n):
    s = 0
    for j in range(i, n):
        s += a[j]
        if s > best:
            best = s
print(best)
'''
# Resets the running sum to 0: answers 0 when every value is negative.
RESET_TO_ZERO = '''
n = int(input())
best = cur = 0
for x in map(int, input().split()):
    cur = max(0, cur + x)
    best = max(best, cur)
print(best)
'''
# Right on small inputs, crashes on large ones.
CRASHES_WHEN_BIG = KADANE.replace("n = int(data[0])", "n = int(data[0])\nif n > 1000:\n    raise ValueError(n)")

EDGES = '''
import random


def gen_edge_input_single():
    return f"1\\n{random.randint(1, 5)}\\n"


def gen_edge_input_all_negative():
    n = random.randint(2, 6)
    return f"{n}\\n" + " ".join(str(random.randint(-9, -1)) for _ in range(n)) + "\\n"


def gen_edge_input_mixed():
    n = random.randint(3, 8)
    return f"{n}\\n" + " ".join(str(random.randint(-9, 9)) for _ in range(n)) + "\\n"


def gen_edge_input_extremes():
    n = random.randint(1, 4)
    return f"{n}\\n" + " ".join(str(random.choice([10**9, -10**9])) for _ in range(n)) + "\\n"


def gen_edge_input_empty():
    return "0\\n\\n"
'''

MAX = '''
import random


def gen_max_input():
    n = 200000
    return f"{n}\\n" + " ".join(str(random.randint(-10**9, 10**9)) for _ in range(n)) + "\\n"
'''


def kadane(text: str) -> int:
    values = [int(x) for x in text.split()[1:]]
    best = cur = values[0]
    for x in values[1:]:
        cur = max(x, cur + x)
        best = max(best, cur)
    return best


def a7_reply(*, brute: str = BRUTE, efficient: str | None = KADANE, edges: str = EDGES, maximum: str | None = MAX,
             validator: str = VALIDATOR) -> str:
    obj = {"brute_force_solution": brute, "efficient_solution": efficient, "input_validator": validator,
           "needs_custom_output_judging_function": False, "output_judging_function": None,
           "edge_input_generator": edges, "max_input_generator": maximum}
    return "Brute force: every subarray. Edge cases: one element, all negative.\n```json\n" + json.dumps(obj) + "\n```"


def brute_reply(code: str = SECOND_BRUTE) -> str:
    return "Prefix sums over every pair.\n```json\n" + json.dumps({"brute_force_solution": code}) + "\n```"


def make_solutionless(pid: str = "of/maxsub", *, candidates: bool = False) -> Problem:
    problem = Problem.objects.create(source="of", pid=pid, title="Maximum subarray", statement=STATEMENT,
                                     time_limit_ms=1000, memory_limit_mb=256, samples=SAMPLES)
    if candidates:
        for name, code, gold in (("kadane", KADANE, "AC"), ("quadratic", QUADRATIC, "TLE"),
                                 ("reset", RESET_TO_ZERO, "WA"), ("crash", CRASHES_WHEN_BIG, "RE")):
            solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3", code=code,
                            name=name, gold_verdict=gold)
    return problem


TRUST = {"method": "hardtests_a7", "model": "fake-model",
         "brute_force": {"samples_checked": 2, "samples_passed": 2, "finished_on": 2, "inputs": 2},
         "cross_check": {"with": "second_brute_force", "used": True, "agreed": 2, "compared": 2, "share": 1.0,
                         "judged_with": "comparison:tokens"},
         "model_made_outputs": 2, "statement_outputs": 1, "time_only_tests": 1, "max_test": {"status": "added"}}


def make_oracle_free_suite(problem: Problem):
    """An active oracle-free suite as the A.7 mode saves one (without asking an LLM)."""
    from problems.models import TestSuite
    from problems.services import NewTest, suite_activate, suite_add_tests, suite_create

    suite = suite_create(problem=problem, origin=TestSuite.Origin.ORACLE_FREE, unverified=True, trust=TRUST)
    suite_add_tests(suite=suite, tests=[
        NewTest(input=SAMPLES[0]["input"], output=SAMPLES[0]["output"], kind="public", output_origin="statement"),
        NewTest(input="1\n5\n", output="5\n", kind="edge", generator="gen_edge_input_single", call_number=1,
                output_origin="brute_force"),
        NewTest(input="2\n-3 -4\n", output="-3\n", kind="edge", generator="gen_edge_input_all_negative",
                call_number=1, output_origin="brute_force"),
        NewTest(input="4\n1 -2 3 4\n", output=b"", kind="time_only", generator="gen_max_input", call_number=1,
                output_origin="none"),
    ])
    return suite_activate(suite=suite)
