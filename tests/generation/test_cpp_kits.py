"""C++ kit parts on testlib (`generate_tests --kit-language cpp`) and CodeContests-O's SEARCH/REPLACE
refinement. Loopback fake LLM, real sandbox, real database; testlib.h from ../shared/fixtures/testlib
(the project never ships it: skipped with the reason when absent)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from generation.models import GenerationRun, LLMCall, RefinementRound
from generation.parsing import Edit, ReplyInvalid, apply_edits, parse_edits, parse_testlib_inputs_reply
from generation.pipeline import generation_run_execute
from generation.services import generation_run_start
from problems.blobs import blob_pairs
from problems.models import PackageJudge, Solution, TestCase
from problems.services import solution_upsert
from tests.generation.conftest import VALIDATOR, FakeLLM, make_problem

TESTLIB_H = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "testlib" / "testlib.h"

CHECKER = r'''#include "testlib.h"

int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    long long a = inf.readLong(), b = inf.readLong();
    long long expected = ans.readLong();
    ensuref(expected == a + b, "the answer file says %lld, not a+b", expected);
    long long got = ouf.readLong();
    if (got != expected) quitf(_wa, "expected %lld, found %lld", expected, got);
    if (!ouf.seekEof()) quitf(_pe, "extra output after the answer");
    quitf(_ok, "the sum is %lld", got);
}
'''
# one missing semicolon: the compiler's message goes back to the model
BROKEN_CHECKER = CHECKER.replace("long long got = ouf.readLong();", "long long got = ouf.readLong()")
# compiles, but rejects every right answer: the case and the checker's message go back
WRONG_CHECKER = CHECKER.replace("if (got != expected)", "if (got != expected + 1)")
GENERATOR = r'''#include "testlib.h"
#include <cstdio>
#include <cstdlib>

int main(int argc, char* argv[]) {
    registerGen(argc, argv, 1);
    long long hi = atoll(argv[1]);
    long long lo = 0;
    printf("%lld %lld\n", rnd.next(lo, hi), rnd.next(lo, hi));
}
'''
RIGHT = "a, b = map(int, input().split())\nprint(a + b)\n"
# wrong only when a is large: the first commands (values up to 1000) never show it
WRONG_BIG = "a, b = map(int, input().split())\nprint(a + b if a < 10**6 else a + b - 1)\n"


def validator_reply(checker: str) -> str:
    obj = {"input_validator": VALIDATOR, "needs_custom_output_judging_function": True, "checker": checker}
    return "Two integers in [0, 1e9]; a checker compares the sum.\n```json\n" + json.dumps(obj) + "\n```\n"


def inputs_reply() -> str:
    obj = {"LLMGen_input": ["1 2\n", "5 7\n"], "generator": GENERATOR, "commands": ["10 1", "1000 2", "1000 3"],
           "hacking_commands": []}
    return "Small random tests.\n```json\n" + json.dumps(obj) + "\n```\n"


def refine_reply(search: str) -> str:
    blocks = (f"generator.cpp\n```cpp\n<<<<<<< SEARCH\n{search}\n=======\n"
              "    long long lo = argc > 2 ? atoll(argv[2]) : 0;\n>>>>>>> REPLACE\n```\n")
    obj = {"commands_add": [], "hacking_commands_add": ["1000000000 999000000 1", "1000000000 999000000 2"],
           "commands_replace": None}
    return ("The wrong program fails when a is at least 10^6; let the generator take a lower bound.\n\n" + blocks
            + "```json\n" + json.dumps(obj) + "\n```\n")


@pytest.fixture
def testlib_h(settings: Any) -> Path:
    if not TESTLIB_H.is_file():
        pytest.skip(f"the testlib fixture is absent ({TESTLIB_H}): C++ kits need a real testlib.h")
    settings.HARDTESTS_TESTLIB_H = str(TESTLIB_H)
    return TESTLIB_H


def test_search_replace_blocks_apply_exactly_or_are_refused_with_the_reason() -> None:
    files = {"generator.cpp": "int main() {\n    int n = 1;\n    int m = 1;\n}\n", "checker.cpp": "x\n"}
    reply = ("generator.cpp\n<<<<<<< SEARCH\n    int n = 1;\n=======\n    int n = 2;\n>>>>>>> REPLACE\n"
             "checker.cpp\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n")
    edits = parse_edits(reply, ("generator.cpp", "checker.cpp"))
    assert [(e.target, e.number) for e in edits] == [("generator.cpp", 1), ("checker.cpp", 2)]
    assert apply_edits(files, edits) == {"generator.cpp": "int main() {\n    int n = 2;\n    int m = 1;\n}\n",
                                         "checker.cpp": "y\n"}
    # whitespace counts: a SEARCH part that is not character for character in the file is refused
    with pytest.raises(ReplyInvalid, match=r"block 1 \(generator.cpp, starting 'int n = 1;'\): its SEARCH text "
                                           r"does not occur in the file"):
        apply_edits(files, [Edit("generator.cpp", "int n = 1;\n  int m = 1;", "", 1)])
    with pytest.raises(ReplyInvalid, match="occurs 2 times; include more lines"):
        apply_edits(files, [Edit("generator.cpp", " = 1;", " = 3;", 1)])
    with pytest.raises(ReplyInvalid, match="does not name its file"):
        parse_edits("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", ("checker.cpp",))
    with pytest.raises(ReplyInvalid, match="is not closed"):
        parse_edits("checker.cpp\n<<<<<<< SEARCH\nx\n=======\ny\n", ("checker.cpp",))


def test_generator_commands_are_plain_arguments() -> None:
    def reply(commands: list[str]) -> str:
        return "```json\n" + json.dumps({"LLMGen_input": [], "generator": GENERATOR, "commands": commands,
                                          "hacking_commands": None}) + "\n```"

    assert parse_testlib_inputs_reply(reply(["10 1", "./gen 5 2"])).commands == ["10 1", "./gen 5 2"]
    with pytest.raises(ReplyInvalid, match="not plain arguments"):
        parse_testlib_inputs_reply(reply(["10 1 > test.txt"]))
    with pytest.raises(ReplyInvalid, match="registerGen"):
        parse_testlib_inputs_reply(reply(["1"]).replace("registerGen(argc, argv, 1);", ""))


@pytest.mark.django_db
def test_a_cpp_kit_without_testlib_h_is_refused_before_anything_runs(fake_llm: FakeLLM, settings: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARDTESTS_TESTLIB_H", raising=False)
    settings.HARDTESTS_TESTLIB_H = ""
    problem = make_problem()
    with pytest.raises(CommandError, match="refused before anything runs: a C\\+\\+ kit needs testlib.h and none is "
                                           "configured: .*HARDTESTS_TESTLIB_H"):
        call_command("generate_tests", problem.pid, "--sync", "--kit-language", "cpp", stdout=StringIO())
    assert not GenerationRun.objects.filter(problem=problem).exists()
    assert fake_llm.requests == []


@pytest.mark.django_db
@pytest.mark.slow
@pytest.mark.usefixtures("small_counts")
def test_generate_tests_kit_language_cpp_builds_a_suite_from_testlib_programs(
        fake_llm: FakeLLM, testlib_h: Path, settings: Any) -> None:
    settings.HARDTESTS_LLM_REPLY_RETRIES = 2
    problem = make_problem()
    for name, code, gold in (("right", RIGHT, "AC"), ("off-by-one", WRONG_BIG, "WA")):
        solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3", code=code, name=name,
                        gold_verdict=gold)
    fake_llm.reply(validator_reply(BROKEN_CHECKER), validator_reply(WRONG_CHECKER), validator_reply(CHECKER),
                   inputs_reply(),
                   refine_reply("    long long lo = 1;"), refine_reply("    long long lo = 0;"))
    out = StringIO()
    call_command("generate_tests", problem.pid, "--sync", "--kit-language", "cpp", stdout=out)
    summary = json.loads(out.getvalue().splitlines()[-1])
    run = GenerationRun.objects.get(pk=summary["run"])
    assert run.status == GenerationRun.Status.SUCCEEDED, run.error
    assert run.kit_language == "cpp"

    # call 1: the checker that does not compile went back with the compiler's message
    calls = list(LLMCall.objects.filter(run=run).order_by("id"))
    assert [c.purpose for c in calls] == ["validator", "validator_retry1", "validator_retry2", "inputs", "refine1",
                                          "refine1_retry1"]
    assert calls[0].prompt_version == "validator_testlib_v1" and calls[3].prompt_version == "inputs_testlib_v1"
    assert "the checker does not compile" in calls[0].parse_error and "checker.cpp:8:5: error:" in calls[0].parse_error
    assert "the checker does not compile" in fake_llm.requests[1]["messages"][-1]["content"]
    # the second checker compiles and rejects the sample's own answer: the case and its message went back
    assert "does not accept these cases" in calls[1].parse_error
    assert "input '1 2\\n': candidate '3\\n', reference '3\\n'" in calls[1].parse_error
    assert "expected 3, found 3" in calls[1].parse_error
    assert calls[2].parse_error == ""

    # refinement: the block that does not apply was refused with its reason and sent back
    assert calls[4].prompt_version == "refine_testlib_v1"
    assert ("block 1 (generator.cpp, starting 'long long lo = 1;'): its SEARCH text does not occur in the file"
            in calls[4].parse_error)
    assert "its SEARCH text does not occur in the file" in fake_llm.requests[5]["messages"][-1]["content"]
    assert calls[5].parse_error == ""

    rounds = list(RefinementRound.objects.filter(run=run).order_by("number"))
    assert [r.number for r in rounds] == [0, 1]
    assert rounds[0].scores["tuning"]["fp"] == 1 and rounds[0].scores["tuning"]["tnr"] == 0.0
    assert rounds[1].scores["tuning"]["tnr"] == 1.0 and rounds[1].scores["tuning"]["tpr"] == 1.0
    assert rounds[1].chosen

    run.refresh_from_db()
    kit = run.kit
    assert kit is not None and kit.extra["stage"] == "refinement" and kit.extra["search_replace_blocks"] == 1
    assert kit.extra["languages"] == {"input_validator": "python3", "generator": "cpp", "checker": "cpp"}
    assert "long long lo = argc > 2 ? atoll(argv[2]) : 0;" in kit.extra["testlib"]["generator"]
    assert kit.extra["testlib"]["hacking_commands"] == ["1000000000 999000000 1", "1000000000 999000000 2"]
    assert kit.output_judge is None and kit.regular_generator == "" and kit.hacking_generator == ""

    suite = run.suite
    assert suite is not None and suite.status == "active" and suite.checker is not None
    assert suite.checker.kind == PackageJudge.Kind.TESTLIB_CHECKER and suite.checker.files == {"checker.cpp": CHECKER}
    tests = list(suite.tests.order_by("ordinal"))
    by_kind = {kind: [t for t in tests if t.kind == kind] for kind in {t.kind for t in tests}}
    # 2 direct inputs, 3 commands (two give the same test only by chance: none here), 2 hacking commands
    assert len(by_kind[TestCase.Kind.DIRECT]) == 2
    assert len(by_kind[TestCase.Kind.REGULAR]) == 3
    assert len(by_kind[TestCase.Kind.HACKING]) == 2
    hacking = [(t.input_sha256, t.output_sha256) for t in by_kind[TestCase.Kind.HACKING]]
    for given, expected in blob_pairs(hacking):
        a, b = map(int, given.split())
        assert a >= 999_000_000 and expected == f"{a + b}\n".encode()
    assert all(t.generator.startswith("generator ") for t in tests if t.kind != TestCase.Kind.DIRECT)

    # the C++ kit materialises again with no LLM call, to the same tests judged by the same checker
    requests = len(fake_llm.requests)
    out = StringIO()
    call_command("generate_tests", problem.pid, "--sync", "--from-kit", stdout=out)
    again = json.loads(out.getvalue().splitlines()[-1])
    assert again["status"] == "succeeded" and again["unchanged"] is True and again["suite_version"] == suite.version
    assert len(fake_llm.requests) == requests


@pytest.mark.django_db
def test_a_queued_cpp_run_without_testlib_h_fails_with_the_reason_before_any_llm_call(
        fake_llm: FakeLLM, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARDTESTS_TESTLIB_H", raising=False)
    settings.HARDTESTS_TESTLIB_H = ""
    problem = make_problem()
    run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False,
                               kit_language="cpp")
    run = generation_run_execute(run_id=run.pk)
    assert run.status == GenerationRun.Status.FAILED
    assert run.failure_reason == "input_generation_failed"
    assert run.error.startswith("refused before anything runs: a C++ kit needs testlib.h and none is configured")
    assert fake_llm.requests == []


@pytest.mark.django_db
@pytest.mark.parametrize(("extra", "why"), [
    (["--from-kit"], "is for from-scratch runs"),
    (["--profile", "minimal"], "--profile minimal writes Python generators"),
    (["--campaign", "c1"], "not campaigns"),
])
def test_kit_language_cpp_refuses_what_it_cannot_do(fake_llm: FakeLLM, testlib_h: Path, extra: list[str],
                                                    why: str) -> None:
    problem = make_problem()
    with pytest.raises(CommandError, match=why):
        call_command("generate_tests", problem.pid, "--sync", "--kit-language", "cpp", *extra, stdout=StringIO())
    assert not GenerationRun.objects.filter(problem=problem).exists() and fake_llm.requests == []
