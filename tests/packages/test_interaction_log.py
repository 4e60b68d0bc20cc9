"""An interactive test's log travels with its result: the verification API returns it in
`tests[].interaction` (cut at INTERACTION_KEPT characters), and the verdict drill-down shows
the test's input, the log ("> " program to interactor, "< " back) and the verdict with the
interactor's message. The interactor here is Python, Kattis-style (42 accept, 43 reject)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from problems.judging import INTERACTION_KEPT, solution_judge
from problems.models import PackageJudge, Problem, Solution, TestSuite
from tests.api.conftest import AB_TESTS, GOOD, WRONG, api, make_suite, sandbox_worker, user  # noqa: F401
from tests.factories import SolutionFactory
from tests.web.conftest import htmx, user_client  # noqa: F401

# asks the input's pair, checks the program's sum against the answer file
INTERACTOR = """\
import sys
a, b = open(sys.argv[1]).read().split()
want = open(sys.argv[2]).read().strip()
print(a, b, flush=True)
got = sys.stdin.readline().strip()
sys.stdin.read()  # the rest of what the program says, to its end (it leaves first, never by EPIPE)
if got != want:
    open(sys.argv[3] + "judgemessage.txt", "w").write("expected %s, got %r" % (want, got))
    sys.exit(43)
open(sys.argv[3] + "judgemessage.txt", "w").write("sum %s is right" % got)
sys.exit(42)
"""
# answers right, then chats 3000 lines, which the interactor reads to their end: an interactor that
# left first would make the program's last writes meet EPIPE, its RE by problemtools' rules, and
# when that happens would depend on the machine's load
CHATTY = "a, b = map(int, input().split())\nprint(a + b, flush=True)\nfor i in range(3000):\n    print('chat', i)\n"


def _interactive_problem(pid: str) -> Problem:
    problem = Problem.objects.create(source="pkg", pid=pid, title=pid, statement="", time_limit_ms=2000)
    suite = make_suite(problem, AB_TESTS[:2])
    row = PackageJudge.objects.create(problem=problem, kind=PackageJudge.Kind.KATTIS_INTERACTOR, name="interact.py",
                                      language="python3", entry="interact.py", files={"interact.py": INTERACTOR},
                                      flags=[], digest=f"interact-{pid}")
    TestSuite.objects.filter(pk=suite.pk).update(checker=row)
    return problem


@pytest.mark.django_db
def test_the_drill_down_shows_an_interactive_test_s_input_log_and_verdict(user_client: Client) -> None:  # noqa: F811
    problem = _interactive_problem("drill")
    suite = problem.suites.get()
    wrong = SolutionFactory(problem=problem, name="wrong.py", role=Solution.Role.CANDIDATE, code=WRONG)
    verdict = solution_judge(solution=wrong, suite=suite)
    assert verdict.verdict == "WA"
    test = suite.tests.get(ordinal=verdict.results[0]["ordinal"])
    url = f"/problems/{problem.pk}/verdicts/{suite.pk}/{wrong.pk}/{test.ordinal}/"
    html = user_client.get(url, **htmx("cell-detail")).content.decode()
    a, b = test.input_preview.split()
    # the input, the talk in order with its directions (escaped), the verdict and the interactor's message
    assert f'<pre class="data">{test.input_preview}</pre>' in html
    assert f'<pre class="data interaction-log">&lt; {a} {b}\n&gt; {int(a) - int(b)}\n</pre>' in html
    assert '<span class="vtag v-wa">WA</span>' in html
    assert f"expected {int(a) + int(b)}, got &#x27;{int(a) - int(b)}&#x27;" in html
    # an accepted interactive test shows its log and the interactor's message too
    good = SolutionFactory(problem=problem, name="good.py", role=Solution.Role.CANDIDATE, code=GOOD)
    assert solution_judge(solution=good, suite=suite).verdict == "AC"
    html = user_client.get(f"/problems/{problem.pk}/verdicts/{suite.pk}/{good.pk}/{test.ordinal}/",
                           **htmx("cell-detail")).content.decode()
    assert f'<pre class="data interaction-log">&lt; {a} {b}\n&gt; {int(a) + int(b)}\n</pre>' in html
    assert f"sum {int(a) + int(b)} is right" in html


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_the_api_returns_each_interactive_test_s_log_cut(api: Any, sandbox_worker: Any) -> None:  # noqa: F811
    _interactive_problem("talk")
    response = api.post("/api/v1/verify", {"problem": "pkg:talk", "language": "python3", "code": WRONG})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["verdict"] == "WA"
    [test] = body["tests"]
    a, b = (AB_TESTS[0].input if test["ordinal"] == 0 else AB_TESTS[1].input).split()
    assert test["interaction"] == f"< {a} {b}\n> {int(a) - int(b)}\n"
    response = api.post("/api/v1/verify", {"problem": "pkg:talk", "language": "python3", "code": CHATTY,
                                           "mode": "all"})
    body = response.json()
    assert body["verdict"] == "AC", body
    for test in body["tests"]:
        log = test["interaction"]
        assert len(log) <= INTERACTION_KEPT + 60
        lines = log.splitlines()
        assert lines[0].startswith("< ") and lines[1].startswith("> ") and lines[2] == "> chat 0"
        # the chat's 3000 lines, cut: how much was left out, of how much
        total = len(lines[1]) - 1 + sum(len(f"chat {i}\n") for i in range(3000)) + len(lines[0]) - 1
        shown = sum(len(line) - 1 for line in lines[:-1])
        assert lines[-1] == f"[... {total - shown} more bytes of {total} not shown]", lines[-3:]
