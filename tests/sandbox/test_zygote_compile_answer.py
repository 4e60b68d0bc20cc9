"""Python's syntax check answered by the batch's own zygote (Batch.program_compiled).

The zygote compiles the program exactly as `python3 -I main.py` does before it runs anything,
and so does the syntax check (languages.compile_step).  A zygote batch says what its compile
gave before its first test: "compiled" stands for the check's OK (the judge then starts no
sandbox of the check's own, the most of a new 1-test program's cost); "raised" and "unknown"
leave the answer to the check.  Asserted here: the answer equals the check's on every program
text trap, on the compiler's depth boundary and on a spare's zygote; a batch with no zygote, or
whose zygote could not start with the program (exec'd tests), says nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sandbox import Limits, RunResult, Sandbox, Verdict, cache
from sandbox.types import CompiledProgram

from .test_program_text_traps import (
    LIMITS,
    PARITY,
    _longest_chain_python_compiles,
    binop_chain,
    zygote,  # noqa: F401 - the fixture (switch(on)), got by name below
)
from .test_spares import spares  # noqa: F401 - the fixture, for a batch that takes a spare


def switched(request: pytest.FixtureRequest, on: bool) -> None:
    request.getfixturevalue("zygote")(on)


def answered(sb: Sandbox, source: str, limits: Limits = LIMITS) -> tuple[bool | None, RunResult]:
    """What the batch's zygote said of compiling `source` (asked before any test, as the judge
    asks), and the batch's one test."""
    where = cache.make_private_dir()
    said: list[bool | None] = []
    try:
        (where / "main.py").write_text(source, encoding="utf-8")
        program = CompiledProgram("python3", Verdict.OK, path=str(where))
        [result] = sb.run(program, [b"1 2\n"], limits, on_batch=lambda batch: said.append(batch.program_compiled()))
    finally:
        shutil.rmtree(where, ignore_errors=True)
    assert len(said) == 1, said
    return said[0], result


@pytest.mark.parametrize("name", sorted(PARITY))
def test_the_zygote_answers_as_the_syntax_check_does(sb: Sandbox, request: pytest.FixtureRequest,
                                                     name: str) -> None:
    source = PARITY[name]
    check = sb.compile("python3", source)
    assert check.verdict in (Verdict.OK, Verdict.CE), check
    switched(request, True)
    said, result = answered(sb, source)
    # compiled where the check passes it; raised (the check then says what) where it refuses it
    assert said is check.ok, (name, check.message)
    if not check.ok:
        assert result.verdict == Verdict.RE and "Error" in result.stderr, result


def test_the_zygote_answers_at_the_compiler_s_depth_boundary(sb: Sandbox, request: pytest.FixtureRequest,
                                                            tmp_path: Path) -> None:
    longest = _longest_chain_python_compiles(tmp_path)
    switched(request, True)
    assert answered(sb, binop_chain(longest))[0] is True
    assert sb.compile("python3", binop_chain(longest)).ok
    assert answered(sb, binop_chain(longest + 1))[0] is False
    assert sb.compile("python3", binop_chain(longest + 1)).verdict == Verdict.CE


def test_a_spare_s_zygote_answers_for_the_program_it_was_given(sb: Sandbox, request: pytest.FixtureRequest) -> None:
    taken: dict[str, int] = request.getfixturevalue("spares")
    switched(request, True)
    answered(sb, "print(1)\n")  # the first batch of its kind starts its own sandbox
    sb.settle_warm()
    for source, expected in (("print(sum(map(int, input().split())))\n", True), ("print(1\n", False)):
        said, result = answered(sb, source)
        sb.settle_warm()
        assert said is expected, source
    assert taken["taken"] == 2, taken
    assert result.verdict == Verdict.RE


def test_the_first_test_is_asked_for_before_the_compile_s_answer_is_awaited(
        sb: Sandbox, request: pytest.FixtureRequest) -> None:
    """The judge hears of a batch (and waits there for the zygote's compile answer) once its
    first test is with the runner, which starts it as soon as the zygote is ready: no round
    trip between the answer and the first test."""
    switched(request, True)
    where = cache.make_private_dir()
    heard: list[tuple[int, bool | None]] = []
    try:
        (where / "main.py").write_text("print(sum(map(int, input().split())))\n", encoding="utf-8")
        program = CompiledProgram("python3", Verdict.OK, path=str(where))
        results = sb.run(program, [b"1 2\n", b"3 4\n"], LIMITS,
                         on_batch=lambda batch: heard.append((batch.unanswered, batch.program_compiled())))
    finally:
        shutil.rmtree(where, ignore_errors=True)
    assert heard == [(2, True)], heard  # both tests asked for (queue_depth 2), then the answer
    assert [r.stdout for r in results] == [b"3\n", b"7\n"], results


def test_no_zygote_no_answer(sb: Sandbox, request: pytest.FixtureRequest) -> None:
    switched(request, False)
    said, result = answered(sb, "print(sum(map(int, input().split())))\n")
    assert (said, result.verdict, result.stdout) == (None, Verdict.OK, b"3\n")


@pytest.mark.parametrize("spare", [False, True], ids=["fresh", "spare"])
def test_a_zygote_that_could_not_start_with_the_program_says_nothing(sb: Sandbox, spare: bool,
                                                                      request: pytest.FixtureRequest) -> None:
    # compiling 1.5 M list items takes most of a GB: the zygote is killed before any test, the
    # batch runs its tests exec'd (MLE, as python3 -I gives), and the check (2 GB) is what
    # says whether it compiles
    taken = request.getfixturevalue("spares") if spare else None
    switched(request, True)
    if taken is not None:
        answered(sb, "print(1)\n")
        sb.settle_warm()
    said, result = answered(sb, "data = [" + "7," * 1_500_000 + "]\nprint(len(data))\n")
    assert (said, result.verdict) == (None, Verdict.MLE), result
    if taken is not None:
        assert taken["taken"] == 1, taken
