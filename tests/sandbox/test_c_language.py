"""C is its own language: compiled with gcc (never g++, never C++'s precompiled header), cached
apart from a C++ program of the same text, run like a C++ binary on both backends, and judged
through judge_code and /api/v1/verify."""

from __future__ import annotations

from typing import Any

import pytest

from problems.judging import judge_code
from problems.models import Problem
from sandbox import Limits, Sandbox, Verdict, languages
from tests.api.conftest import api, make_suite, sandbox_worker, user  # noqa: F401
from tests.factories import ProblemFactory

AB = '#include <stdio.h>\nint main(void){long long a,b;scanf("%lld %lld",&a,&b);printf("%lld\\n",a+b);return 0;}\n'
AB_WRONG = AB.replace("a+b", "a-b")
# valid C, invalid C++: malloc's void * without a cast, a variable named `class`, a
# designated initializer out of order, math.h's sqrt linked with -lm
ONLY_C = """#include <stdio.h>
#include <stdlib.h>
#include <math.h>
struct pair { long long a, b; };
int main(void) {
    long long *sum = malloc(sizeof *sum);
    int class = (int)sqrt(0.0);
    struct pair p = { .b = 0, .a = 0 };
    if (scanf("%lld %lld", &p.a, &p.b) != 2) return 1;
    *sum = p.a + p.b + class;
    printf("%lld\\n", *sum);
    free(sum);
    return 0;
}
"""
# the same text in both languages, with a different meaning: a character constant is an int
# in C and a char in C++
SIZEOF_CHAR = '#include <stdio.h>\nint main(void){printf("%d\\n",(int)sizeof(\'a\'));return 0;}\n'
BROKEN = "int main(void) {\n    return undeclared_name;\n}\n"


def _run(sb: Sandbox, language: str, source: str, stdin: str = "") -> tuple[Verdict, bytes]:
    prog = sb.compile(language, source)
    assert prog.ok, prog.message
    [result] = sb.run(prog, [stdin], Limits())
    return result.verdict, result.stdout


def test_c_is_compiled_by_gcc_as_gnu17_without_the_cpp_header() -> None:
    step = languages.compile_step("c", AB)
    assert step.argv[0] == languages.GCC == "/usr/bin/gcc" and step.tool == languages.GCC
    assert step.source_name == "main.c" and step.argv[-2:] == [f"{languages.BUILD_DIR}/main.c", "-lm"]
    assert "-std=gnu17" in step.argv and "-O2" in step.argv and "-DONLINE_JUDGE" in step.argv
    # C++'s precompiled header is neither built for nor offered to a C compile
    assert step.needs_pch is False and languages.PCH_DIR not in step.argv
    assert languages.run_argv("c") == languages.run_argv("cpp") == [f"{languages.PROG_DIR}/main"]
    assert "c" in languages.LANGUAGES


def test_c_only_code_compiles_as_c_and_is_not_cpp(sb: Sandbox) -> None:
    assert _run(sb, "c", ONLY_C, "20 22\n") == (Verdict.OK, b"42\n")
    # the control: g++ refuses the same text, so a C judge that used g++ would have said CE
    as_cpp = sb.compile("cpp", ONLY_C)
    assert as_cpp.verdict == Verdict.CE and "invalid conversion from" in as_cpp.message


def test_the_same_text_is_two_programs_in_c_and_cpp(sb: Sandbox) -> None:
    # compiled one after the other, whichever is cached first: a key without the language
    # would hand the second the first's binary
    assert _run(sb, "c", SIZEOF_CHAR) == (Verdict.OK, b"4\n")
    assert _run(sb, "cpp", SIZEOF_CHAR) == (Verdict.OK, b"1\n")
    assert _run(sb, "c", SIZEOF_CHAR) == (Verdict.OK, b"4\n")
    c, cpp = sb.compile("c", SIZEOF_CHAR), sb.compile("cpp", SIZEOF_CHAR)
    assert c.cached and cpp.cached and c.path != cpp.path


def test_a_c_compile_error_is_ce_with_gcc_s_message(sb: Sandbox) -> None:
    prog = sb.compile("c", BROKEN)
    assert prog.verdict == Verdict.CE
    assert "main.c:2:12: error: 'undeclared_name' undeclared" in prog.message.replace("\u2018", "'").replace(
        "\u2019", "'"), prog.message


def test_c_runs_under_the_same_limits_as_cpp(sb: Sandbox) -> None:
    spin = sb.compile("c", "int main(void){volatile unsigned long x=0;for(;;)x++;}\n")
    [tle] = sb.run(spin, [""], Limits(time_s=0.3))
    assert tle.verdict == Verdict.TLE
    hog = sb.compile("c", "#include <stdlib.h>\n#include <string.h>\nint main(void){for(;;){char *p=malloc(1<<20);"
                          "if(!p)return 3;memset(p,1,1<<20);}}\n")
    [mle] = sb.run(hog, [""], Limits(memory_mb=64))
    assert mle.verdict == Verdict.MLE, mle
    crash = sb.compile("c", "int main(void){return 42;}\n")
    [re] = sb.run(crash, [""], Limits())
    assert (re.verdict, re.exit_code) == (Verdict.RE, 42)


@pytest.mark.docker
def test_c_gets_the_same_verdicts_on_docker(sb: Sandbox, docker_sb: Sandbox) -> None:
    for source, stdin, expected in ((ONLY_C, "20 22\n", b"42\n"), (SIZEOF_CHAR, "", b"4\n"), (AB, "1 2\n", b"3\n")):
        prog = docker_sb.compile("c", source + "/* docker */\n")
        assert prog.ok, prog.message
        [native] = sb.run(prog, [stdin], Limits())
        [contained] = docker_sb.run(prog, [stdin], Limits())
        assert (native.verdict, native.stdout) == (contained.verdict, contained.stdout) == (Verdict.OK, expected)
    broken = docker_sb.compile("c", BROKEN + "/* docker */\n")
    assert broken.verdict == Verdict.CE and "undeclared_name" in broken.message


def _ab_problem(pid: str) -> Problem:
    problem: Problem = ProblemFactory(source="test", pid=pid, title="A+B", time_limit_ms=1000)
    make_suite(problem)
    return problem


@pytest.mark.django_db
def test_judge_code_judges_c(sb: Sandbox) -> None:
    problem = _ab_problem("ab/c-judge")
    suite = problem.suites.get()
    verdicts = {name: judge_code(problem=problem, suite=suite, language="c", code=code, mode="all", sandbox=sb)
                for name, code in (("right", AB), ("wrong", AB_WRONG), ("only_c", ONLY_C), ("broken", BROKEN))}
    assert (verdicts["right"].verdict, verdicts["right"].passed, verdicts["right"].total) == ("AC", 4, 4)
    assert (verdicts["only_c"].verdict, verdicts["only_c"].passed) == ("AC", 4)
    # a - b is right on 0 0 only
    assert (verdicts["wrong"].verdict, verdicts["wrong"].passed) == ("WA", 1)
    assert verdicts["broken"].verdict == "CE" and "undeclared_name" in verdicts["broken"].message


@pytest.mark.django_db(transaction=True)
def test_the_api_judges_c(api: Any, sandbox_worker: Any) -> None:  # noqa: F811
    _ab_problem("ab/c-api")
    got = {}
    for name, code in (("right", AB), ("wrong", AB_WRONG), ("only_c", ONLY_C), ("broken", BROKEN)):
        response = api.post("/api/v1/verify", {"problem": "test:ab/c-api", "language": "c", "code": code,
                                               "mode": "all"})
        assert response.status_code == 200, (name, response.content)
        got[name] = response.json()
    assert (got["right"]["verdict"], got["right"]["reward"], got["right"]["passed"]) == ("AC", 1, 4)
    assert (got["only_c"]["verdict"], got["only_c"]["passed"]) == ("AC", 4)
    assert (got["wrong"]["verdict"], got["wrong"]["reward"], got["wrong"]["passed"]) == ("WA", 0, 1)
    assert got["broken"]["verdict"] == "CE" and "undeclared_name" in got["broken"]["message"], got["broken"]
    # C++ is still C++: the C-only program is CE there
    response = api.post("/api/v1/verify", {"problem": "test:ab/c-api", "language": "cpp", "code": ONLY_C})
    assert response.json()["verdict"] == "CE"


@pytest.mark.django_db(transaction=True)
def test_sandboxfusion_runs_and_submits_c(api: Any, sandbox_worker: Any) -> None:  # noqa: F811
    _ab_problem("ab/c-sf")
    response = api.post("/sandboxfusion/run_code", {"code": ONLY_C, "language": "c", "stdin": "20 22\n"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["run_result"]["stdout"]) == ("Success", "42\n"), body
    assert body["compile_result"]["status"] == "Finished"
    same = api.post("/sandboxfusion/run_code", {"code": SIZEOF_CHAR, "language": "c"}).json()
    assert same["run_result"]["stdout"] == "4\n", same
    completion = f"My answer:\n\n```c\n{ONLY_C}```\n"
    response = api.post("/sandboxfusion/submit", {"dataset": "x", "id": "test:ab/c-sf", "completion": completion,
                                                  "config": {"extra": {"mode": "all"}}})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["accepted"], body["extra"]["language"], body["extra"]["passed"]) == (True, "c", 4), body
    # a language SandboxFusion has and we do not is still refused
    refused = api.post("/sandboxfusion/run_code", {"code": "print(1)", "language": "nodejs"})
    assert refused.status_code == 400


def test_the_client_reads_c_fences_as_c() -> None:
    from hardtests_client.extract import extract_code, guess_language, language_name

    assert language_name("c") == language_name("C") == "c" and language_name("c++") == "cpp"
    found = extract_code(f"```c\n{ONLY_C}```\n")
    assert (found.language, found.code) == ("c", ONLY_C)
    assert guess_language(f"c\n{ONLY_C}", "python3") == "c"


def test_dataset_labels_name_c() -> None:
    from problems.importers.languages import language_from_label

    assert [language_from_label(label) for label in ("C", "GNU C11", "c11", "GNU C++17")] == ["c", "c", "c", "cpp"]


def test_a_missing_compiler_is_a_sandbox_error_never_the_program_s_ce(sb: Sandbox,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    source = AB + "/* no gcc here */\n"
    monkeypatch.setattr(languages, "GCC", "/nonexistent/gcc")
    prog = sb.compile("c", source)
    assert prog.verdict == Verdict.SE and "/nonexistent/gcc is not installed" in prog.message, prog
    # nothing was cached for the program: with gcc back it compiles
    monkeypatch.undo()
    assert _run(sb, "c", source, "1 2\n") == (Verdict.OK, b"3\n")
