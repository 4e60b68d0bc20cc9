"""Held-out probes of pipeline round 3 (#33): problems and scripted replies the round's tests never used.

Each probe varies one hazard class of the issue (real-number answers, generators that are not
reproducible, several right answers, refinement, reply quirks, kits). Loopback fake LLM, real
sandbox, real database; every probe asserts what a suite must do with a right and a wrong program.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from generation.models import FailureReason, GenerationRun, LLMCall, RefinementRound
from generation.refine.repair import probe
from problems.judging import judge_code
from problems.models import Solution, TestSuite
from problems.services import solution_upsert
from sandbox import get_sandbox
from tests.generation.conftest import VALIDATOR, FakeLLM, inputs_reply, make_problem, validator_reply
from tests.generation.test_round3 import (
    RIGHT_IN_RANGE,
    SMALL,
    WIDE_VALIDATOR,
    WIDENING,
    WRONG_BIG,
    make_kit,
    start,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_counts")]

FROM_KIT = GenerationRun.Mode.FROM_KIT


def verdict(problem, suite, code: str, language: str = "python3") -> str:
    return judge_code(problem=problem, suite=suite, language=language, code=code).verdict


def two_ints(lo: int, hi: int) -> str:
    return f'''
def validate_input(input_str):
    if not input_str.endswith("\\n"):
        return False
    parts = input_str[:-1].split(" ")
    if len(parts) != 2:
        return False
    for p in parts:
        q = p[1:] if p.startswith("-") else p
        if not q.isdigit() or (q != "0" and q[0] == "0") or p == "-0":
            return False
        if not {lo} <= int(p) <= {hi}:
            return False
    return True
'''


def one_int(lo: int, hi: int) -> str:
    return f'''
def validate_input(input_str):
    if not input_str.endswith("\\n"):
        return False
    s = input_str[:-1]
    if not s.isdigit() or s[0] == "0":
        return False
    return {lo} <= int(s) <= {hi}
'''


def pair_gen(lo: int, hi: int) -> str:
    return f'''
import random


def gen_range_based_input():
    return f"{{random.randint({lo}, {hi})}} {{random.randint({lo}, {hi})}}\\n"
'''


def single_gen(lo: int, hi: int) -> str:
    return f'''
import random


def gen_range_based_input():
    return f"{{random.randint({lo}, {hi})}}\\n"
'''


def with_problem(pid: str, statement: str, samples: list[dict], oracles: list[tuple[str, str]]):
    problem = make_problem(pid, oracles=oracles)
    problem.statement = statement
    problem.samples = samples
    problem.save()
    return problem


# == real-number answers =====================================================================

INV_PY = "n = int(input())\nprint(f'{1 / n:.6e}')\n"
INV_CPP = "#include <cstdio>\nint main(){long long n;scanf(\"%lld\",&n);printf(\"%.12f\\n\",1.0/n);}\n"


def test_probe_scientific_notation_oracle_agrees_with_a_fixed_point_one(fake_llm: FakeLLM) -> None:
    """1.000000e-07 against 0.000000100000; statement bound written 1e-6."""
    problem = with_problem("probe/inverse", "Print $1/n$. Answers with an absolute or relative error of at most "
                           "1e-6 are accepted.", [{"input": "4\n", "output": "0.25\n"}],
                           [("python3", INV_PY), ("cpp", INV_CPP)])
    fake_llm.reply(validator_reply(one_int(1, 10**7)),
                   inputs_reply(direct=["1\n", "3\n", "10000000\n"], regular=single_gen(1, 10**7), hacking=None))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert verdict(problem, run.suite, "n = int(input())\nprint(1 / n)\n") == "AC"
    assert verdict(problem, run.suite, "n = int(input())\nprint(1.001 / n)\n") == "WA"


NEG_CPP = ("#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);double r=-(double)a*b/1000.0;"
           "printf(\"%.6f\\n\",r);}\n")
NEG_PY = "a, b = map(int, input().split())\nr = -a * b / 1000\nprint(int(r) if r == int(r) else repr(r))\n"


def test_probe_negative_zero_and_integer_looking_reals(fake_llm: FakeLLM) -> None:
    """-0.000000 against 0, -1000.000000 against -1000; bound written $10^{-9}$."""
    problem = with_problem("probe/negzero", "Print $-ab/1000$. Your answer is considered correct if its absolute "
                           "or relative error does not exceed $10^{-9}$.", [{"input": "0 5\n", "output": "0\n"}],
                           [("cpp", NEG_CPP), ("python3", NEG_PY)])
    fake_llm.reply(validator_reply(two_ints(-1000, 1000)),
                   inputs_reply(direct=["0 5\n", "1000 1000\n", "-7 3\n", "3 0\n"], regular=pair_gen(-1000, 1000),
                                hacking=None))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert verdict(problem, run.suite, "a, b = map(int, input().split())\nprint('%.3f' % (-a * b / 1000))\n") == "AC"
    assert verdict(problem, run.suite,
                   "a, b = map(int, input().split())\nprint('%.6f' % (-a * b / 1000 + 1e-4))\n") == "WA"


ROUND_CPP = ("#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);"
             "printf(\"%.0f\\n\",-(double)a*b/1000.0);}\n")
ROUND_PY = "a, b = map(int, input().split())\nprint(round(-a * b / 1000))\n"


def test_probe_negative_zero_printed_as_an_integer_is_zero(fake_llm: FakeLLM) -> None:
    """printf("%.0f") prints -0 where Python prints 0: two integers, equal as integers."""
    problem = with_problem("probe/roundzero", "Print $-ab/1000$ rounded to an integer. Answers with an absolute or "
                           "relative error of at most $10^{-6}$ are accepted.", [{"input": "1 1\n", "output": "0\n"}],
                           [("cpp", ROUND_CPP), ("python3", ROUND_PY)])
    fake_llm.reply(validator_reply(two_ints(-5, 5)),
                   inputs_reply(direct=["1 1\n", "-1 1\n", "0 3\n", "5 -5\n"], regular=pair_gen(-5, 5), hacking=None))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, (run.failure_reason, run.error)
    assert "oracle1 (rank 1): passes" in run.log and run.suite.test_count >= 4
    assert verdict(problem, run.suite, ROUND_PY) == "AC"
    assert verdict(problem, run.suite, "a, b = map(int, input().split())\nprint(1)\n") == "WA"


def test_the_standard_judge_in_the_sandbox_and_the_pipeline_compare_alike() -> None:
    from generation.materialise.oracles import Checker
    from generation.materialise.tolerance import Tolerance, tolerance_judge_code, within_tolerance

    big = "1" + "0" * 5000  # past int()'s 4300-digit limit
    cases = [("0", "-0"), ("-0.000000", "0.000000"), ("3", "3.000000"), ("1e-07", "0.0000001"), (big, "+" + big),
             (big, big[:-1] + "1"), ("1000000000", "1000000001"), ("1000000000.5", "1000000000"),
             ("0.5\n0.25", "0.5000001 0.25"), ("1", "nan"), ("1", "inf"), ("2", "2 3")]
    for tolerance in (Tolerance(1e-6), Tolerance(1e-6, relative=False)):
        judge = Checker(tolerance_judge_code(tolerance))
        triples = [("", cand.encode(), ref.encode()) for ref, cand in cases]
        sandboxed = [ok for ok, _ in judge.accepts(get_sandbox(), triples)]
        assert sandboxed == [within_tolerance(ref, cand, tolerance) for ref, cand in cases], tolerance
        assert sandboxed[:6] == [True, True, True, True, True, False]
    assert within_tolerance("1000000000", "1000000000.5", Tolerance(1e-6))
    assert not within_tolerance("1000000000", "1000000000.5", Tolerance(1e-6, relative=False))


HALF_PY = "a, b = map(int, input().split())\nprint(f'{a / b:.9f}')\nprint(f'{b / a:.9f}')\n"
HALF_CPP = ("#include <cstdio>\nint main(){double a,b;scanf(\"%lf %lf\",&a,&b);printf(\"%.12f\\n%.12f\\n\",a/b,b/a);}\n")


def test_probe_bound_phrased_as_differ_by_at_most_multiline_from_kit() -> None:
    """No "error"/"tolerance" word: "may differ from the exact value by at most 10^{-6}"; sample "0.5\\n2"."""
    problem = with_problem("probe/halves", "Print two lines: $a/b$ and $b/a$. Each printed value may differ from "
                           "the exact value by at most $10^{-6}$.", [{"input": "1 2\n", "output": "0.5\n2\n"}],
                           [("python3", HALF_PY), ("cpp", HALF_CPP)])
    make_kit(problem, validator=two_ints(1, 1000), regular=pair_gen(1, 1000), direct=["1 3\n", "7 9\n"])
    run = start(problem, FROM_KIT)
    assert run.status == GenerationRun.Status.SUCCEEDED, (run.failure_reason, run.error)
    assert verdict(problem, run.suite, "a, b = map(int, input().split())\nprint(a / b)\nprint(b / a)\n") == "AC"
    assert verdict(problem, run.suite,
                   "a, b = map(int, input().split())\nprint(a / b + 1e-4)\nprint(b / a)\n") == "WA"


GEO_PY = "import math\na, b = map(int, input().split())\nprint(f'{math.sqrt(a * b):.9f}')\n"
GEO_CPP = ("#include <cstdio>\n#include <cmath>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);"
           "long double r=sqrtl((long double)a*b);printf(\"%.9Lf\\n\",r);}\n")
# Single precision: relative error ~6e-8, absolute error up to ~30 on answers near 1e9.
GEO_FLOAT32 = ("import math, struct\na, b = map(int, input().split())\n"
               "r = struct.unpack('f', struct.pack('f', math.sqrt(a * b)))[0]\nprint(f'{r:.9f}')\n")


def test_probe_an_absolute_only_bound_is_not_applied_relatively() -> None:
    problem = with_problem("probe/geomean", "Print $\\sqrt{ab}$. The answer must have an absolute error of at "
                           "most $10^{-6}$.", [{"input": "4 9\n", "output": "6.000000000\n"}],
                           [("python3", GEO_PY), ("cpp", GEO_CPP)])
    make_kit(problem, validator=two_ints(1, 10**9), regular=pair_gen(10**8, 10**9),
             direct=["1 1\n", "999999937 999999929\n"])
    run = start(problem, FROM_KIT)
    assert run.status == GenerationRun.Status.SUCCEEDED, (run.failure_reason, run.error)
    assert verdict(problem, run.suite, GEO_PY.replace(":.9f", ":.12f")) == "AC"
    assert verdict(problem, run.suite, GEO_FLOAT32) == "WA"


ROOTS_VALIDATOR = r'''
import re


def validate_input(input_str):
    m = re.fullmatch(r"(\d{1,7})\.(\d\d) (\d{1,7})\.(\d\d)\n", input_str)
    if not m:
        return False
    x, y = float(m.group(1) + "." + m.group(2)), float(m.group(3) + "." + m.group(4))
    return 0.01 <= x <= 10**6 and 0.01 <= y <= 10**6
'''
ROOTS_GEN = '''
import random


def gen_range_based_input():
    return f"{random.randint(1, 10**8) / 100:.2f} {random.randint(1, 10**8) / 100:.2f}\\n"
'''
ROOTS_PY = "import math\nx, y = map(float, input().split())\nprint(f'{math.sqrt(x) + math.sqrt(y):.12f}')\n"
ROOTS_CPP = ("#include <cstdio>\n#include <cmath>\nint main(){double x,y;scanf(\"%lf %lf\",&x,&y);"
             "printf(\"%.12f\\n\",sqrt(x)+sqrt(y));}\n")
ROOTS_FLOAT32 = ("import math, struct\nx, y = map(float, input().split())\n"
                 "r = struct.unpack('f', struct.pack('f', math.sqrt(x) + math.sqrt(y)))[0]\nprint(f'{r:.12f}')\n")


def test_probe_another_power_of_ten_near_the_bound_does_not_loosen_it() -> None:
    problem = with_problem("probe/roots", "The numbers $x$ and $y$ are given with two digits after the decimal "
                           "point (multiples of $10^{-2}$). Print $\\sqrt{x}+\\sqrt{y}$; the answer is accepted if "
                           "its absolute or relative error does not exceed $10^{-9}$.",
                           [{"input": "4.00 9.00\n", "output": "5.000000000000\n"}],
                           [("python3", ROOTS_PY), ("cpp", ROOTS_CPP)])
    make_kit(problem, validator=ROOTS_VALIDATOR, regular=ROOTS_GEN, direct=["2.00 3.00\n", "999999.99 0.01\n"])
    run = start(problem, FROM_KIT)
    assert run.status == GenerationRun.Status.SUCCEEDED, (run.failure_reason, run.error)
    assert verdict(problem, run.suite, ROOTS_PY.replace(":.12f", ":.15f")) == "AC"
    assert verdict(problem, run.suite, ROOTS_FLOAT32) == "WA"


PRODUCT_PY = "a, b = map(int, input().split())\nprint(a * b)\n"
PRODUCT_CPP = ("#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a*b);}\n")


def test_probe_integer_answers_are_never_compared_with_a_tolerance(fake_llm: FakeLLM) -> None:
    """Story words ("tolerance", "precision of") in an integer problem: a float-printed answer and answers off
    by one stay wrong."""
    problem = with_problem("probe/load", "A crane has a load tolerance printed on its side, and the engineers "
                           "measure with a precision of one ton. Print the product $a \\cdot b$ "
                           "($1 \\le a, b \\le 10^9$).", [{"input": "2 3\n", "output": "6\n"}],
                           [("python3", PRODUCT_PY), ("cpp", PRODUCT_CPP)])
    fake_llm.reply(validator_reply(two_ints(1, 10**9)),
                   inputs_reply(direct=["2 3\n", "999999999 999999998\n"], regular=pair_gen(1, 10**9), hacking=None))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    suite = run.suite
    assert verdict(problem, suite, "a, b = map(int, input().split())\nprint(a * b / 1)\n") == "WA"
    assert verdict(problem, suite, "a, b = map(int, input().split())\nprint(a * b + 1)\n") == "WA"
    assert verdict(problem, suite, "a, b = map(int, input().split())\nprint(a * b - 1)\n") == "WA"
    assert verdict(problem, suite, PRODUCT_PY) == "AC"


# == generators that are not reproducible ========================================================

UNREPRODUCIBLE = {
    "gen_hacking_input_tick": "import random, time\n\ndef gen_hacking_input_tick():\n"
                              "    rng = random.Random(int(time.time()))\n"
                              "    return f\"{rng.randint(0, 10**9)} {rng.randint(0, 10**9)}\\n\"\n",
    "gen_hacking_input_daily": "import datetime, random\n\ndef gen_hacking_input_daily():\n"
                               "    rng = random.Random(datetime.date.today().toordinal())\n"
                               "    return f\"{rng.randint(0, 10**9)} {rng.randint(0, 10**9)}\\n\"\n",
    "gen_hacking_input_system": "import random\n\ndef gen_hacking_input_system():\n"
                                "    rng = random.SystemRandom()\n"
                                "    return f\"{rng.randint(0, 10**9)} {rng.randint(0, 10**9)}\\n\"\n",
    "gen_hacking_input_uuid": "import uuid\n\ndef gen_hacking_input_uuid():\n"
                              "    return f\"{uuid.uuid4().int % 10**9} 1\\n\"\n",
    "gen_hacking_input_devrandom": "def gen_hacking_input_devrandom():\n"
                                   "    with open('/dev/urandom', 'rb') as f:\n"
                                   "        x = int.from_bytes(f.read(4), 'big') % 10**9\n"
                                   "    return f\"{x} 2\\n\"\n",
    "gen_hacking_input_ident": "import random\n\ndef gen_hacking_input_ident():\n"
                               "    rng = random.Random(id(object()) ^ hash(object()))\n"
                               "    return f\"{rng.randint(0, 10**9)} 3\\n\"\n",
}
DETERMINISTIC = {
    # dict built from a set of strings, hash() of a string: fixed by the pipeline's hash seed
    "gen_hacking_input_setdict": "import random\n\ndef gen_hacking_input_setdict():\n"
                                 "    words = {f'w{random.randint(0, 50)}' for _ in range(20)}\n"
                                 "    d = dict.fromkeys(words, 1)\n"
                                 "    first = next(iter(d))\n"
                                 "    return f\"{hash(first) % 1000 + 1000} {len(d)}\\n\"\n",
    # module state across calls, and the clock used only to measure elapsed time
    "gen_hacking_input_counter": "import random, time\n_calls = 0\n\ndef gen_hacking_input_counter():\n"
                                 "    global _calls\n    _calls += 1\n    started = time.time()\n"
                                 "    x = random.randint(0, 10**6) + _calls\n"
                                 "    assert time.time() - started < 60\n"
                                 "    return f\"{x} {_calls}\\n\"\n",
}


def test_probe_every_unreproducible_generator_is_named_and_no_deterministic_one_is() -> None:
    problem = make_problem("probe/repro")
    code = "\n\n".join(list(UNREPRODUCIBLE.values()) + list(DETERMINISTIC.values()))
    make_kit(problem, hacking=code)
    run = start(problem, FROM_KIT)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    flagged = {name for name in {**UNREPRODUCIBLE, **DETERMINISTIC} if f"{name} is not reproducible" in run.log}
    assert flagged == set(UNREPRODUCIBLE), f"missed {set(UNREPRODUCIBLE) - flagged}, wrongly {flagged - set(UNREPRODUCIBLE)}"
    kept = set(run.suite.tests.values_list("generator", flat=True))
    assert set(DETERMINISTIC) <= kept and not kept & set(UNREPRODUCIBLE)
    again = start(problem, FROM_KIT)
    assert again.status == GenerationRun.Status.SUCCEEDED and "nothing changed" in again.log, again.log[-2000:]


# == several right answers ===================================================================

DERANGE_A = "n = int(input())\nprint(*range(2, n + 1), 1)\n"
DERANGE_B = ("n = int(input())\np = list(range(1, n + 1))\nfor i in range(0, n - 1, 2):\n"
             "    p[i], p[i + 1] = p[i + 1], p[i]\nif n % 2:\n    p[-1], p[-2] = p[-2], p[-1]\nprint(*p)\n")
DERANGE_JUDGE = '''
def output_judging_function(input_str, candidate_output, reference_output):
    n = int(input_str.split()[0])
    try:
        p = [int(x) for x in candidate_output.split()]
    except ValueError:
        return False
    return sorted(p) == list(range(1, n + 1)) and all(v != i for i, v in enumerate(p, 1))
'''


def test_probe_any_derangement_gets_a_judging_function(fake_llm: FakeLLM) -> None:
    problem = with_problem("probe/derange", "Print any permutation $p$ of $1..n$ with $p_i \\ne i$ for every "
                           "$i$ ($2 \\le n \\le 50$).", [{"input": "2\n", "output": "2 1\n"}],
                           [("python3", DERANGE_A), ("python3", DERANGE_B)])
    fake_llm.reply(validator_reply(one_int(2, 50)),
                   inputs_reply(direct=["2\n", "3\n", "50\n"], regular=single_gen(2, 50), hacking=None),
                   validator_reply(one_int(2, 50), needs=True, judge=DERANGE_JUDGE))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert LLMCall.objects.filter(run=run, purpose="judge_request").exists()
    reverse = "n = int(input())\np = list(range(n, 0, -1))\nif n % 2:\n    p[n // 2], p[0] = p[0], p[n // 2]\nprint(*p)\n"
    assert verdict(problem, run.suite, reverse) == "AC"
    assert verdict(problem, run.suite, "n = int(input())\nprint(*range(1, n + 1))\n") == "WA"


EVEN_A = "n = int(input())\nif n % 2 or n < 4:\n    print('NO')\nelse:\n    print('YES')\n    print(2, n - 2)\n"
EVEN_B = ("n = int(input())\nif n % 2 or n < 4:\n    print('NO')\nelse:\n    a = n // 2 if (n // 2) % 2 == 0 else n // 2 - 1\n"
          "    print('YES')\n    print(a, n - a)\n")
EVEN_JUDGE = '''
def output_judging_function(input_str, candidate_output, reference_output):
    n = int(input_str.split()[0])
    got, want = candidate_output.split(), reference_output.split()
    if not got or got[0] != want[0]:
        return False
    if got[0] == "NO":
        return len(got) == 1
    if len(got) != 3:
        return False
    try:
        a, b = int(got[1]), int(got[2])
    except ValueError:
        return False
    return a > 0 and b > 0 and a % 2 == 0 and b % 2 == 0 and a + b == n
'''
EVEN_GEN = '''
import random


def gen_range_based_input():
    return f"{random.randint(2, 500000) * 2}\\n"
'''


def test_probe_yes_with_a_witness_where_one_oracle_prints_another_witness_than_the_sample(fake_llm: FakeLLM) -> None:
    problem = with_problem("probe/evensum", "Can $n$ be written as the sum of two positive even numbers? Print "
                           "YES and any such pair, or NO ($1 \\le n \\le 10^6$).",
                           [{"input": "8\n", "output": "YES\n2 6\n"}, {"input": "3\n", "output": "NO\n"}],
                           [("python3", EVEN_A), ("python3", EVEN_B)])
    fake_llm.reply(validator_reply(one_int(1, 10**6)),
                   inputs_reply(direct=["8\n", "3\n", "1000000\n", "4\n"], regular=EVEN_GEN, hacking=None),
                   validator_reply(one_int(1, 10**6), needs=True, judge=EVEN_JUDGE))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, (run.failure_reason, run.error)
    assert LLMCall.objects.filter(run=run, purpose="judge_request").exists()
    assert verdict(problem, run.suite, EVEN_B) == "AC"
    assert verdict(problem, run.suite, EVEN_A.replace("print(2, n - 2)", "print(1, n - 1)")) == "WA"


DIV_SMALL = ("n = int(input())\nd = next((k for k in range(2, int(n ** 0.5) + 1) if n % k == 0), 0)\n"
             "print(f'YES\\n{d}' if d else 'NO')\n")
DIV_LARGE = DIV_SMALL.replace("f'YES\\n{d}'", "f'YES\\n{n // d}'")
DIV_GEN = '''
import random


def gen_range_based_input():
    n = random.randint(2, 10**6)
    if random.random() < 0.67:  # mostly primes, where the answer is unique ("NO")
        while any(n % k == 0 for k in range(2, int(n ** 0.5) + 1)):
            n += 1
    return f"{n}\\n"
'''
DIV_JUDGE = '''
def output_judging_function(input_str, candidate_output, reference_output):
    n = int(input_str.split()[0])
    got, want = candidate_output.split(), reference_output.split()
    if not got or got[0] != want[0]:
        return False
    if got[0] == "NO":
        return len(got) == 1
    if len(got) != 2 or not got[1].isdigit():
        return False
    d = int(got[1])
    return 1 < d < n and n % d == 0
'''


def test_probe_another_divisor_on_a_third_of_the_inputs_gets_a_judging_function(fake_llm: FakeLLM, settings) -> None:
    """Agreement between 50% and 90% (primes agree, composites print another divisor): asked before failing.
    48 calls: the seeds follow the problem's id, and with 12 one id in fifty gave all primes."""
    settings.HARDTESTS_REGULAR_CALLS = 48
    problem = with_problem("probe/divisor", "Print YES and any divisor $d$ of $n$ with $1 < d < n$, or NO when there "
                           "is none ($2 \\le n \\le 10^6$).",
                           [{"input": "12\n", "output": "YES\n2\n"}, {"input": "7\n", "output": "NO\n"}],
                           [("python3", DIV_SMALL), ("python3", DIV_LARGE)])
    fake_llm.reply(validator_reply(one_int(2, 10**6)),
                   inputs_reply(direct=["12\n", "7\n", "999983\n"], regular=DIV_GEN, hacking=None),
                   validator_reply(one_int(2, 10**6), needs=True, judge=DIV_JUDGE))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, (run.failure_reason, run.error)
    assert LLMCall.objects.filter(run=run, purpose="judge_request").exists()
    assert "another witness" in run.log
    assert verdict(problem, run.suite, DIV_LARGE) == "AC"
    assert verdict(problem, run.suite, DIV_SMALL.replace("if d else 'NO'", "if d else 'YES\\n1'")) == "WA"


OVERFLOW_CPP = "#include <cstdio>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",a*b);}\n"
LENIENT = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
           "    return candidate_output.strip().lstrip('-').isdigit()\n")


def test_probe_a_real_oracle_bug_is_not_papered_over_by_a_lenient_judge(fake_llm: FakeLLM) -> None:
    problem = with_problem("probe/overflow", "Print $a \\cdot b$ ($0 \\le a, b \\le 10^9$).",
                           [{"input": "2 3\n", "output": "6\n"}], [("python3", PRODUCT_PY), ("cpp", OVERFLOW_CPP)])
    fake_llm.reply(validator_reply(), inputs_reply(direct=["2 3\n", "100000 100000\n"], hacking=None),
                   validator_reply(needs=True, judge=LENIENT), validator_reply(needs=True, judge=LENIENT))
    run = start(problem)
    assert run.status == GenerationRun.Status.FAILED, "a lenient judge papered over an oracle bug"
    assert run.failure_reason == FailureReason.JUDGE_INVALID and "printed for OTHER inputs" in run.error
    assert not TestSuite.objects.filter(problem=problem, status=TestSuite.Status.ACTIVE).exists()


def test_probe_a_model_that_says_the_answer_is_unique_stops_the_run_as_oracles_disagreeing(fake_llm: FakeLLM) -> None:
    problem = with_problem("probe/overflow2", "Print $a \\cdot b$ ($0 \\le a, b \\le 10^9$).",
                           [{"input": "2 3\n", "output": "6\n"}], [("python3", PRODUCT_PY), ("cpp", OVERFLOW_CPP)])
    fake_llm.reply(validator_reply(), inputs_reply(direct=["2 3\n", "100000 100000\n"], hacking=None),
                   validator_reply())
    run = start(problem)
    assert run.status == GenerationRun.Status.FAILED
    assert run.failure_reason == FailureReason.OUTPUT_VERIFICATION_FAILED and "answer is unique" in run.error
    prompt = LLMCall.objects.get(run=run, purpose="judge_request").messages[-1]["content"]
    assert "one of the programs is wrong" in prompt and len(fake_llm.requests) == 3


SPAN_VALIDATOR = '''
def validate_input(input_str):
    parts = input_str.split()
    if len(parts) != 2 or not input_str.endswith("\\n") or not all(p.isdigit() for p in parts):
        return False
    a, b = map(int, parts)
    return 0 <= a <= b <= 1000
'''
SPAN_GEN = '''
import random


def gen_range_based_input():
    a = random.randint(0, 999)
    return f"{a} {random.randint(a + 1, 1000)}\\n"
'''
SPAN_LOW = "a, b = map(int, input().split())\nprint(f'{a:.6f}')\n"
SPAN_HIGH = "a, b = map(int, input().split())\nprint(f'{b:.6f}')\n"
SPAN_JUDGE = '''
def output_judging_function(input_str, candidate_output, reference_output):
    a, b = map(int, input_str.split())
    try:
        x = float(candidate_output.strip())
    except ValueError:
        return False
    return a - 1e-6 <= x <= b + 1e-6
'''


def test_probe_several_right_real_answers_get_a_judging_function(fake_llm: FakeLLM) -> None:
    problem = with_problem("probe/span", "Print any real number $x$ with $a \\le x \\le b$. A value outside the "
                           "interval by an absolute or relative error of at most $10^{-6}$ is accepted.",
                           [{"input": "2 2\n", "output": "2.000000\n"}], [("python3", SPAN_LOW), ("python3", SPAN_HIGH)])
    fake_llm.reply(validator_reply(SPAN_VALIDATOR),
                   inputs_reply(direct=["2 2\n", "0 1000\n", "5 9\n"], regular=SPAN_GEN, hacking=None),
                   validator_reply(SPAN_VALIDATOR, needs=True, judge=SPAN_JUDGE))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, (run.failure_reason, run.error)
    assert LLMCall.objects.filter(run=run, purpose="judge_request").exists()
    assert verdict(problem, run.suite, "a, b = map(int, input().split())\nprint((a + b) / 2)\n") == "AC"
    assert verdict(problem, run.suite, "a, b = map(int, input().split())\nprint(b + 1)\n") == "WA"


# A judge as models write it: a parse error counts as a right answer.
FORGIVING = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
             "    try:\n        return int(candidate_output.split()[0]) == int(reference_output.split()[0])\n"
             "    except Exception:\n        return True\n")
# reads every token (an extra one is no answer: round 4's hostile-output check sends back a judge
# that accepts one with no reason the statement gives)
STRICT_INT = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
              "    try:\n        return [int(t) for t in candidate_output.split()] == "
              "[int(t) for t in reference_output.split()]\n"
              "    except Exception:\n        return False\n")


def test_probe_a_judge_that_accepts_anything_unparsable_is_sent_back(fake_llm: FakeLLM) -> None:
    problem = make_problem("probe/forgiving")
    fake_llm.reply(validator_reply(needs=True, judge=FORGIVING), inputs_reply(direct=["1 2\n", "5 7\n"]),
                   validator_reply(needs=True, judge=STRICT_INT))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert "judging function sent back: output_judging_function accepts an output that is no answer" in run.log
    assert verdict(problem, run.suite, "print('oops')\n") == "WA"
    assert verdict(problem, run.suite, "a, b = map(int, input().split())\nprint(a + b)\n") == "AC"
    assert verdict(problem, run.suite, "a, b = map(int, input().split())\nprint(a + b, 'extra')\n") == "WA"


def test_probe_an_imported_judge_that_accepts_anything_fails_a_run_from_the_kit() -> None:
    problem = make_problem("probe/forgiving-kit")
    make_kit(problem, judge=FORGIVING, direct=["1 2\n", "3 4\n"])
    run = start(problem, FROM_KIT)
    assert run.status == GenerationRun.Status.FAILED and run.failure_reason == FailureReason.JUDGE_INVALID, run.error
    assert "no answer at all" in run.error


ABSENT_VALIDATOR = '''
def validate_input(input_str):
    lines = input_str.split("\\n")
    if len(lines) != 3 or lines[2] != "" or not lines[0].isdigit():
        return False
    n = int(lines[0])
    xs = lines[1].split()
    return 1 <= n <= 20 and len(xs) == n and all(x.isdigit() and 1 <= int(x) <= 30 for x in xs)
'''
ABSENT_GEN = '''
import random


def gen_range_based_input():
    n = random.randint(1, 20)
    return f"{n}\\n{' '.join(str(random.randint(1, 30)) for _ in range(n))}\\n"
'''
ABSENT_MEX = "input()\nxs = set(map(int, input().split()))\nx = 1\nwhile x in xs:\n    x += 1\nprint(x)\n"
ABSENT_MAX = "input()\nprint(max(map(int, input().split())) + 1)\n"
ABSENT_JUDGE = '''
def output_judging_function(input_str, candidate_output, reference_output):
    xs = set(map(int, input_str.split()[1:]))
    parts = candidate_output.split()
    if len(parts) != 1 or not parts[0].isdigit():
        return False
    x = int(parts[0])
    return 1 <= x <= 10**9 and x not in xs
'''


def test_probe_a_judge_that_rightly_accepts_most_answers_of_other_inputs_is_kept(fake_llm: FakeLLM) -> None:
    problem = with_problem("probe/absent", "Print any positive integer $x \\le 10^9$ that is not in the list.",
                           [{"input": "3\n1 2 4\n", "output": "3\n"}], [("python3", ABSENT_MEX), ("python3", ABSENT_MAX)])
    problem.samples = [{"input": "3\n1 2 3\n", "output": "4\n"}]  # both oracles print 4
    problem.save()
    fake_llm.reply(validator_reply(ABSENT_VALIDATOR, needs=True, judge=ABSENT_JUDGE),
                   inputs_reply(direct=["3\n1 2 3\n", "1\n5\n"], regular=ABSENT_GEN, hacking=None))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, (run.failure_reason, run.error)
    assert "sent back" not in run.log
    assert verdict(problem, run.suite, "input()\nprint(31)\n") == "AC"
    assert verdict(problem, run.suite, "input()\nprint(input().split()[0])\n") == "WA"


# == refinement ==============================================================================


def _refine_candidates(problem) -> None:
    for name, code, gold in (("right", RIGHT_IN_RANGE, "AC"), ("off-by-one", WRONG_BIG, "WA")):
        solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3", code=code, name=name,
                        gold_verdict=gold)


NARROW = {"input_validator": VALIDATOR, "needs_custom_output_judging_function": False,
          "output_judging_function": None, "LLMGen_input": None, "RPGen_SPGen_input_generator": None,
          "HackGen_input_generator": "def gen_hacking_input_big_a():\n    return '999999999 1\\n'\n"}


def test_probe_a_round_that_stops_failing_a_correct_program_wins_over_round_zero(fake_llm: FakeLLM,
                                                                                 settings) -> None:
    settings.HARDTESTS_REFINE_MAX_ROUNDS = 2
    problem = make_problem("probe/refine-fix")
    _refine_candidates(problem)
    fake_llm.reply(validator_reply(WIDE_VALIDATOR),
                   inputs_reply(direct=["1 2\n", "5 7\n"], regular=SMALL, hacking=WIDENING),
                   "Negative inputs are out of range.\n```json\n" + json.dumps(NARROW) + "\n```")
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    r0, r1 = RefinementRound.objects.filter(run=run).order_by("number")
    assert r0.scores["tuning"]["fn"] == 1 and r1.scores["tuning"]["fn"] == 0 and r1.chosen and not r0.chosen
    assert "round 0 ruled out: known-correct program right" in run.log
    assert verdict(problem, run.suite, RIGHT_IN_RANGE) == "AC"


def test_probe_every_round_failing_a_correct_program_fails_the_run_naming_program_and_test(fake_llm: FakeLLM,
                                                                                          settings) -> None:
    settings.HARDTESTS_REFINE_MAX_ROUNDS = 1
    problem = make_problem("probe/refine-none")
    _refine_candidates(problem)
    only_regular = {"LLMGen_input": None, "RPGen_SPGen_input_generator": SMALL.replace("1000", "2000"),
                    "HackGen_input_generator": None, "input_validator": None,
                    "needs_custom_output_judging_function": False, "output_judging_function": None}
    fake_llm.reply(validator_reply(WIDE_VALIDATOR),
                   inputs_reply(direct=["1 2\n"], regular=SMALL, hacking=WIDENING),
                   "More range.\n```json\n" + json.dumps(only_regular) + "\n```")
    run = start(problem)
    assert run.status == GenerationRun.Status.FAILED
    assert run.failure_reason == FailureReason.CORRECT_PROGRAM_REJECTED
    assert "known-correct program right" in run.error and "on test #" in run.error
    assert not TestSuite.objects.filter(problem=problem, status=TestSuite.Status.ACTIVE).exists()


def _held_out_first(problem, codes: list[str]) -> list[str]:
    """Comment suffixes so that the first code sorts first in the split (the held-out side)."""
    def key(code: str) -> float:
        digest = hashlib.sha256(f"{problem.pid}\0python3\0{code}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64
    for salt in range(1000):
        first = codes[0] + f"# variant {salt}\n"
        if all(key(first) < key(c) for c in codes[1:]):
            return [first, *codes[1:]]
    raise AssertionError("no salt found")


def test_probe_a_held_out_correct_program_is_never_failed_by_an_active_suite() -> None:
    problem = make_problem("probe/heldout")
    safe = "a, b = map(int, input().split())\nprint(a + b)\n"
    asserting, safe = _held_out_first(problem, [RIGHT_IN_RANGE, safe])
    solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3", code=asserting,
                    name="right-held-out", gold_verdict="AC")
    solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3", code=safe, name="right-tuning",
                    gold_verdict="AC")
    for k in range(4):
        solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3",
                        code=f"a, b = map(int, input().split())\nprint(a + b + {k + 1})\n", name=f"wrong{k}",
                        gold_verdict="WA")
    from generation.refine.split import candidate_split
    assert [s.name for s in candidate_split(problem).held_out if s.gold_verdict == "AC"] == ["right-held-out"]
    make_kit(problem, validator=WIDE_VALIDATOR, hacking=WIDENING)
    run = start(problem, FROM_KIT)
    assert run.status == GenerationRun.Status.FAILED, "a suite failing a known-correct program was activated"
    assert run.failure_reason == FailureReason.CORRECT_PROGRAM_REJECTED and "right-held-out" in run.error


TOKENS_JUDGE = ("def output_judging_function(input_str, candidate_output, reference_output):\n"
                "    return candidate_output.split() == reference_output.split()\n")


def test_probe_a_refinement_that_changes_only_the_judge_keeps_every_input(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_REFINE_MAX_ROUNDS = 1
    problem = make_problem("probe/judge-only")
    # wrong only on an input no generator makes: a false positive that sends the suite to refinement
    sneaky = "a, b = map(int, input().split())\nprint(a + b + (a == 123456789 and b == 987654321))\n"
    for name, code, gold in (("right", "a, b = map(int, input().split())\nprint(a + b)\n", "AC"),
                             ("sneaky", sneaky, "WA")):
        solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3", code=code, name=name,
                        gold_verdict=gold)
    judge_only = {"input_validator": None, "needs_custom_output_judging_function": True,
                  "output_judging_function": TOKENS_JUDGE, "LLMGen_input": None, "RPGen_SPGen_input_generator": None,
                  "HackGen_input_generator": None}
    fake_llm.reply(validator_reply(), inputs_reply(direct=["1 2\n", "5 7\n"]),
                   "Compare tokens.\n```json\n" + json.dumps(judge_only) + "\n```")
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    r0, r1 = RefinementRound.objects.filter(run=run).order_by("number")
    assert r1.suite_id and r1.tests_added == 0 and r1.tests_removed == 0 and r1.test_count == r0.test_count


# == replies as models write them =============================================================


def test_probe_a_python_dict_reply_is_read_or_refused_clearly(fake_llm: FakeLLM) -> None:
    problem = make_problem("probe/pydict")
    first = ("Constraints are two integers.\n```python\n"
             + repr({"input_validator": VALIDATOR, "needs_custom_output_judging_function": False,
                     "output_judging_function": None}) + "\n```\n")
    fake_llm.reply(first, inputs_reply(direct=["1 2\n", "5 7\n"], hacking=None))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert len(fake_llm.requests) == 2


def test_probe_escaped_single_quotes_in_json_strings_are_read_without_a_retry(fake_llm: FakeLLM) -> None:
    problem = make_problem("probe/squote")
    code = ("def validate_input(input_str):\\n    parts = input_str.split(\\'\\\\n\\')\\n"
            "    if len(parts) != 2 or parts[1] != \\'\\':\\n        return False\\n"
            "    xs = parts[0].split(\\' \\')\\n"
            "    return len(xs) == 2 and all(x.isdigit() and int(x) <= 10**9 for x in xs)\\n")
    first = ('Two integers.\n```json\n{"input_validator": "' + code + '", '
             '"needs_custom_output_judging_function": false, "output_judging_function": null}\n```\n')
    fake_llm.reply(first, inputs_reply(direct=["1 2\n", "5 7\n"], hacking=None))
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert len(fake_llm.requests) == 2
    assert "split('\\n')" in run.kit.validator.code


def test_probe_comments_prose_and_a_draft_before_the_final_object(fake_llm: FakeLLM) -> None:
    problem = make_problem("probe/draft")
    draft = {"input_validator": "def validate_input(s):\n    return False\n",
             "needs_custom_output_judging_function": False, "output_judging_function": None}
    final = ('{\n  // the final answer\n  "input_validator": ' + json.dumps(VALIDATOR) + ',\n'
             '  /* unique answer */ "needs_custom_output_judging_function": false,\n'
             '  "output_judging_function": null,\n}')
    first = ("Draft:\n```json\n" + json.dumps(draft) + "\n```\nWait, that rejects everything. Final:\n```json\n"
             + final + "\n```\nThat is all.")
    second = (inputs_reply(direct=["1 2\n", "9 9\n"], hacking=None)
              + '\nFor reference, an input looks like:\n```json\n{"a": 1, "b": 2}\n```\n')
    fake_llm.reply(first, second)
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert len(fake_llm.requests) == 2 and run.kit.validator.code.strip() == VALIDATOR.strip()


def test_probe_a_reply_cut_off_twice_fails_clearly_with_the_next_step(fake_llm: FakeLLM) -> None:
    problem = make_problem("probe/cut")
    cut = validator_reply()[:120]
    fake_llm.truncated(cut).truncated(cut)
    run = start(problem)
    assert run.status == GenerationRun.Status.FAILED and run.failure_reason == FailureReason.LLM_REPLY_INVALID
    assert "cut off" in run.error and "HARDTESTS_LLM_MAX_TOKENS" in run.error


BROKEN_GEN = "def gen_hacking_input_broken():\n    return [1, 2][5]\n"


def test_probe_repair_stops_when_the_model_returns_the_same_code_with_a_comment(fake_llm: FakeLLM, settings) -> None:
    settings.HARDTESTS_REPAIR_ROUNDS = 3
    problem = make_problem("probe/repair-same")
    same = {"LLMGen_input": None, "RPGen_SPGen_input_generator": None,
            "HackGen_input_generator": "# fixed: index checked\ndef gen_hacking_input_broken():\n\n"
                                       "    return [1, 2][5]   # the last item\n"}
    fake_llm.reply(validator_reply(), inputs_reply(direct=["1 2\n"], hacking=BROKEN_GEN),
                   "Fixed.\n```json\n" + json.dumps(same) + "\n```", "Fixed.\n```json\n" + json.dumps(same) + "\n```")
    run = start(problem)
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert "returned the code unchanged; repair stopped" in run.log
    assert problem.kits.count() == 1 and LLMCall.objects.filter(run=run, purpose__startswith="repair").count() == 1


# == generator limits, named ====================================================================

LIMITS = '''
import time


def gen_hacking_input_huge_list():
    data = [0] * (10 ** 10)
    return f"{len(data)} 1\\n"


def gen_hacking_input_spin():
    while True:
        pass


def gen_hacking_input_nap():
    time.sleep(30)
    return "1 1\\n"
'''


def test_probe_memory_and_time_failures_of_generators_are_named(settings) -> None:
    settings.HARDTESTS_GENERATOR_MEMORY_MB = 128
    settings.HARDTESTS_GENERATOR_TIME_S = 1.0
    problem = make_problem("probe/limits")
    kit = make_kit(problem, hacking=LIMITS)
    broken = {b.function: b.why for b in probe(sb=get_sandbox(), kit=kit)}
    assert "exceeds the memory limit" in broken["gen_hacking_input_huge_list"], broken
    assert "exceeds the time limit" in broken["gen_hacking_input_spin"], broken
    assert "exceeds the time limit" in broken["gen_hacking_input_nap"], broken
