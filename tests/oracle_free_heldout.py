"""Four problems with no human solution, of different shapes, and scripted LLM replies for them.

Held out from the oracle-free modes' first tests (tests/oracle_free_kit.py): multi-test-case
input, a real-number answer judged with a tolerance, a many-answers problem with a judging
function, and a string problem. Each problem carries candidates whose verdict is known: fast
right ones (a second right answer where several are right), wrong ones of several kinds, and
right-but-slow ones only the maximum-size time-only test can catch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from problems.models import Problem


@dataclass
class Case:
    pid: str
    title: str
    statement: str
    samples: list[dict[str, str]]
    validator: str
    brute: str
    second_brute: str
    efficient: str
    edges: str
    maximum: str
    judge: str | None = None
    time_limit_ms: int = 2000
    # name -> (language, code, verdict on the A.7 suite)
    candidates: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    # brute forces that reproduce the samples but are wrong on some small input
    subtly_wrong_brute: str = ""
    # a brute force that fails a sample
    sample_failing_brute: str = ""
    # (input, right output) pairs for AceCoder's baseline
    pairs: list[tuple[str, str]] = field(default_factory=list)
    # a model-written pair with a wrong output, which the filter must drop
    wrong_pair: tuple[str, str] | None = None

    def make(self, pid: str | None = None) -> Problem:
        return Problem.objects.create(source="heldout", pid=pid or self.pid, title=self.title,
                                      statement=self.statement, time_limit_ms=self.time_limit_ms,
                                      memory_limit_mb=256, samples=self.samples)

    def a7_reply(self, *, brute: str | None = None, efficient: str | None = "same",
                 maximum: str | None = "same", style: str = "fenced") -> str:
        obj = {"brute_force_solution": brute or self.brute,
               "efficient_solution": self.efficient if efficient == "same" else efficient,
               "input_validator": self.validator,
               "needs_custom_output_judging_function": self.judge is not None,
               "output_judging_function": self.judge,
               "edge_input_generator": self.edges,
               "max_input_generator": self.maximum if maximum == "same" else maximum}
        head = (f"The answer of {self.title.lower()} is checked by exhaustive search; the edge cases keep "
                "every size tiny, and the largest input fills every bound.\n\n")
        if style == "result":
            return head + "# Result\n" + json.dumps(obj, indent=1)
        return head + "```json\n" + json.dumps(obj) + "\n```\n"

    def second_reply(self, code: str | None = None) -> str:
        return ("Independent exhaustive search.\n\n# Result\n"
                + json.dumps({"brute_force_solution": code or self.second_brute}))

    def pairs_reply(self, extra: list[tuple[str, str]] = ()) -> str:  # type: ignore[assignment]
        rows = [{"input": i, "output": o} for i, o in [*self.pairs, *extra]]
        return "Tests:\n```json\n" + json.dumps({"test_cases": rows}) + "\n```"

    def solution_reply(self) -> str:
        return "```json\n" + json.dumps({"solution": self.efficient}) + "\n```"


# -- 1. multi-test-case input: the best later gain -------------------------------------------

GAIN_VALIDATOR = '''
def validate_input(input_str):
    if not input_str.endswith("\\n"):
        return False
    lines = input_str[:-1].split("\\n")
    try:
        t = int(lines[0])
    except ValueError:
        return False
    if not 1 <= t <= 10000 or len(lines) != 1 + 2 * t:
        return False
    total = 0
    for k in range(t):
        try:
            n = int(lines[1 + 2 * k])
            a = [int(x) for x in lines[2 + 2 * k].split(" ")]
        except ValueError:
            return False
        if not 2 <= n <= 200000 or len(a) != n or not all(1 <= x <= 10**9 for x in a):
            return False
        total += n
    return total <= 200000
'''

GAIN_BRUTE = '''
t = int(input())
for _ in range(t):
    n = int(input())
    a = list(map(int, input().split()))
    print(max(a[j] - a[i] for i in range(n) for j in range(i + 1, n)))
'''

GAIN_SECOND = '''
import itertools
import sys
tokens = sys.stdin.read().split()
pos = 1
out = []
for _ in range(int(tokens[0])):
    n = int(tokens[pos])
    a = tokens[pos + 1:pos + 1 + n]
    pos += 1 + n
    out.append(str(max(int(y) - int(x) for x, y in itertools.combinations(a, 2))))
print("\\n".join(out))
'''

GAIN_FAST = '''
import sys
data = sys.stdin.buffer.read().split()
pos = 1
out = []
for _ in range(int(data[0])):
    n = int(data[pos])
    lowest = int(data[pos + 1])
    best = None
    for x in map(int, data[pos + 2:pos + 1 + n]):
        if best is None or x - lowest > best:
            best = x - lowest
        if x < lowest:
            lowest = x
    pos += 1 + n
    out.append(best)
sys.stdout.write("\\n".join(map(str, out)) + "\\n")
'''

GAIN_CPP = r'''
#include <cstdio>
#include <algorithm>
int main() {
    int t; if (scanf("%d", &t) != 1) return 0;
    while (t--) {
        int n; scanf("%d", &n);
        long long lowest, x; scanf("%lld", &lowest);
        long long best = -4e18;
        for (int i = 1; i < n; ++i) { scanf("%lld", &x); best = std::max(best, x - lowest); lowest = std::min(lowest, x); }
        printf("%lld\n", best);
    }
}
'''

# i <= j: the empty gain 0 is allowed, so a falling array gets 0 instead of a negative answer.
GAIN_ZERO = GAIN_FAST.replace("best = None", "best = 0")
GAIN_FIRST_CASE_ONLY = GAIN_FAST.replace("for _ in range(int(data[0])):", "for _ in range(1):")
GAIN_MAX_MINUS_MIN = '''
t = int(input())
for _ in range(t):
    input()
    a = list(map(int, input().split()))
    print(max(a) - min(a))
'''
GAIN_QUADRATIC = '''
import sys
data = sys.stdin.buffer.read().split()
pos = 1
for _ in range(int(data[0])):
    n = int(data[pos])
    a = list(map(int, data[pos + 1:pos + 1 + n]))
    pos += 1 + n
    best = a[1] - a[0]
    for i in range(n):
        ai = a[i]
        for j in range(i + 1, n):
            if a[j] - ai > best:
                best = a[j] - ai
    print(best)
'''
GAIN_SUBTLE_BRUTE = GAIN_BRUTE.replace("for j in range(i + 1, n)", "for j in range(i, n)")
GAIN_SAMPLE_FAILING = GAIN_FIRST_CASE_ONLY

GAIN_EDGES = '''
import random


def _case(a):
    return f"{len(a)}\\n" + " ".join(map(str, a))


def _input(cases):
    return f"{len(cases)}\\n" + "\\n".join(_case(a) for a in cases) + "\\n"


def gen_edge_input_two_rising():
    x = random.randint(1, 50)
    return _input([[x, x + random.randint(1, 9)]])


def gen_edge_input_two_falling():
    x = random.randint(10, 60)
    return _input([[x, x - random.randint(1, 9)]])


def gen_edge_input_all_equal():
    x = random.randint(1, 10**9)
    return _input([[x] * random.randint(2, 6)])


def gen_edge_input_strictly_falling():
    n = random.randint(3, 7)
    start = random.randint(50, 99)
    return _input([[start - 3 * i for i in range(n)]])


def gen_edge_input_many_cases():
    return _input([[random.randint(1, 9) for _ in range(random.randint(2, 5))] for _ in range(random.randint(3, 6))])


def gen_edge_input_value_extremes():
    return _input([[10**9, 1], [1, 10**9]])


def gen_edge_input_minimum_last():
    a = [random.randint(20, 40) for _ in range(random.randint(2, 6))]
    return _input([a + [1]])


def gen_edge_input_maximum_first():
    a = [random.randint(1, 20) for _ in range(random.randint(2, 6))]
    return _input([[99] + a])


def gen_edge_input_falling_then_rising():
    return _input([[9, 7, 5, 3, 4], [5, 4, 3, 2, 1]])


def gen_edge_input_random_small():
    return _input([[random.randint(1, 30) for _ in range(random.randint(2, 8))] for _ in range(2)])
'''

GAIN_MAX = '''
import random


def gen_max_input():
    n = 200000
    return "1\\n" + f"{n}\\n" + " ".join(str(random.randint(1, 10**9)) for _ in range(n)) + "\\n"
'''

GAIN = Case(
    pid="hd/gain", title="Best later gain",
    statement=("The first line holds $T$ ($1 \\le T \\le 10^4$). Each test case is a line with $n$ "
               "($2 \\le n \\le 2\\cdot 10^5$) and a line of $n$ integers $a_1..a_n$ ($1 \\le a_i \\le 10^9$); "
               "the sum of $n$ over the test cases is at most $2\\cdot 10^5$. For each test case print the "
               "largest value of $a_j - a_i$ over $i < j$ (it may be negative)."),
    samples=[{"input": "2\n5\n3 1 4 1 5\n4\n7 2 8 3\n", "output": "4\n6\n"},
             {"input": "1\n3\n1 1 2\n", "output": "1\n"}],
    validator=GAIN_VALIDATOR, brute=GAIN_BRUTE, second_brute=GAIN_SECOND, efficient=GAIN_FAST,
    edges=GAIN_EDGES, maximum=GAIN_MAX,
    candidates={
        "fast": ("python3", GAIN_FAST, "AC"),
        "fast_cpp": ("cpp", GAIN_CPP, "AC"),
        "zero_floor": ("python3", GAIN_ZERO, "WA"),
        "first_case_only": ("python3", GAIN_FIRST_CASE_ONLY, "WA"),
        "max_minus_min": ("python3", GAIN_MAX_MINUS_MIN, "WA"),
        "quadratic": ("python3", GAIN_QUADRATIC, "TLE"),
    },
    subtly_wrong_brute=GAIN_SUBTLE_BRUTE, sample_failing_brute=GAIN_SAMPLE_FAILING,
    pairs=[("1\n2\n5 3\n", "-2\n"), ("1\n3\n4 4 4\n", "0\n"), ("2\n2\n1 9\n3\n9 8 1\n", "8\n-1\n"),
           ("1\n4\n10 1 3 2\n", "2\n"), ("1\n5\n5 4 3 2 1\n", "-1\n"), ("1\n2\n1 1000000000\n", "999999999\n")],
)


# -- 2. a real-number answer with a tolerance judge: the best window average ------------------

AVG_VALIDATOR = '''
def validate_input(input_str):
    lines = input_str.split("\\n")
    if len(lines) != 3 or lines[2] != "":
        return False
    try:
        n, k = map(int, lines[0].split(" "))
        a = [int(x) for x in lines[1].split(" ")]
    except ValueError:
        return False
    return 1 <= k <= n <= 200000 and len(a) == n and all(-10**4 <= x <= 10**4 for x in a)
'''

AVG_JUDGE = '''
import math


def output_judging_function(input_str, candidate_output, reference_output):
    got = candidate_output.split()
    want = reference_output.split()
    if len(got) != 1 or len(want) != 1:
        return False
    try:
        x = float(got[0])
        y = float(want[0])
    except ValueError:
        return False
    if not math.isfinite(x):
        return False
    return abs(x - y) <= 1e-6 * max(1.0, abs(y))
'''

AVG_BRUTE = '''
from fractions import Fraction
n, k = map(int, input().split())
a = list(map(int, input().split()))
best = max(Fraction(sum(a[i:i + k]), k) for i in range(n - k + 1))
print(f"{float(best):.10f}")
'''

AVG_SECOND = '''
import statistics
n, k = map(int, input().split())
a = list(map(int, input().split()))
print(repr(max(statistics.mean(a[i:i + k]) for i in range(n - k + 1)) * 1.0))
'''

AVG_FAST = '''
import sys
data = sys.stdin.buffer.read().split()
n, k = int(data[0]), int(data[1])
a = list(map(int, data[2:2 + n]))
s = sum(a[:k])
best = s
for i in range(k, n):
    s += a[i] - a[i - k]
    if s > best:
        best = s
print("%.9f" % (best / k))
'''

AVG_SEVEN_DIGITS = AVG_FAST.replace('"%.9f"', '"%.7f"')
AVG_FLOOR = AVG_FAST.replace("(best / k)", "(best // k)")
AVG_TWO_DIGITS = AVG_FAST.replace('"%.9f"', '"%.2f"')
AVG_MISSES_LAST = '''
n, k = map(int, input().split())
a = list(map(int, input().split()))
best = max(sum(a[i:i + k]) for i in range(max(1, n - k)))
print("%.9f" % (best / k))
'''
AVG_SLOW = '''
n, k = map(int, input().split())
a = list(map(int, input().split()))
best = None
for i in range(n - k + 1):
    s = 0
    for j in range(i, i + k):
        s += a[j]
    if best is None or s > best:
        best = s
print("%.9f" % (best / k))
'''
AVG_MAX_ELEMENT = "input()\nprint('%.9f' % max(map(int, input().split())))\n"
# Wrong when the best window is the first one: starts from the second.
AVG_SUBTLE_BRUTE = AVG_BRUTE.replace("for i in range(n - k + 1)", "for i in range(min(1, n - k), n - k + 1)")

AVG_EDGES = '''
import random


def _input(a, k):
    return f"{len(a)} {k}\\n" + " ".join(map(str, a)) + "\\n"


def gen_edge_input_single():
    return _input([random.randint(-10**4, 10**4)], 1)


def gen_edge_input_whole_array():
    a = [random.randint(-9, 9) for _ in range(random.randint(2, 6))]
    return _input(a, len(a))


def gen_edge_input_k_one():
    a = [random.randint(-50, 50) for _ in range(random.randint(2, 7))]
    return _input(a, 1)


def gen_edge_input_all_negative():
    a = [random.randint(-10**4, -1) for _ in range(random.randint(3, 7))]
    return _input(a, 2)


def gen_edge_input_best_first():
    return _input([9, 8, 1, 1, 1, 1], 2)


def gen_edge_input_best_last():
    return _input([1, 1, 1, 1, 8, 9], 2)


def gen_edge_input_repeating_thirds():
    return _input([1, 0, 0, 1, 0, 0, 1], 3)


def gen_edge_input_extremes():
    return _input([10**4, -10**4, 10**4, -10**4, 10**4], 2)


def gen_edge_input_seventh():
    return _input([1, 2, 3, 4, 5, 6, 7], 7)


def gen_edge_input_random():
    n = random.randint(3, 8)
    return _input([random.randint(-20, 20) for _ in range(n)], random.randint(1, n))
'''

AVG_MAX = '''
import random


def gen_max_input():
    n = 200000
    return f"{n} {n // 2}\\n" + " ".join(str(random.randint(-10**4, 10**4)) for _ in range(n)) + "\\n"
'''

AVG = Case(
    pid="hd/avg", title="Best window average",
    statement=("Given $n$ and $k$ ($1 \\le k \\le n \\le 2\\cdot 10^5$) and integers $a_1..a_n$ "
               "($|a_i| \\le 10^4$), print the largest average of $k$ consecutive elements. An answer is "
               "accepted when its absolute or relative error does not exceed $10^{-6}$."),
    samples=[{"input": "5 2\n1 12 -5 -6 50\n", "output": "22.0000000000\n"},
             {"input": "4 3\n1 2 2 1\n", "output": "1.6666666667\n"}],
    validator=AVG_VALIDATOR, judge=AVG_JUDGE, brute=AVG_BRUTE, second_brute=AVG_SECOND, efficient=AVG_FAST,
    edges=AVG_EDGES, maximum=AVG_MAX,
    candidates={
        "fast": ("python3", AVG_FAST, "AC"),
        "seven_digits": ("python3", AVG_SEVEN_DIGITS, "AC"),
        "floor": ("python3", AVG_FLOOR, "WA"),
        "two_digits": ("python3", AVG_TWO_DIGITS, "WA"),
        "misses_last_window": ("python3", AVG_MISSES_LAST, "WA"),
        "max_element": ("python3", AVG_MAX_ELEMENT, "WA"),
        "slow": ("python3", AVG_SLOW, "TLE"),
    },
    subtly_wrong_brute=AVG_SUBTLE_BRUTE, sample_failing_brute=AVG_FLOOR,
    pairs=[("1 1\n-7\n", "-7.0000000000\n"), ("3 3\n1 2 4\n", "2.3333333333\n"), ("4 1\n-3 5 2 5\n", "5.0\n"),
           ("6 2\n9 8 1 1 1 1\n", "8.5\n"), ("6 2\n1 1 1 1 8 9\n", "8.5\n"), ("3 2\n-1 -2 -3\n", "-1.5\n")],
)


# -- 3. many right answers and a judging function: a pair with the given sum -----------------

PAIR_VALIDATOR = '''
def validate_input(input_str):
    lines = input_str.split("\\n")
    if len(lines) != 3 or lines[2] != "":
        return False
    try:
        n, s = map(int, lines[0].split(" "))
        a = [int(x) for x in lines[1].split(" ")]
    except ValueError:
        return False
    return 2 <= n <= 200000 and 2 <= s <= 2 * 10**9 and len(a) == n and all(1 <= x <= 10**9 for x in a)
'''

PAIR_JUDGE = '''
def output_judging_function(input_str, candidate_output, reference_output):
    head, values = input_str.split("\\n")[:2]
    n, s = map(int, head.split())
    a = list(map(int, values.split()))
    got, want = candidate_output.split(), reference_output.split()
    if want == ["-1"]:
        return got == ["-1"]
    if len(got) != 2 or not all(x.isdigit() for x in got):
        return False
    i, j = int(got[0]), int(got[1])
    return 1 <= i < j <= n and a[i - 1] + a[j - 1] == s
'''

PAIR_BRUTE = '''
n, s = map(int, input().split())
a = list(map(int, input().split()))
answer = "-1"
for i in range(n):
    for j in range(i + 1, n):
        if a[i] + a[j] == s and answer == "-1":
            answer = f"{i + 1} {j + 1}"
print(answer)
'''

# Another search order: another right answer where several exist.
PAIR_SECOND = '''
import itertools
n, s = map(int, input().split())
a = list(map(int, input().split()))
found = [(i, j) for i, j in itertools.combinations(range(1, n + 1), 2) if a[i - 1] + a[j - 1] == s]
print(" ".join(map(str, found[-1])) if found else -1)
'''

PAIR_FAST = '''
import sys
data = sys.stdin.buffer.read().split()
n, s = int(data[0]), int(data[1])
seen = {}
for j in range(n):
    x = int(data[2 + j])
    if s - x in seen:
        print(seen[s - x], j + 1)
        break
    seen.setdefault(x, j + 1)
else:
    print(-1)
'''

PAIR_TWO_POINTERS = '''
import sys
data = sys.stdin.buffer.read().split()
n, s = int(data[0]), int(data[1])
order = sorted(range(n), key=lambda i: int(data[2 + i]))
lo, hi = 0, n - 1
while lo < hi:
    total = int(data[2 + order[lo]]) + int(data[2 + order[hi]])
    if total == s:
        i, j = sorted((order[lo] + 1, order[hi] + 1))
        print(i, j)
        break
    if total < s:
        lo += 1
    else:
        hi -= 1
else:
    print(-1)
'''
# A value may pair with itself: "1 1" when 2 * a_1 = s.
PAIR_SELF = PAIR_FAST.replace("    if s - x in seen:", "    seen.setdefault(x, j + 1)\n    if s - x in seen:")
# Distinct values only: misses two equal values that make the sum.
PAIR_DISTINCT = '''
n, s = map(int, input().split())
a = list(map(int, input().split()))
where = {x: i + 1 for i, x in enumerate(a)}
for i, x in enumerate(a):
    if s - x != x and s - x in where:
        print(*sorted((i + 1, where[s - x])))
        break
else:
    print(-1)
'''
PAIR_REVERSED = PAIR_FAST.replace("print(seen[s - x], j + 1)", "print(j + 1, seen[s - x])")
PAIR_VALUES = PAIR_FAST.replace("print(seen[s - x], j + 1)", "print(s - x, x)")
PAIR_SLOW = '''
n, s = map(int, input().split())
a = list(map(int, input().split()))
for i in range(n):
    for j in range(i + 1, n):
        if a[i] + a[j] == s:
            print(i + 1, j + 1)
            raise SystemExit
print(-1)
'''
# Looks only at near pairs (j - i <= 2): right on the samples, wrong when the pair is far apart.
PAIR_SUBTLE_BRUTE = PAIR_BRUTE.replace("for j in range(i + 1, n)", "for j in range(i + 1, min(n, i + 3))")

PAIR_EDGES = '''
import random


def _input(a, s):
    return f"{len(a)} {s}\\n" + " ".join(map(str, a)) + "\\n"


def gen_edge_input_two_equal_make_it():
    x = random.randint(1, 50)
    return _input([x, x], 2 * x)


def gen_edge_input_two_no_pair():
    return _input([3, 4], 8)


def gen_edge_input_half_once():
    # s / 2 appears once: it cannot pair with itself
    return _input([5, 1, 2], 10)


def gen_edge_input_half_twice_late():
    return _input([1, 2, 6, 3, 6], 12)


def gen_edge_input_many_pairs():
    return _input([1, 2, 3, 4, 5, 6], 7)


def gen_edge_input_big_values():
    return _input([10**9, 1, 10**9], 2 * 10**9)


def gen_edge_input_pair_at_ends():
    a = [random.randint(10, 20) for _ in range(random.randint(2, 5))]
    return _input([1] + a + [2], 3)


def gen_edge_input_none_random():
    a = [2 * random.randint(1, 20) for _ in range(random.randint(2, 7))]
    return _input(a, 3)


def gen_edge_input_random():
    a = [random.randint(1, 9) for _ in range(random.randint(2, 8))]
    return _input(a, random.randint(2, 18))


def gen_edge_input_all_same():
    x = random.randint(1, 9)
    return _input([x] * random.randint(3, 6), 2 * x)
'''

PAIR_MAX = '''
import random


def gen_max_input():
    n = 200000
    # no two values reach the sum: a search that stops at the first pair gets no early exit
    return f"{n} {2 * 10**9}\\n" + " ".join(str(random.randint(1, 10**9 - 1)) for _ in range(n)) + "\\n"
'''

PAIR = Case(
    pid="hd/pair", title="Pair with the sum",
    statement=("Given $n$ ($2 \\le n \\le 2\\cdot 10^5$), $s$ ($2 \\le s \\le 2\\cdot 10^9$) and integers "
               "$a_1..a_n$ ($1 \\le a_i \\le 10^9$), print two indices $i < j$ with $a_i + a_j = s$, or $-1$ "
               "if there are none. If several pairs exist, print any of them."),
    samples=[{"input": "4 9\n2 7 11 7\n", "output": "1 2\n"}, {"input": "3 10\n5 1 3\n", "output": "-1\n"}],
    validator=PAIR_VALIDATOR, judge=PAIR_JUDGE, brute=PAIR_BRUTE, second_brute=PAIR_SECOND, efficient=PAIR_FAST,
    edges=PAIR_EDGES, maximum=PAIR_MAX,
    candidates={
        "hash": ("python3", PAIR_FAST, "AC"),
        "two_pointers": ("python3", PAIR_TWO_POINTERS, "AC"),
        "pairs_with_itself": ("python3", PAIR_SELF, "WA"),
        "distinct_values_only": ("python3", PAIR_DISTINCT, "WA"),
        "reversed": ("python3", PAIR_REVERSED, "WA"),
        "values_not_indices": ("python3", PAIR_VALUES, "WA"),
        "quadratic": ("python3", PAIR_SLOW, "TLE"),
    },
    subtly_wrong_brute=PAIR_SUBTLE_BRUTE, sample_failing_brute=PAIR_SELF,
    pairs=[("2 4\n2 2\n", "1 2\n"), ("2 8\n3 4\n", "-1\n"), ("3 10\n5 1 2\n", "-1\n"), ("3 5\n1 4 9\n", "1 2\n"),
           ("4 3\n1 5 5 2\n", "1 4\n"), ("3 2000000000\n1000000000 1 1000000000\n", "1 3\n")],
    # the judging function accepts any right pair whatever the reference pair: only a wrong "-1" or a
    # pair where there is none is a wrong output here
    wrong_pair=("2 8\n3 4\n", "1 2\n"),
)


# -- 4. a string problem: overlapping occurrences ----------------------------------------------

OCC_VALIDATOR = '''
import re


def validate_input(input_str):
    lines = input_str.split("\\n")
    if len(lines) != 3 or lines[2] != "":
        return False
    s, t = lines[0], lines[1]
    return (re.fullmatch("[a-z]+", s) is not None and re.fullmatch("[a-z]+", t) is not None
            and len(t) <= len(s) <= 200000)
'''

OCC_BRUTE = '''
s = input()
t = input()
print(sum(1 for i in range(len(s)) if s[i:i + len(t)] == t))
'''

OCC_SECOND = '''
s = input()
t = input()
count = 0
for i in range(len(s) - len(t) + 1):
    if all(s[i + k] == t[k] for k in range(len(t))):
        count += 1
print(count)
'''

OCC_KMP = '''
import sys
s, t = sys.stdin.read().split()
m = len(t)
fail = [0] * m
k = 0
for i in range(1, m):
    while k and t[i] != t[k]:
        k = fail[k - 1]
    if t[i] == t[k]:
        k += 1
    fail[i] = k
count = k = 0
for c in s:
    while k and c != t[k]:
        k = fail[k - 1]
    if c == t[k]:
        k += 1
    if k == m:
        count += 1
        k = fail[k - 1]
print(count)
'''

OCC_Z = '''
import sys
s, t = sys.stdin.read().split()
w = t + "#" + s
z = [0] * len(w)
lo = hi = 0
for i in range(1, len(w)):
    if i < hi:
        z[i] = min(hi - i, z[i - lo])
    while i + z[i] < len(w) and w[z[i]] == w[i + z[i]]:
        z[i] += 1
    if i + z[i] > hi:
        lo, hi = i, i + z[i]
print(sum(1 for v in z[len(t) + 1:] if v >= len(t)))
'''
OCC_COUNT = "s = input()\nt = input()\nprint(s.count(t))\n"
# Character by character at every position: right, and quadratic when t is long and matches often.
OCC_CHAR_LOOP = OCC_SECOND
OCC_FIND_LOOP = '''
s = input()
t = input()
count = 0
i = s.find(t)
while i != -1:
    count += 1
    i = s.find(t, i + 1)
print(count)
'''
# Counts with recursion: right, and a crash (RecursionError) once s is long.
OCC_RECURSIVE = '''
import sys
s, t = sys.stdin.read().split()


def count(i):
    if i > len(s) - len(t):
        return 0
    return (s.startswith(t, i)) + count(i + 1)


print(count(0))
'''
# Stops looking one position early.
OCC_SUBTLE_BRUTE = OCC_BRUTE.replace("range(len(s))", "range(len(s) - 1)")

OCC_EDGES = '''
import random


def _input(s, t):
    return f"{s}\\n{t}\\n"


def gen_edge_input_equal():
    s = "".join(random.choice("ab") for _ in range(random.randint(1, 5)))
    return _input(s, s)


def gen_edge_input_one_letter():
    return _input("a" * random.randint(1, 8), "a")


def gen_edge_input_self_overlap():
    return _input("a" * random.randint(4, 9), "aa")


def gen_edge_input_at_end():
    return _input("xyzab", "ab")


def gen_edge_input_absent():
    return _input("abcabc", "cba")


def gen_edge_input_periodic():
    return _input("abab" * random.randint(2, 4), "abab")


def gen_edge_input_single_char_text():
    return _input("z", "z")


def gen_edge_input_last_char_only():
    return _input("bbbba", "a")


def gen_edge_input_random():
    s = "".join(random.choice("ab") for _ in range(random.randint(3, 12)))
    return _input(s, "".join(random.choice("ab") for _ in range(random.randint(1, 3))))


def gen_edge_input_random_long_pattern():
    s = "".join(random.choice("abc") for _ in range(random.randint(5, 12)))
    return _input(s, s[1:4])
'''

OCC_MAX = '''
def gen_max_input():
    # one letter everywhere: every position matches and a naive comparison does the whole pattern each time
    return "a" * 200000 + "\\n" + "a" * 100000 + "\\n"
'''

OCC = Case(
    pid="hd/occ", title="Overlapping occurrences",
    statement=("Two lines hold strings $s$ and $t$ of lowercase letters, $1 \\le |t| \\le |s| \\le 2\\cdot 10^5$. "
               "Print how many positions $i$ there are where $t$ occurs in $s$ starting at $i$ (occurrences may "
               "overlap)."),
    samples=[{"input": "abababa\naba\n", "output": "3\n"}, {"input": "aaaa\nb\n", "output": "0\n"}],
    validator=OCC_VALIDATOR, brute=OCC_BRUTE, second_brute=OCC_SECOND, efficient=OCC_KMP,
    edges=OCC_EDGES, maximum=OCC_MAX,
    candidates={
        "kmp": ("python3", OCC_KMP, "AC"),
        "z_function": ("python3", OCC_Z, "AC"),
        "count_method": ("python3", OCC_COUNT, "WA"),
        "char_loop": ("python3", OCC_CHAR_LOOP, "TLE"),
        "find_loop": ("python3", OCC_FIND_LOOP, "TLE"),
        "recursive": ("python3", OCC_RECURSIVE, "RE"),
    },
    subtly_wrong_brute=OCC_SUBTLE_BRUTE, sample_failing_brute=OCC_COUNT,
    pairs=[("a\na\n", "1\n"), ("aaaa\naa\n", "3\n"), ("xyzab\nab\n", "1\n"), ("abcabc\ncba\n", "0\n"),
           ("abababab\nabab\n", "3\n"), ("bbbba\na\n", "1\n")],
)

CASES = {case.pid: case for case in (GAIN, AVG, PAIR, OCC)}
