from __future__ import annotations

import pytest

from problems.judging import judge_code, solution_judge, suite_for_judging
from problems.models import TestSuite
from problems.services import NewTest, judge_create, suite_activate, suite_add_tests, suite_create
from tests.factories import ProblemFactory, SolutionFactory

pytestmark = pytest.mark.django_db

ADD = "a, b = map(int, input().split())\nprint(a + b)\n"


def _suite(problem, tests, origin=TestSuite.Origin.GENERATED, judge=None):
    suite = suite_create(problem=problem, origin=origin, output_judge=judge)
    suite_add_tests(suite=suite, tests=tests)
    return suite_activate(suite=suite)


def _add_tests():
    return [
        NewTest(input="1 2\n", output="3\n", kind="direct"),
        NewTest(input="5 5\n", output="10\n", kind="regular"),
        NewTest(input="2000000000 2000000000\n", output="4000000000\n", kind="hacking"),
    ]


def test_correct_program_is_accepted_with_hacking_tests_first():
    problem = ProblemFactory()
    suite = _suite(problem, _add_tests())
    result = judge_code(problem=problem, suite=suite, language="python3", code=ADD, mode="all")
    assert (result.verdict, result.passed, result.total, result.reward) == ("AC", 3, 3, 1)
    assert [t.kind for t in result.tests] == ["hacking", "regular", "direct"]


def test_fail_fast_stops_at_the_first_failure():
    problem = ProblemFactory()
    suite = _suite(problem, _add_tests())
    wrong = "print(3)\n"
    fast = judge_code(problem=problem, suite=suite, language="python3", code=wrong, mode="fail_fast")
    full = judge_code(problem=problem, suite=suite, language="python3", code=wrong, mode="all")
    assert fast.verdict == "WA" and len(fast.tests) == 1 and not fast.complete
    assert full.verdict == "WA" and len(full.tests) == 3 and full.passed == 1 and full.complete


def test_cpp_overflow_is_caught_by_the_hacking_test():
    problem = ProblemFactory()
    suite = _suite(problem, _add_tests())
    # Wraps explicitly: signed overflow would be undefined behaviour, which -O2 may "fix".
    code = "#include <cstdio>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",(int)((unsigned)a+(unsigned)b));}\n"
    result = judge_code(problem=problem, suite=suite, language="cpp", code=code, mode="all")
    assert result.verdict == "WA" and [t.verdict for t in result.tests] == ["WA", "AC", "AC"]


def test_compile_error_and_unsupported_language():
    problem = ProblemFactory()
    suite = _suite(problem, _add_tests())
    ce = judge_code(problem=problem, suite=suite, language="cpp", code="int main( {", mode="all")
    assert ce.verdict == "CE" and ce.message and ce.passed == 0
    py2 = judge_code(problem=problem, suite=suite, language="python2", code="print 1", mode="all")
    assert py2.verdict == "CE" and "unsupported" in py2.message


def test_time_limit_is_reported():
    problem = ProblemFactory(time_limit_ms=300)
    suite = _suite(problem, _add_tests()[:1])
    result = judge_code(problem=problem, suite=suite, language="python3", code="while True: pass\n", mode="all")
    assert result.verdict == "TLE"


def test_output_judging_function_runs_for_problems_with_many_answers():
    problem = ProblemFactory()
    judge = judge_create(
        problem=problem,
        origin="imported",
        code=(
            "def output_judging_function(input_str, candidate_output, reference_output):\n"
            "    n = int(input_str)\n"
            "    try:\n        a, b = map(int, candidate_output.split())\n    except ValueError:\n        return False\n"
            "    return a + b == n and a > 0 and b > 0\n"
        ),
    )
    suite = _suite(problem, [NewTest(input="10\n", output="1 9\n", kind="direct")], judge=judge)
    other = judge_code(problem=problem, suite=suite, language="python3", code="n=int(input());print(5, n-5)", mode="all")
    bad = judge_code(problem=problem, suite=suite, language="python3", code="print('x')", mode="all")
    assert other.verdict == "AC", other
    assert bad.verdict == "WA", bad


def test_suites_without_a_judge_use_the_problems_judging_function():
    from problems.services import kit_create

    problem = ProblemFactory()
    judge = judge_create(
        problem=problem,
        origin="llm",
        code="def output_judging_function(input_str, candidate_output, reference_output):\n"
        "    return sorted(candidate_output.split()) == sorted(reference_output.split())\n",
    )
    kit_create(problem=problem, origin="llm", validator=None, output_judge=judge)
    samples = _suite(problem, [NewTest(input="x\n", output="1 2\n", kind="public")], origin=TestSuite.Origin.PUBLIC)
    result = judge_code(problem=problem, suite=samples, language="python3", code="print(2, 1)", mode="all")
    assert result.verdict == "AC"


def test_suite_choice_prefers_generated_then_official_imported_public():
    problem = ProblemFactory()
    assert suite_for_judging(problem) is None
    public = _suite(problem, _add_tests(), origin=TestSuite.Origin.PUBLIC)
    assert suite_for_judging(problem) == public
    official = _suite(problem, _add_tests(), origin=TestSuite.Origin.OFFICIAL)
    assert suite_for_judging(problem) == official
    generated = _suite(problem, _add_tests())
    assert suite_for_judging(problem) == generated
    assert suite_for_judging(problem, origin="public") == public


def test_solution_judge_records_one_verdict_per_solution_and_suite():
    problem = ProblemFactory()
    suite = _suite(problem, _add_tests())
    solution = SolutionFactory(problem=problem, code=ADD)
    first = solution_judge(solution=solution, suite=suite)
    again = solution_judge(solution=solution, suite=suite)
    assert first.pk == again.pk and again.verdict == "AC" and len(again.results) == 3
