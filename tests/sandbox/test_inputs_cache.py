"""A suite's inputs are written once per process, and a spare links in only the inputs its
batch asks for (the fixed cost of a verification, issue #37).

Judging names a suite's inputs by a digest of them (LoadedSuite.inputs_key); the sandbox keeps
the directory of each named set for later batches, never removes one a batch still reads, and
writes an unnamed set for its batch alone, as before. A batch served by a spare links an input
into the spare's own directory as its test is asked for: a wrong program that fails its first
test costs one or two links, not one per test of the suite."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

import sandbox.bwrap
from sandbox import Limits, Sandbox, cache

from .test_verdicts import ADD

LIMITS = Limits(time_s=2, memory_mb=256)
INPUTS = [f"{i} {i * 7}\n" for i in range(40)]
WANTED = [f"{i * 8}\n".encode() for i in range(40)]


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many inputs each write of a directory of inputs held; the kept sets forgotten first."""
    cache._inputs.drop()
    seen: list[int] = []
    write = cache.inputs_write

    def counted(raw):  # type: ignore[no-untyped-def]
        seen.append(len(raw))
        return write(raw)

    monkeypatch.setattr(cache, "inputs_write", counted)
    yield seen
    cache._inputs.drop()


def test_named_inputs_are_written_once_and_unnamed_ones_every_time(sb: Sandbox, writes: list[int]) -> None:
    prog = sb.compile("cpp", ADD["cpp"])
    for _ in range(3):
        results = sb.run(prog, INPUTS, LIMITS, inputs_key="suite-a")
        assert [r.stdout for r in results] == WANTED
    assert writes == [40]
    kept = cache._inputs.items["suite-a"]
    assert kept.users == 0 and sorted(int(p.name) for p in kept.path.iterdir()) == list(range(40))
    for _ in range(2):
        assert [r.stdout for r in sb.run(prog, INPUTS[:3], LIMITS)] == WANTED[:3]
    assert writes == [40, 3, 3]
    assert list(cache._inputs.items) == ["suite-a"]  # an unnamed set is not kept


def test_sets_past_the_budget_are_removed_but_never_one_in_use(writes: list[int],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "INPUTS_KEPT", 1)
    first = cache.inputs_acquire("a", [b"1\n", b"2\n"])
    second = cache.inputs_acquire("b", [b"3\n"])  # over the budget, but "a" is in use
    assert first.is_dir() and second.is_dir() and list(cache._inputs.items) == ["a", "b"]
    cache.inputs_release("a")  # no longer read: removed, the least recently used
    assert not first.exists() and second.is_dir() and list(cache._inputs.items) == ["b"]
    assert (second / "0").read_bytes() == b"3\n"
    cache.inputs_release("b")
    assert second.is_dir()  # within the budget: kept for the next batch
    assert cache.inputs_acquire("b", [b"3\n"]) == second and writes == [2, 1]
    cache.inputs_release("b")
    shutil.rmtree(second)  # removed under us (a cleaned /dev/shm): written again, not an error
    again = cache.inputs_acquire("b", [b"3\n"])
    assert (again / "0").read_bytes() == b"3\n" and writes == [2, 1, 1]
    cache.inputs_release("b")


def test_a_spare_links_only_the_inputs_its_batch_asks_for(sb: Sandbox, writes: list[int],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    prog = sb.compile("cpp", ADD["cpp"])
    with sandbox.bwrap.SPARES.lock:
        sandbox.bwrap.SPARES.wanted.clear()
    sb.keep_warm(1)
    try:
        sb.run(prog, INPUTS[:1], LIMITS)  # a batch of this kind: spares for it start
        links: list[str] = []
        link = cache.link_file

        def counted(source, target):  # type: ignore[no-untyped-def]
            links.append(str(source))
            link(source, target)

        monkeypatch.setattr(cache, "link_file", counted)
        taken = []
        take = sandbox.bwrap.SPARES.take
        monkeypatch.setattr(sandbox.bwrap.SPARES, "take", lambda spec: taken.append(take(spec)) or taken[-1])
        sb.settle_warm()
        # a wrong program's judging: it stops at its first test
        results = sb.run(prog, INPUTS, LIMITS, inputs_key="suite-b", stop_when=lambda result: True)
        assert taken and taken[0] is not None, "the batch took no spare"
        assert [r.stdout for r in results] == WANTED[:1]
        inputs = [p for p in links if "/m-" not in p and "/v-" not in p]  # not the program's files
        assert 1 <= len(inputs) <= 2, inputs  # the first test, and the one asked for ahead
        links.clear()
        sb.settle_warm()
        results = sb.run(prog, INPUTS, LIMITS, inputs_key="suite-b")  # an accepted one: all 40
        assert [r.stdout for r in results] == WANTED
        assert len([p for p in links if "/m-" not in p and "/v-" not in p]) == 40
    finally:
        sb.keep_warm(0)
        sb.settle_warm()
